package testserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EnvNPMDir names the directory where scripts/setup-npm.sh installed the
// real npm MCP servers the tests run.
const EnvNPMDir = "SKILLGATE_TEST_NPM_DIR"

// NPMServer returns node and the entry point of the npm MCP server
// @modelcontextprotocol/PKG installed under $SKILLGATE_TEST_NPM_DIR. It
// skips tb when the servers or node are not installed, and fails it when
// the directory lacks pkg.
func NPMServer(tb testing.TB, pkg string) (node, entry string) {
	tb.Helper()
	dir := os.Getenv(EnvNPMDir)
	if dir == "" {
		tb.Skip(EnvNPMDir + " is unset; run: eval \"$(scripts/setup-npm.sh)\"")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Skip("node is not installed")
	}
	entry = filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		tb.Fatalf("%s: %v (re-run scripts/setup-npm.sh)", pkg, err)
	}
	return node, entry
}
