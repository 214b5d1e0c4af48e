// Package upstream groups the MCP servers skills use: connecting to them,
// introspecting their tools and pinning them (mcpclient), confining them
// (sandbox), fetching and verifying their packages (launch), and the
// credentials and connections they are started with (credential), the
// OAuth client side of remote servers (oauth), and the lifecycle of
// connections: refresh before expiry, expiry, revocation (connection).
//
// The part imports platform, model, storage and registry: it must not
// import decisions, the agent interface, admission or the gateway.
package upstream
