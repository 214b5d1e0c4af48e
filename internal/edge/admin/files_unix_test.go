//go:build unix

package admin_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/registry/discover"
)

// TestSkillFileView: the console shows a skill's files as agents are
// served them (the session's skill tree): a recorded file replaced by a
// FIFO, and a hard link to a file outside the skill, are refused at once
// with the reason, never waited on nor shown.
func TestSkillFileView(t *testing.T) {
	c := newConsole(t)
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "odd")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.MkdirAll(dir, 0o755)
	for name, body := range map[string]string{
		"SKILL.md": "---\nname: odd\ndescription: A skill with odd files.\n---\nRead notes.md.\n",
		"notes.md": "plain notes\n", "pipe.md": "becomes a FIFO\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(outside, []byte("the operator's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, "linked.md")); err != nil {
		t.Skipf("hard link: %v", err)
	}
	if _, err := c.reg.Scan(ctx, []discover.Root{{Path: root, Scope: discover.ScopeProject}}, nil); err != nil {
		t.Fatal(err)
	}
	// After the scan, a recorded file is replaced by a FIFO no one writes.
	os.Remove(filepath.Join(dir, "pipe.md"))
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A reader still blocked on the FIFO at the end is released, so that
	// the server can close (cleanups run last first: before the
	// server's).
	t.Cleanup(func() {
		if w, err := os.OpenFile(filepath.Join(dir, "pipe.md"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	c.signIn(t, "sgt_admin")
	client := *c.http
	client.Timeout = 10 * time.Second
	for _, tc := range []struct {
		file   string
		status int
		want   string
	}{
		{"notes.md", http.StatusOK, `<pre class="file">plain notes`},
		{"pipe.md", http.StatusNotFound, "pipe.md cannot be shown: blob: object not found: &#34;pipe.md&#34; is not a regular file"},
		{"linked.md", http.StatusNotFound, "linked.md cannot be shown: blob: object not found: &#34;linked.md&#34; is a hard link (the file has 2 names), not served from " + dir +
			"; list its root under hard_links roots if that is intended"},
	} {
		start := time.Now()
		resp, err := client.Get(c.url + "/admin/skills/show?name=odd&file=" + tc.file)
		if err != nil {
			t.Errorf("%s: %v (after %s)", tc.file, err, time.Since(start).Round(time.Millisecond))
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d; want %d with %q:\n%s", tc.file, resp.StatusCode, tc.status, tc.want, b)
		}
		if strings.Contains(string(b), "the operator&#39;s secret") {
			t.Errorf("%s: the file outside the skill is shown", tc.file)
		}
	}
}
