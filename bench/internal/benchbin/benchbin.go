// Package benchbin builds the skillgate binary for the benchmarks that drive
// it as a subprocess, as an agent's MCP client would.
package benchbin

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main is a TestMain body: when benchmarks were asked for, it builds
// ./cmd/skillgate (repo is the repository root relative to the test's
// directory) into a temporary directory, stores the binary's path in bin,
// runs the tests and removes the directory. It returns the exit code.
// SKILLGATE_BIN names a binary to use instead (to compare two builds).
func Main(m *testing.M, repo string, bin *string) int {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		return m.Run() // no benchmark asked for: nothing to build
	}
	if p := os.Getenv("SKILLGATE_BIN"); p != "" {
		*bin = p
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "skillgate-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin = filepath.Join(dir, "skillgate")
	build := exec.Command("go", "build", "-o", *bin, "./cmd/skillgate")
	build.Dir = repo
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "go build ./cmd/skillgate:", err)
		return 1
	}
	return m.Run()
}
