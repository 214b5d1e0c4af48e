package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
)

// TestConcurrentStartsOnFreshDataDir starts eight processes at once on an
// empty data directory (no registry yet; `mcp` refuses a directory that does
// not exist), four `scan` and four `mcp` (whose standard input is closed, so
// each opens the store and ends): every one must succeed, the schema being
// created exactly once while the others wait for it.
func TestConcurrentStartsOnFreshDataDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "skills")
	mcpservertest.CopyTree(t, examples, root)
	for round := range 3 {
		data := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(data, 0o700); err != nil {
			t.Fatal(err)
		}
		withStore(t, data)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range 8 {
			args := []string{"--data", data, "scan", "--root", root}
			if i%2 == 1 {
				args = []string{"--data", data, "mcp", "--agent", fmt.Sprintf("a%d", i), "--tier", "T3"}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(bin, args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					errs[i] = fmt.Errorf("skillgate %v: %v: %s", args[2:], err, stderr.String())
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
	}
}
