package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestConcurrentSessions runs 100 sessions at once through the gateway
// (each its own MCP client and server): they load skills, write, edit,
// read and grep their workspaces at the same time. No session may see
// another's skills or files. Run under -race.
func TestConcurrentSessions(t *testing.T) {
	forEachStorage(t, func(t *testing.T, sg storage) {
		e := newEnv(t, sg)
		const n = 100
		clients := make([]*client, n)
		for i := range clients {
			tier := skill.T3
			if i%2 == 1 {
				tier = skill.T1
			}
			clients[i] = e.connect(t, principal(fmt.Sprintf("agent-%03d", i), tier), fmt.Sprintf("conc-%03d", i))
		}
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := sessionWork(c.cs, i); err != nil {
					t.Errorf("session %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if got := len(e.mgr.Attached()); got != n {
			t.Errorf("attached sessions = %d, want %d", got, n)
		}
	})
}

// sessionWork is what session i does; it returns the first difference from
// what only session i should see.
func sessionWork(cs *mcp.ClientSession, i int) error {
	ctx := context.Background()
	call := func(tool string, args map[string]any) (string, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return "", fmt.Errorf("%s: %w", tool, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			return b.String(), fmt.Errorf("%s %v: %s", tool, args, b.String())
		}
		return b.String(), nil
	}
	mine, mount, other := "escrituras/compraventa", "/skills/compraventa/", "/skills/hipoteca/"
	if i%2 == 1 {
		mine, mount, other = "escrituras/hipoteca", other, mount
	}
	mark := fmt.Sprintf("secret of session %03d", i)
	steps := []struct {
		tool string
		args map[string]any
		want string // exact, or "" to only require success
	}{
		{"load_skill", map[string]any{"skill": mine}, ""},
		{"ls", map[string]any{"path": "/skills"}, "['" + mount + "']"},
		{"write_file", map[string]any{"file_path": "/workspace/notes.md", "content": mark + "\nTODO\n"}, "Updated file /workspace/notes.md"},
		{"edit_file", map[string]any{"file_path": "/workspace/notes.md", "old_string": "TODO", "new_string": "DONE"}, "Successfully replaced 1 instance(s) of the string in '/workspace/notes.md'"},
		{"read_file", map[string]any{"file_path": "/workspace/notes.md"}, "     1\t" + mark + "\n     2\tDONE"},
		{"ls", map[string]any{"path": "/workspace"}, "['/workspace/notes.md']"},
		{"grep", map[string]any{"pattern": "secret of session", "path": "/", "output_mode": "content"}, "/workspace/notes.md:\n  1: " + mark},
		{"read_file", map[string]any{"file_path": mount + "SKILL.md"}, ""},
	}
	for _, s := range steps {
		got, err := call(s.tool, s.args)
		if err != nil {
			return err
		}
		if s.want != "" && got != s.want {
			return fmt.Errorf("%s %v = %q, want %q", s.tool, s.args, got, s.want)
		}
	}
	// The other skill is not visible, whatever this session's tier.
	got, err := call("read_file", map[string]any{"file_path": other + "SKILL.md"})
	if want := "Error: File '" + other + "SKILL.md' not found"; err == nil || got != want {
		return fmt.Errorf("read %sSKILL.md = %q, want %q", other, got, want)
	}
	return nil
}
