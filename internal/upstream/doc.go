// Package upstream groups the MCP servers skills use: connecting to them,
// introspecting their tools and pinning them (mcpclient), confining them
// (sandbox), fetching and verifying their packages (launch), and the
// credentials they are started with (credential), and the OAuth client
// side of remote servers (oauth).
//
// The part imports platform, model, storage and registry: it must not
// import decisions, the agent interface, admission or the gateway.
package upstream
