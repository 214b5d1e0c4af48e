// Package gateway groups the capability gateway: capabilities offered to
// agents as MCP tools, each call scoped, validated, decided, forwarded to
// its backend and audited, and the capability runtime that opens, watches
// and refreshes them (broker).
//
// The part imports every part below it (platform to admission): it must
// not import the edges or the application.
package gateway
