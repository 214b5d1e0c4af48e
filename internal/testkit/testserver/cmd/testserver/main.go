// Command testserver runs skillgate's own test MCP server (package
// testserver) as a standalone stdio program, for tests outside package
// mcpclient that declare it in a skill's mcp.json. The mode comes from the
// SKILLGATE_TESTSERVER environment variable, else the first argument, else
// "normal".
package main

import (
	"os"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
)

func main() {
	if os.Getenv(testserver.EnvMode) == "" {
		mode := testserver.ModeNormal
		if len(os.Args) > 1 {
			mode = os.Args[1]
		}
		os.Setenv(testserver.EnvMode, mode)
	}
	os.Exit(testserver.Main())
}
