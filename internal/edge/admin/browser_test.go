package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// chromium finds Debian's chromium (scripts/test.sh installs it), or skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

// browser starts a headless Chromium and returns a context of one tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // the tests run as root in CI
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// A guard against a page that never comes, not a measure of speed:
	// a loaded two-core machine running other packages' tests beside
	// this one takes several times as long as an idle one.
	ctx, cancel3 := context.WithTimeout(ctx, 15*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// phonePage opens url in a new tab of b's browser (signed in as b is)
// that emulates a 390×844 phone screen, waits for sel, and reports whether
// the page is wider than the screen. It returns the tab, for screenshots.
//
// A try is bounded, and one that runs out is tried once more in another
// tab: on a loaded machine, headless Chromium has left a command
// unanswered right after the emulation and a navigation (twice in CI,
// each time until the test's deadline; once in 20 runs here beside two
// busy loops). Any other error fails at once, and so does a second
// timeout.
func phonePage(t *testing.T, b context.Context, url, sel string) (tab context.Context, overflow bool) {
	t.Helper()
	for try := 1; ; try++ {
		tab, cancel := chromedp.NewContext(b)
		t.Cleanup(cancel)
		if err := chromedp.Run(tab); err != nil { // opens the tab
			t.Fatalf("opening a tab for %s: %v", url, err)
		}
		ctx, cancelTry := context.WithTimeout(tab, 90*time.Second)
		err := chromedp.Run(ctx,
			emulation.SetDeviceMetricsOverride(390, 844, 3, true),
			chromedp.Navigate(url),
			chromedp.WaitVisible(sel),
			chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow),
		)
		cancelTry()
		switch {
		case err == nil:
			return tab, overflow
		case errors.Is(err, context.DeadlineExceeded) && b.Err() == nil && try == 1:
			t.Logf("%s at phone size: Chromium did not answer in 90 s; trying again in a new tab", url)
			cancel()
		default:
			t.Fatalf("%s at phone size: %v", url, err)
		}
	}
}

