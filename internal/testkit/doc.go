// Package testkit groups what tests share and nothing else uses: a test MCP
// server (testserver) and loopback npm and PyPI registries (testregistry).
//
// The part may import any part, and it must not be imported by anything but
// tests, benchmarks and other test support.
package testkit
