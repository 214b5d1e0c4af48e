package admin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
)

// formsRE finds a page's install forms and their buttons.
var (
	actionRE = regexp.MustCompile(`action="/admin/installs/([a-z]+)"`)
	buttonRE = regexp.MustCompile(`<button type="submit"[^>]*>([^<]+)</button>`)
)

// offered lists the install actions a page has forms for, and its buttons
// (but Sign out).
func offered(page string) (string, string) {
	var acts, buttons []string
	for _, m := range actionRE.FindAllStringSubmatch(page, -1) {
		if len(acts) == 0 || acts[len(acts)-1] != m[1] {
			acts = append(acts, m[1])
		}
	}
	for _, m := range buttonRE.FindAllStringSubmatch(page, -1) {
		if m[1] != "Sign out" {
			buttons = append(buttons, m[1])
		}
	}
	return strings.Join(acts, " "), strings.Join(buttons, "|")
}

// TestReviewOffersValidActions: an install's page has forms for exactly
// the decisions its state allows (install.Actions), through the flow:
// blocked, completed, approved, enabled. A server that exited shows what
// it wrote to stderr as preformatted lines.
func TestReviewOffersValidActions(t *testing.T) {
	c := newConsole(t)
	ctx := context.Background()
	installNotes(t, c)
	c.signIn(t, "sgt_admin")
	check := func(when, wantActs, wantButtons string) {
		t.Helper()
		_, _, page := c.get(t, "/admin/installs/review?name=notes")
		if acts, buttons := offered(page); acts != wantActs || buttons != wantButtons {
			t.Errorf("%s: forms %q, buttons %q; want %q, %q", when, acts, buttons, wantActs, wantButtons)
		}
	}
	check("blocked", "approve complete reject recheck", "Approve only the ticked|Complete|Complete|Reject|Recheck the servers")
	for _, capName := range []string{"notes/bare", "notes/titled"} {
		if _, err := c.svc.Complete(ctx, "notes", install.Completion{Capability: capName, RiskLevel: "read", SideEffects: "none", DataEgress: "none",
			Why: "reads the notes file only; checked the source"}, "operator:ops/alice"); err != nil {
			t.Fatal(err)
		}
	}
	check("awaiting approval", "approve reject recheck", "Approve the proposal|Approve only the ticked|Reject|Recheck the servers")
	if _, err := c.svc.Approve(ctx, "notes", nil, "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
	// An approved version's settings form posts to approve (settings only).
	check("installed", "approve enable recheck", "Change the settings|Enable|Recheck the servers")
	if _, err := c.svc.Enable(ctx, "notes", "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
	check("enabled", "approve disable recheck", "Change the settings|Disable|Recheck the servers")

	// A server that exits at once, writing lines to stderr.
	src := filepath.Join(t.TempDir(), "broken")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: broken\ndescription: Its server does not start.\n---\nUse the tools.\n"), 0o644)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"broken": map[string]any{"command": testServer,
		"env": map[string]string{testserver.EnvMode: testserver.ModeExit, testserver.EnvError: strings.Repeat("x", 3<<10) + "\nline one\nline <two>"}}}})
	os.WriteFile(filepath.Join(src, "mcp.json"), cfg, 0o644)
	if _, err := c.svc.Install(ctx, src, "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
	_, _, page := c.get(t, "/admin/installs/review?name=broken")
	m := regexp.MustCompile(`(?s)<pre class="output">(.*?)</pre>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no server output on the page:\n%s", page)
	}
	// The tail mcpclient keeps (2 KiB by default), as lines.
	if !strings.Contains(page, "What it wrote to stderr:") || !strings.HasSuffix(m[1], "xxx\nline one\nline &lt;two&gt;") || len(m[1]) > 2<<10+32 {
		t.Errorf("server output: …%q (%d bytes)", m[1][max(0, len(m[1])-60):], len(m[1]))
	}
}
