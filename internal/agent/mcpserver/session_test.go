package mcpserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestTierVisibility: a principal sees and loads only the skills whose
// invokable_by includes its tier; anything else fails exactly like a name
// that does not exist.
func TestTierVisibility(t *testing.T) {
	e := newEnv(t, storages[0])
	tests := []struct {
		tier    skill.AgentTier
		visible []string
	}{
		{skill.T0, []string{"arrendamiento", "compraventa", "hipoteca", "pdf-forms"}},
		{skill.T1, []string{"arrendamiento", "compraventa", "hipoteca", "pdf-forms"}},
		{skill.T3, []string{"arrendamiento", "compraventa", "pdf-forms"}},
		{skill.T4, []string{"arrendamiento"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.tier), func(t *testing.T) {
			c := e.connect(t, principal("agent-"+string(tc.tier), tc.tier), "")
			var out struct {
				Skills []struct {
					Name        string   `json:"name"`
					InvokableBy []string `json:"invokable_by"`
					Source      string   `json:"source"`
				} `json:"skills"`
			}
			c.structured(t, "skill_list", map[string]any{}, &out)
			var names []string
			for _, s := range out.Skills {
				names = append(names, s.Name)
				if s.Source != "project" {
					t.Errorf("%s: source %q, want the scope (never a host path)", s.Name, s.Source)
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.visible, ",") {
				t.Errorf("skill_list = %v, want %v", names, tc.visible)
			}
			for _, name := range []string{"escrituras/hipoteca", "hipoteca", "escrituras/compraventa", "contratos/arrendamiento", "nope/nothing"} {
				got, isErr := c.call(t, "load_skill", map[string]any{"skill": name})
				bare := name[strings.LastIndex(name, "/")+1:]
				if contains(tc.visible, bare) {
					if isErr || !strings.HasPrefix(got, "Loaded ") {
						t.Errorf("load %s = %q", name, got)
					}
					continue
				}
				want := "Error: Skill '" + name + "' not found. Call skill_list to see the skills you can load."
				if !isErr || got != want {
					t.Errorf("load %s = %q (isError %v), want %q", name, got, isErr, want)
				}
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestSameLeafName: two loaded skills named compraventa in different
// categories get /skills/compraventa and /skills/contratos--compraventa;
// each path serves its own files; a bare name is ambiguous.
func TestSameLeafName(t *testing.T) {
	forEachStorage(t, func(t *testing.T, sg storage) {
		e := newEnv(t, sg)
		other := filepath.Join(e.root, "contratos", "compraventa")
		writeFile(t, filepath.Join(other, "SKILL.md"), "---\nname: compraventa\ndescription: Private sale contracts.\n---\n# Contrato privado\n")
		e.scan(t)
		c := e.connect(t, principal("drafter", skill.T3), "")
		steps := []struct {
			tool  string
			args  map[string]any
			want  string
			isErr bool
		}{
			{"load_skill", map[string]any{"skill": "compraventa"}, "Error: skill name is ambiguous: \"compraventa\" is contratos/compraventa, escrituras/compraventa; name one of them with its category", true},
			{"ls", map[string]any{"path": "/"}, "['/ticket/', '/workspace/']", false},
		}
		for _, s := range steps {
			if got, isErr := c.call(t, s.tool, s.args); got != s.want || isErr != s.isErr {
				t.Errorf("%s %v = %q %v, want %q %v", s.tool, s.args, got, isErr, s.want, s.isErr)
			}
		}
		var a, b struct{ Mount string }
		c.structured(t, "load_skill", map[string]any{"skill": "escrituras/compraventa"}, &a)
		c.structured(t, "load_skill", map[string]any{"skill": "contratos/compraventa"}, &b)
		if a.Mount != "/skills/compraventa" || b.Mount != "/skills/contratos--compraventa" {
			t.Fatalf("mounts %q %q", a.Mount, b.Mount)
		}
		// Loading again returns the same mount.
		var again struct{ Mount string }
		c.structured(t, "load_skill", map[string]any{"skill": "contratos/compraventa"}, &again)
		if again.Mount != b.Mount {
			t.Errorf("reload mount %q, want %q", again.Mount, b.Mount)
		}
		checks := []struct{ tool, path, want string }{
			{"ls", "/skills", "['/skills/compraventa/', '/skills/contratos--compraventa/']"},
			{"read_file", "/skills/contratos--compraventa/SKILL.md", "     1\t---\n     2\tname: compraventa\n     3\tdescription: Private sale contracts.\n     4\t---\n     5\t# Contrato privado"},
			{"read_file", "/skills/compraventa/disclosure_clausulas.md", mcpservertest.CatN(readFile(t, filepath.Join(e.root, "escrituras", "compraventa", "disclosure_clausulas.md")))},
			{"read_file", "/skills/contratos--compraventa/disclosure_clausulas.md", "Error: File '/skills/contratos--compraventa/disclosure_clausulas.md' not found"},
		}
		for _, ch := range checks {
			key := "path"
			if ch.tool == "read_file" {
				key = "file_path"
			}
			if got, _ := c.call(t, ch.tool, map[string]any{key: ch.path}); got != ch.want {
				t.Errorf("%s %s = %q, want %q", ch.tool, ch.path, got, ch.want)
			}
		}
		// Unloading the first frees /skills/compraventa; the second keeps
		// its path.
		if got, isErr := c.call(t, "unload_skill", map[string]any{"skill": "/skills/compraventa"}); isErr || got != "Unloaded escrituras/compraventa from /skills/compraventa" {
			t.Errorf("unload = %q %v", got, isErr)
		}
		if got, _ := c.call(t, "ls", map[string]any{"path": "/skills"}); got != "['/skills/contratos--compraventa/']" {
			t.Errorf("ls /skills after unload = %q", got)
		}
		if got, isErr := c.call(t, "unload_skill", map[string]any{"skill": "escrituras/compraventa"}); !isErr || got != "Error: Skill 'escrituras/compraventa' is not loaded." {
			t.Errorf("second unload = %q %v", got, isErr)
		}
	})
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResume: reconnecting with the same session id resumes the loaded
// skills (same paths) and the workspace; another principal cannot take the
// session over.
func TestResume(t *testing.T) {
	forEachStorage(t, func(t *testing.T, sg storage) {
		e := newEnv(t, sg)
		p := principal("drafter", skill.T3)
		c := e.connect(t, p, "resume-1")
		c.call(t, "load_skill", map[string]any{"skill": "escrituras/compraventa"})
		if got, isErr := c.call(t, "write_file", map[string]any{"file_path": "/workspace/draft.md", "content": "Borrador\n"}); isErr || got != "Updated file /workspace/draft.md" {
			t.Fatalf("write = %q %v", got, isErr)
		}
		c.cs.Close()
		c.conn.Close()
		if got := e.mgr.Attached(); len(got) != 0 {
			t.Fatalf("attached after close = %v", got)
		}

		c2 := e.connect(t, p, "resume-1")
		steps := []struct{ tool, key, arg, want string }{
			{"ls", "path", "/", "['/skills/', '/ticket/', '/workspace/']"},
			{"ls", "path", "/skills", "['/skills/compraventa/']"},
			{"read_file", "file_path", "/workspace/draft.md", "     1\tBorrador"},
		}
		for _, s := range steps {
			if got, _ := c2.call(t, s.tool, map[string]any{s.key: s.arg}); got != s.want {
				t.Errorf("resumed %s %s = %q, want %q", s.tool, s.arg, got, s.want)
			}
		}
		// A new session sees neither.
		c3 := e.connect(t, p, "")
		if got, _ := c3.call(t, "read_file", map[string]any{"file_path": "/workspace/draft.md"}); got != "Error: File '/workspace/draft.md' not found" {
			t.Errorf("other session reads %q", got)
		}
		// Another principal cannot attach to it, whether it is live or not.
		for _, other := range []capability.Principal{principal("intruder", skill.T3), principal("drafter", skill.T1), {Tenant: "other", Agent: "drafter", Tier: skill.T3}} {
			_, err := e.gw.Connect(context.Background(), other, "resume-1", nil)
			if !errors.Is(err, session.ErrSessionUnavailable) {
				t.Errorf("Connect(%s) = %v, want ErrSessionUnavailable", other, err)
			}
		}
	})
}

// TestRegistryChangeNotifies: a rescan that changes what an agent may load
// sends tools/list_changed and resources/updated; a rescan that changes
// nothing sends nothing; a skill that leaves the registry is unloaded. It
// runs in a synctest bubble (the gateway, its SQLite store and the in-memory
// MCP client all live in it), so that "nothing was sent" is checked once
// every goroutine that could still send is idle, not after a guessed pause.
func TestRegistryChangeNotifies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, storages[0])
		c := e.connect(t, principal("drafter", skill.T3), "")
		ctx := context.Background()
		if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: mcpserver.DisclosureURI}); err != nil {
			t.Fatal(err)
		}
		c.call(t, "load_skill", map[string]any{"skill": "pdf-forms"})
		synctest.Wait()
		drain(c.res) // the load itself updates the disclosure
		rescan := func() bool {
			t.Helper()
			changed, err := e.gw.Rescan(ctx, func(ctx context.Context) error { e.scan(t); return nil })
			if err != nil {
				t.Fatal(err)
			}
			return changed
		}
		if rescan() {
			t.Fatal("a rescan with no change reported a change")
		}
		synctest.Wait() // every notification the rescan sent has arrived
		select {
		case <-c.tools:
			t.Fatal("tools/list_changed without a change")
		case uri := <-c.res:
			t.Fatalf("resources/updated %s without a change", uri)
		default:
		}

		writeFile(t, filepath.Join(e.root, "notas", "acta", "SKILL.md"), "---\nname: acta\ndescription: Drafts minutes.\nmetadata:\n  tier: \"1\"\n---\n# Acta\n")
		if !rescan() {
			t.Fatal("adding a skill was not seen as a change")
		}
		waitFor(t, c.tools, "tools/list_changed")
		if uri := waitFor(t, c.res, "resources/updated"); uri != mcpserver.DisclosureURI {
			t.Errorf("updated %q", uri)
		}
		res, err := c.cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.Name == "load_skill" && !strings.Contains(tool.Description, "notas/acta") {
				t.Errorf("load_skill description not updated: %q", tool.Description)
			}
		}

		// The loaded skill leaves the registry: it is unloaded everywhere.
		if err := os.RemoveAll(filepath.Join(e.root, "pdf-forms")); err != nil {
			t.Fatal(err)
		}
		if !rescan() {
			t.Fatal("removing a skill was not seen as a change")
		}
		if got, _ := c.call(t, "ls", map[string]any{"path": "/"}); got != "['/ticket/', '/workspace/']" {
			t.Errorf("ls / after the loaded skill left = %q", got)
		}
		if got, _ := c.call(t, "read_file", map[string]any{"file_path": "/skills/pdf-forms/SKILL.md"}); got != "Error: File '/skills/pdf-forms/SKILL.md' not found" {
			t.Errorf("read after removal = %q", got)
		}
	})
}

