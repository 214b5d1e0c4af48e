package testserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build compiles the test server's command (cmd/testserver) from the
// repository at repo into dir/testserver and returns that path, for tests
// that install it as a skill's MCP server.
func Build(repo, dir string) (string, error) {
	bin := filepath.Join(dir, "testserver")
	cmd := exec.Command("go", "build", "-o", bin, "./internal/testkit/testserver/cmd/testserver")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build testserver: %w\n%s", err, out)
	}
	return bin, nil
}

// RunTests is a test package's TestMain body for tests that need the test
// server: it builds it (Build, from the repository at repo) into a
// temporary directory, sets *bin to its path, runs m, removes the
// directory and returns the exit code. pkg names the package in errors.
func RunTests(m *testing.M, repo, pkg string, bin *string) int {
	dir, err := os.MkdirTemp("", "skillgate-"+pkg+"-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *bin, err = Build(repo, dir); err != nil {
		fmt.Fprintln(os.Stderr, pkg+" tests:", err)
		return 1
	}
	return m.Run()
}