// shot saves a screenshot of the page as NAME.png in the test's artifact
// directory, and in SKILLGATE_ADMIN_SCREENSHOTS when set (docs/admin.md's
// pictures come from there).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	capture := chromedp.FullScreenshot(&png, 100)
	if strings.HasSuffix(name, "-phone") {
		capture = chromedp.CaptureScreenshot(&png) // the phone's screen as it is
	}
	if err := chromedp.Run(ctx, capture); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv("SKILLGATE_ADMIN_SCREENSHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// providerSkill writes a provider skill whose server, which states no risk
// metadata (no tool annotations), is declared as the example
// examples/providers/NAME ships it (npx -y @modelcontextprotocol/server-NAME
// at a pinned version): its SKILL.md, and that mcp.json verbatim. The
// install fetches the package from the npm registry; without npm or node t
// is skipped.
func providerSkill(t *testing.T, name string) string {
	t.Helper()
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	src := filepath.Join(t.TempDir(), name)
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: "+name+" repositories and issues through the official MCP server.\n---\nUse the tools.\n"), 0o644)
	cfg, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "providers", name, "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestBrowser drives the console in a real Chromium: sign in, review the
// install of a provider skill whose npm server (GitHub's, declared with npx
// as the example ships it, fetched at install) gives no risk metadata,
// complete it with the keyboard alone and with the mouse, approve some
// capabilities and enable it, add and revoke a grant, see a rug-pulled
// tool's diff, apply the promote_provider change that installing GitLab
// beside it queued, look at pages on a phone-sized screen, and sign out. Each step is checked on the page and in the store.
func TestBrowser(t *testing.T) {
	gh := providerSkill(t, "github")
	gl := providerSkill(t, "gitlab")
	c := newConsole(t)
	ctx := context.Background()
	if _, err := c.svc.InstallWith(ctx, gh, "operator:ops/alice", install.Introspection{Credentials: []string{"GITHUB_TOKEN"}}); err != nil {
		t.Fatal(err)
	}
	// GitLab's server is fetched from the npm registry too, before the
	// browser starts: the browser's time budget is for pages, not for
	// the registry.
	if _, err := c.svc.InstallWith(ctx, gl, "operator:ops/alice", install.Introspection{Credentials: []string{"GITLAB_TOKEN"}}); err != nil {
		t.Fatal(err)
	}
	mk := func(name, mode string, env map[string]string) string {
		src := filepath.Join(t.TempDir(), name)
		os.MkdirAll(src, 0o755)
		os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: Keeps notes with MCP tools.\n---\nUse the tools.\n"), 0o644)
		e := map[string]string{"SKILLGATE_TESTSERVER": mode}
		for k, v := range env {
			e[k] = v
		}
		cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{"command": testServer, "env": e}}})
		os.WriteFile(filepath.Join(src, "mcp.json"), cfg, 0o644)
		if _, err := c.svc.Install(ctx, src, "operator:ops/alice"); err != nil {
			t.Fatal(err)
		}
		return src
	}
	b := browser(t)

	// Signed out: the console sends to sign in; a T1 token is refused.
	var h1, problem string
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/"),
		chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, "sgt_operator"+kb.Enter),
		chromedp.WaitVisible(`.problem`),
		chromedp.Text(`.problem`, &problem),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(problem, "this token is of tier T1") {
		t.Fatalf("T1 sign-in: %q", problem)
	}
	shot(t, b, "01-sign-in-refused")
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/login"),
		chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, "sgt_admin"+kb.Enter),
		chromedp.WaitVisible(`//h1[text()="Overview"]`),
		chromedp.Text(`h1`, &h1),
	); err != nil {
		t.Fatal(err)
	}
	shot(t, b, "02-overview")

	// The review of the blocked install, then the completion of one
	// capability with the keyboard alone: tab from the page's start to
	// the form and fill it.
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/installs/review?name=github"),
		chromedp.WaitVisible(`//h2[text()="Admission layers"]`),
	); err != nil {
		t.Fatal(err)
	}
	shot(t, b, "03-review-blocked")
	var focused string
	focusedID := chromedp.Evaluate(`document.activeElement.id || document.activeElement.name || document.activeElement.tagName`, &focused)
	reached := false
	for i := 0; i < 400 && !reached; i++ {
		if err := chromedp.Run(b, chromedp.KeyEvent(kb.Tab), focusedID); err != nil {
			t.Fatal(err)
		}
		reached = focused == "risk-github/create_repository"
	}
	if !reached {
		t.Fatal("tabbing through the page never reached the risk level of github/create_repository")
	}
	// Choose with the keyboard: a select takes the typed first letters.
	type step struct {
		keys string
		want string // the element focused after the Tab that follows
	}
	for _, s := range []step{{"w", "side-github/create_repository"}, {"e", "egress-github/create_repository"}, {"ne", "cwhy-github/create_repository"},
		{"creates a repository on github.com through its API", "force"}} {
		if err := chromedp.Run(b, chromedp.KeyEvent(s.keys), chromedp.KeyEvent(kb.Tab), focusedID); err != nil {
			t.Fatal(err)
		}
		if focused != s.want {
			t.Fatalf("after typing %q and Tab, focus is on %q; want %q", s.keys, focused, s.want)
		}
	}
	if err := chromedp.Run(b, chromedp.KeyEvent(kb.Tab), focusedID); err != nil {
		t.Fatal(err)
	}
	if focused != "BUTTON" {
		t.Fatalf("after the force box, focus is on %q; want the Complete button", focused)
	}
	var done string
	if err := chromedp.Run(b,
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`.done`),
		chromedp.Text(`.done`, &done),
	); err != nil {
		t.Fatal(err)
	}
	rv, _ := c.svc.Review(ctx, "github")
	if !strings.HasPrefix(done, "complete:") || riskOf(rv, "github/create_repository") != "write/external/network" {
		t.Fatalf("after the keyboard completion: %q; github/create_repository is %s", done, riskOf(rv, "github/create_repository"))
	}
	// The second capability with the mouse, then approve those two and
	// enable.
	if err := chromedp.Run(b,
		chromedp.SetValue(`#risk-github\/create_issue`, "write"),
		chromedp.SetValue(`#side-github\/create_issue`, "external"),
		chromedp.SetValue(`#egress-github\/create_issue`, "network"),
		chromedp.SendKeys(`#cwhy-github\/create_issue`, "opens an issue on github.com through its API"),
		chromedp.Click(`#cwhy-github\/create_issue ~ button`),
		// The page after the completion has no form for it.
		chromedp.WaitNotPresent(`#cwhy-github\/create_issue`),
		chromedp.WaitVisible(`.done`),
	); err != nil {
		t.Fatal(err)
	}
	shot(t, b, "04-review-completed")
	if err := chromedp.Run(b,
		chromedp.Evaluate(`document.querySelectorAll('input[name=only]').forEach(e => e.checked = (e.value == 'github/create_repository' || e.value == 'github/create_issue'))`, nil),
		chromedp.Click(`//button[text()="Approve only the ticked"]`),
		chromedp.WaitVisible(`//h1/span[@class="state installed"]`),
		chromedp.Click(`//button[text()="Enable"]`),
		chromedp.WaitVisible(`//h1/span[@class="state enabled"]`),
	); err != nil {
		t.Fatal(err)
	}
	if rv, _ := c.svc.Review(ctx, "github"); rv.State != store.StateEnabled || approvedOf(rv) != "github/create_issue github/create_repository" {
		t.Fatalf("after enabling in the browser: %s, approved %s", rv.State, approvedOf(rv))
	}
	shot(t, b, "05-enabled")

	// Add a grant, then revoke it.
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/grants"),
		chromedp.SendKeys(`#principal`, "acme/planner"),
		chromedp.SendKeys(`#capability`, "tools/fs:fs/delete_file"),
		chromedp.SetValue(`#level`, "destructive"),
		chromedp.SendKeys(`#reason`, "clean the build tree once"),
		chromedp.Click(`//button[text()="Add grant"]`),
		chromedp.WaitVisible(`.done`),
	); err != nil {
		t.Fatal(err)
	}
	gs := c.eng.Grants()
	if len(gs) != 1 || gs[0].Status(c.now) != "active" || gs[0].CreatedBy != "operator:ops/alice@T0" {
		t.Fatalf("grants after adding: %+v", gs)
	}
	shot(t, b, "06-grants")
	if err := chromedp.Run(b,
		chromedp.Click(`button[aria-label="revoke `+gs[0].ID+`"]`),
		chromedp.WaitVisible(`//p[@class="done" and contains(., "revoked grant")]`),
	); err != nil {
		t.Fatal(err)
	}
	for _, g := range c.eng.Grants() {
		if g.ID == gs[0].ID && g.Status(c.now) != "revoked" {
			t.Fatalf("after revoking in the browser: %s", g.Status(c.now))
		}
	}

	// A rug pull: the server changes a tool after approval; recheck finds
	// it and the review shows the diff.
	state := filepath.Join(t.TempDir(), "starts")
	mk("rugged", "rug-pull", map[string]string{"SKILLGATE_TESTSERVER_STATE": state})
	if _, err := c.svc.Approve(ctx, "rugged", []string{"rugged/add"}, "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
	var diff string
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/installs/review?name=rugged"),
		chromedp.Click(`//button[text()="Recheck the servers"]`),
		chromedp.WaitVisible(`//h2[text()="Drift since approval"]`),
		chromedp.Text(`pre.diff`, &diff),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff, "description") {
		t.Fatalf("drift diff: %q", diff)
	}
	shot(t, b, "07-drift")

	// GitLab, installed beside GitHub: both offer create_repository (and
	// create_issue, which the argument matcher maps too), so a
	// promote_provider change waits on the changes page. It is applied
	// once GitLab is approved and enabled too.
	if _, err := c.svc.Complete(ctx, "gitlab", install.Completion{Capability: "gitlab/create_repository", RiskLevel: "write", SideEffects: "external",
		DataEgress: "network", Why: "creates a project on gitlab.com through its API"}, "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
	// create_issue too, so that its change (found by the argument
	// matcher) can be applied when the crawl below submits its form.
	if _, err := c.svc.Complete(ctx, "gitlab", install.Completion{Capability: "gitlab/create_issue", RiskLevel: "write", SideEffects: "external",
		DataEgress: "network", Why: "opens an issue on gitlab.com through its API"}, "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.svc.Approve(ctx, "gitlab", []string{"gitlab/create_repository", "gitlab/create_issue"}, "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.svc.Enable(ctx, "gitlab", "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
	var summary, applied, id string
	repoRow := `//table[@class="changes"]//tr[td[starts-with(normalize-space(.), "create_repository:")]]`
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/"),
		chromedp.WaitVisible(`//h3[text()="Changes"]`),
		chromedp.WaitVisible(`//p[contains(., "only in canonical")]`),
		chromedp.Navigate(c.url+"/admin/changes"),
		chromedp.WaitVisible(repoRow+`//a`, chromedp.BySearch),
		chromedp.Text(repoRow+`/td[3]`, &summary, chromedp.BySearch),
		chromedp.Text(repoRow+`//a`, &id, chromedp.BySearch),
	); err != nil {
		t.Fatal(err)
	}
	if summary != "create_repository: one executor with backends github (github: github/create_repository), gitlab (gitlab: gitlab/create_repository) (a new executor)" {
		t.Fatalf("changes page: %q", summary)
	}
	shot(t, b, "12-changes")
	if err := chromedp.Run(b,
		chromedp.Click(repoRow+`//a`, chromedp.BySearch),
		chromedp.WaitVisible(`//h2[contains(., "Backends")]`),
	); err != nil {
		t.Fatal(err)
	}
	shot(t, b, "13-change-promote-provider")
	if err := chromedp.Run(b,
		chromedp.SendKeys(`#approve-why`, "one create_repository for both forges"),
		chromedp.Click(`//button[text()="Apply change"]`),
		chromedp.WaitVisible(`.done`),
		chromedp.Text(`.done`, &applied),
	); err != nil {
		t.Fatal(err)
	}
	regs, _ := c.db.Registrations(ctx)
	recs, _ := c.db.AuditRecords(ctx, store.AuditFilter{Action: "change.apply"})
	if applied != "Change "+id+" is applied." || len(regs) != 1 || regs[0].Executor != "create_repository" || len(regs[0].Backends) != 2 ||
		len(recs) != 1 || recs[0].Actor != "operator:ops/alice@T0" {
		t.Fatalf("after applying: %q; registrations %+v; audit %+v", applied, regs, recs)
	}
	shot(t, b, "14-change-applied")

	// A phone-sized screen: the review fits its width (tables scroll in
	// their cards, the page does not).
	phone, overflow := phonePage(t, b, c.url+"/admin/installs/review?name=github", `h1`)
	if overflow {
		t.Error("the review page is wider than a 390-pixel screen")
	}
	shot(t, phone, "08-review-phone")
	phone, overflow = phonePage(t, b, c.url+"/admin/changes/show?id=1", `h1`)
	if overflow {
		t.Error("the change page is wider than a 390-pixel screen")
	}
	shot(t, phone, "15-change-phone")

	// The skills, one skill's file, and a policy test.
	var fileText, decision string
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/skills"),
		chromedp.WaitVisible(`//a[text()="pdf-forms"]`),
	); err != nil {
		t.Fatal(err)
	}
	shot(t, b, "09-skills")
	// A person types what they need, not a skill's name: the list is
	// ranked, with scores, the mortgage deed first.
	var first string
	if err := chromedp.Run(b,
		chromedp.SendKeys(`#q`, "the notary needs a mortgage deed"),
		chromedp.Click(`//button[text()="Filter"]`),
		chromedp.WaitVisible(`td.score`),
		chromedp.Text(`tbody tr:first-child td:nth-child(2)`, &first),
	); err != nil {
		t.Fatal(err)
	}
	if first != "escrituras/hipoteca" {
		t.Errorf("first ranked skill %q, want escrituras/hipoteca", first)
	}
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/skills"),
		chromedp.WaitVisible(`//a[text()="pdf-forms"]`),
	); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(b,
		chromedp.Click(`//a[text()="pdf-forms"]`),
		chromedp.WaitVisible(`//h2[text()="Files"]`),
		chromedp.Click(`//a[text()="SKILL.md"]`),
		chromedp.WaitVisible(`pre.file`),
		chromedp.Text(`pre.file`, &fileText),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fileText, "---") {
		t.Fatalf("SKILL.md shown as %q", fileText)
	}
	shot(t, b, "10-skill-file")
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/policies"),
		chromedp.SendKeys(`#principal`, "acme/planner"),
		chromedp.SendKeys(`#capability`, "tools/fs:fs/delete_file"),
		chromedp.Click(`//button[text()="Decide"]`),
		chromedp.WaitVisible(`p.done`),
		chromedp.Text(`p.done`, &decision),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(decision, "acme/planner@T3 calling tools/fs:fs/delete_file") {
		t.Fatalf("policy test: %q", decision)
	}
	shot(t, b, "11-policies")

	// Every link of the console followed and every form submitted in the
	// browser, with two throwaway blocked installs besides the flow's (one
	// is rejected, the other completed, approved and enabled).
	mk("crawled", "normal", nil)
	mk("doomed", "normal", nil)
	crawl(t, b, c, []string{"/admin/", "/admin/installs", "/admin/changes", "/admin/skills", "/admin/policies", "/admin/grants", "/admin/audit"}, "/admin/logout")

	// Sign out: the session ends.
	if err := chromedp.Run(b,
		chromedp.Navigate(c.url+"/admin/"),
		chromedp.Click(`//button[text()="Sign out"]`),
		chromedp.WaitVisible(`#token`),
		chromedp.Navigate(c.url+"/admin/grants"),
		chromedp.WaitVisible(`#token`),
	); err != nil {
		t.Fatal(err)
	}
}

// riskOf is a capability's effective risk as level/side/egress.
func riskOf(r *install.Review, name string) string {
	for _, c := range r.Capabilities {
		if c.Name == name {
			return string(c.Risk.RiskLevel.Value) + "/" + string(c.Risk.SideEffects.Value) + "/" + string(c.Risk.DataEgress.Value)
		}
	}
	return "absent"
}

// approvedOf lists a review's approved capabilities.
func approvedOf(r *install.Review) string {
	var out []string
	for _, c := range r.Capabilities {
		if c.Approved {
			out = append(out, c.Name)
		}
	}
	return strings.Join(out, " ")
}