// drain empties ch of what has arrived; call it after synctest.Wait, when
// nothing more is on its way.
func drain[T any](ch chan T) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func waitFor[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s within 5s", what)
	}
	var zero T
	return zero
}

// TestInitTimeout: a connection whose client has not finished the MCP
// handshake within ConnectOptions.InitTimeout is closed (its session handle
// released), and not a moment before; one whose client finished it stays
// open. It runs in a synctest bubble, so the limit passes on the bubble's
// clock and each check sees everything the timer did.
func TestInitTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *mcp.ClientSessionOptions
	}{
		// The initialize handshake of protocol 2025-11-25, ended by
		// notifications/initialized.
		{"initialize", &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}},
		// The SDK's default client (protocol 2026-07-28) asks
		// server/discover and sends no notifications/initialized: its
		// first request finishes the handshake.
		{"discover", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const limit = 30 * time.Second
				ctx := context.Background()
				e := newEnv(t, storages[0])
				opts := &mcpserver.ConnectOptions{InitTimeout: limit}
				silent, err := e.gw.Connect(ctx, principal("drafter", skill.T3), "silent", opts)
				if err != nil {
					t.Fatal(err)
				}
				defer silent.Close()
				greeted, err := e.gw.Connect(ctx, principal("drafter", skill.T3), "greeted", opts)
				if err != nil {
					t.Fatal(err)
				}
				defer greeted.Close()
				st, ct := mcp.NewInMemoryTransports()
				if _, err := greeted.Server().Connect(ctx, st, nil); err != nil {
					t.Fatal(err)
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()

				time.Sleep(limit - time.Nanosecond)
				synctest.Wait()
				if got := strings.Join(e.mgr.Attached(), ","); got != "greeted,silent" {
					t.Fatalf("just before the limit: attached %s, want greeted,silent", got)
				}
				time.Sleep(time.Nanosecond)
				synctest.Wait()
				if got := strings.Join(e.mgr.Attached(), ","); got != "greeted" {
					t.Fatalf("at the limit: attached %s, want greeted", got)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSkillList, Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Fatalf("the connection that finished the handshake: %v %+v", err, res)
				}
			})
		})
	}
}
