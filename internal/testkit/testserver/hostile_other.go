//go:build !linux

package testserver

import (
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addHostileTools registers no tools: ModeHostile probes a Linux sandbox.
func addHostileTools(*mcp.Server) {}

// modeForker is the child of ModeHostile's fork tool (Linux only).
const modeForker = "forker"

func forker() int {
	fmt.Fprintln(os.Stderr, "testserver: forker is Linux only")
	return 2
}
