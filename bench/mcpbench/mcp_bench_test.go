// Package mcpbench measures the MCP round trip of read_file against the
// built skillgate binary over stdio, as an agent's client sees it:
// JSON-RPC encoding, the pipe, the SDK's schema validation, the session's
// filesystem, and back. Run it with bench/mcp.sh, or:
//
//	go test -run '^$' -bench ReadFileStdio -benchtime 2000x ./bench/mcpbench/
//
// Each sub-benchmark reports p50 and p99 latencies (µs) besides ns/op.
package mcpbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/bench/internal/benchbin"
)

var bin string

func TestMain(m *testing.M) {
	os.Exit(benchbin.Main(m, filepath.Join("..", ".."), &bin))
}

// hundredKB is about 100 KB of text in 2,000 lines (the default read
// limit, so the whole file is formatted and sent).
func hundredKB() string {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "%05d La parte vendedora transmite la finca libre.\n", i)
	}
	return b.String()
}

// connect scans the example skills into a fresh data directory, starts
// `skillgate mcp` and loads escrituras/compraventa.
func connect(b *testing.B) *mcp.ClientSession {
	b.Helper()
	data := b.TempDir()
	root := filepath.Join("..", "..", "examples", "skills")
	if out, err := exec.Command(bin, "--data", data, "scan", "--root", root).CombinedOutput(); err != nil {
		b.Fatalf("scan: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--data", data, "mcp", "--agent", "bench", "--tier", "T3", "--tenant", "bench")
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpbench", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	for _, c := range []mcp.CallToolParams{
		{Name: "load_skill", Arguments: map[string]any{"skill": "escrituras/compraventa"}},
		{Name: "write_file", Arguments: map[string]any{"file_path": "/workspace/big.md", "content": hundredKB()}},
	} {
		res, err := cs.CallTool(ctx, &c)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", c.Name, err, res)
		}
	}
	return cs
}

func BenchmarkReadFileStdio(b *testing.B) {
	cs := connect(b)
	for _, bc := range []struct{ name, path string }{
		{"SKILL.md", "/skills/compraventa/SKILL.md"},
		{"100KB", "/workspace/big.md"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"file_path": bc.path}}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				res, err := cs.CallTool(ctx, params)
				lat = append(lat, time.Since(start))
				if err != nil || res.IsError {
					b.Fatalf("read_file: %v %+v", err, res)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			q := func(p float64) float64 {
				i := int(p * float64(len(lat)-1))
				return float64(lat[i].Nanoseconds()) / 1e3
			}
			b.ReportMetric(q(0.50), "p50-µs")
			b.ReportMetric(q(0.99), "p99-µs")
		})
	}
}
