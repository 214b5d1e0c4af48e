package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// BenchmarkReadFileInMemory is the read_file round trip through the
// gateway without a process boundary (in-memory transports): what the MCP
// layer adds to vfs.Read. bench/mcpbench measures the same over stdio.
func BenchmarkReadFileInMemory(b *testing.B) {
	e := newEnv(b, storages[0])
	c := e.connect(b, principal("bench", skill.T3), "")
	var big strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&big, "%05d La parte vendedora transmite la finca libre.\n", i)
	}
	c.call(b, "load_skill", map[string]any{"skill": "escrituras/compraventa"})
	c.call(b, "write_file", map[string]any{"file_path": "/workspace/big.md", "content": big.String()})
	for _, bc := range []struct{ name, path string }{
		{"SKILL.md", "/skills/compraventa/SKILL.md"},
		{"100KB", "/workspace/big.md"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			params := &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"file_path": bc.path}}
			for b.Loop() {
				res, err := c.cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
