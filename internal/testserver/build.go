package testserver

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// Build compiles the test server's command (cmd/testserver) from the
// repository at repo into dir/testserver and returns that path, for tests
// that install it as a skill's MCP server.
func Build(repo, dir string) (string, error) {
	bin := filepath.Join(dir, "testserver")
	cmd := exec.Command("go", "build", "-o", bin, "./internal/testserver/cmd/testserver")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build testserver: %w\n%s", err, out)
	}
	return bin, nil
}
