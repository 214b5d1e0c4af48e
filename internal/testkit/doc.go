// Package testkit groups what tests share and nothing else uses: a test MCP
// server (testserver), loopback npm and PyPI registries (testregistry), an
// OAuth 2.1 authorization server (oauthserver) and a remote MCP server that
// requires its tokens (remotemcp).
//
// The part may import any part, and it must not be imported by anything but
// tests, benchmarks and other test support.
package testkit
