package launch_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/testregistry"
	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// TestFetchSizeBound: a package whose tree is larger than the fetcher's
// bound is refused, while npm writes it or once it is written, and
// nothing is left.
func TestFetchSizeBound(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	t.Parallel()
	reg := testregistry.NewNPM(t)
	reg.Add(testregistry.NPMPackage{Name: "big-mcp", Version: "1.0.0", Bin: map[string]string{"big-mcp": "index.js"},
		Files: map[string]string{"index.js": testregistry.MCPServerJS("big-mcp"), "data.txt": strings.Repeat("x", 4<<20)}})
	f := launch.NewFetcher(launch.Options{NPM: launch.NPMOptions{Registry: reg.URL()}, MaxBytes: 1 << 20})
	l, _, err := launch.Parse("npx", []string{"-y", "big-mcp@1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "big")
	_, err = f.Fetch(context.Background(), "big", l, dir, nil)
	if !errors.Is(err, launch.ErrFetch) || !(strings.Contains(err.Error(), "holds more than 1048576 bytes") || strings.Contains(err.Error(), "the fetched tree grew past its bounds")) {
		t.Fatalf("err = %v", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
