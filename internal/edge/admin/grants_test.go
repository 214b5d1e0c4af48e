package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/edge/admin"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// TestReviewPageListsGrants is issue 28's item 2 on the console: the
// review page lists every path a server is granted at call time, from its
// args and its env, with its access (the same grants review prints).
func TestReviewPageListsGrants(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap; scripts/test.sh does)")
	}
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc, err := install.New(install.Options{Store: db, Root: filepath.Join(data, "imported"),
		Sandbox: &sandbox.Bubblewrap{Hide: []string{data}},
		MCP:     mcpclient.Options{InheritEnv: []string{"PATH", "HOME", "TMPDIR", "GORACE"}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := admin.New(admin.Options{
		Verify: func(s string) (string, capability.Principal, bool) { p, ok := tokens[s]; return s, p, ok },
		Token: func(_ context.Context, id string) (capability.Principal, bool, error) {
			p, ok := tokens[id]
			return p, ok, nil
		},
		Installs: svc, Now: func() time.Time { return time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	c := &console{url: ts.URL, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}

	work := t.TempDir()
	notes, memory := filepath.Join(work, "notes"), filepath.Join(work, "memory")
	os.MkdirAll(notes, 0o755)
	os.MkdirAll(memory, 0o755)
	src := filepath.Join(t.TempDir(), "notes")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: notes\ndescription: Keeps notes with MCP tools.\n---\nUse the tools.\n"), 0o644)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"command": testServer, "args": []string{notes},
		"env": map[string]string{"SKILLGATE_TESTSERVER": "normal", "MEMORY_FILE_PATH": filepath.Join(memory, "memory.jsonl")}}}})
	os.WriteFile(filepath.Join(src, "mcp.json"), cfg, 0o644)
	if _, err := svc.Install(ctx, src, "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
	status, loc, body := c.post(t, "/admin/login", map[string][]string{"token": {"sgt_admin"}, "next": {"/admin/installs"}})
	if status != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s %s", status, loc, body)
	}
	_, _, page := c.get(t, "/admin/installs/review?name=notes")
	want := `<td><ul class="grants"><li><code>` + notes + `</code> <span class="access">read-write</span> <small>(args[0])</small></li>` +
		`<li><code>` + memory + `</code> <span class="access">read-write</span> <small>(env MEMORY_FILE_PATH)</small></li></ul></td>`
	if !strings.Contains(page, want) {
		t.Errorf("review page lacks\n%s\n%s", want, page)
	}
}
