package admin_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/edge/admin"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// testServer is skillgate's own test MCP server, built by TestMain.
var testServer string

func TestMain(m *testing.M) {
	os.Exit(testserver.RunTests(m, "../../..", "admin", &testServer))
}

// console is a console over a real store, install service and policy
// engine, served on loopback, with a clock the test moves.
type console struct {
	url  string
	db   *sqlite.DB
	svc  *install.Service
	eng  *policy.Engine
	mu   sync.Mutex
	now  time.Time
	http *http.Client
	// handler is the console itself, for benchmarks without a network.
	handler http.Handler
	reg     *registry.Registry
	changes *change.Service
	// canonical and mirror are a skill folder and its mirror, which the
	// overview compares.
	canonical, mirror string
}

var tokens = map[string]capability.Principal{
	"sgt_admin":    {Tenant: "ops", Agent: "alice", Tier: skill.T0},
	"sgt_operator": {Tenant: "ops", Agent: "bob", Tier: skill.T1},
}

func newConsole(t testing.TB) *console { t.Helper(); return newConsoleWith(t, nil) }

// newConsoleWith is newConsole with the install service's options changed
// by opts first (a lineage index, for example).
func newConsoleWith(t testing.TB, opts func(*install.Options)) *console {
	t.Helper()
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := &console{db: db, now: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	clock := func() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
	// The provider skills' tokens: the npm servers list their tools
	// without using them.
	creds := func(name string) (string, bool) {
		v, ok := map[string]string{"GITHUB_TOKEN": "gh-not-used", "GITLAB_TOKEN": "gl-not-used"}[name]
		return v, ok
	}
	iopts := install.Options{Store: db, Root: filepath.Join(data, "imported"), Changes: db, Credentials: creds,
		MCP: mcpclient.Options{InheritEnv: []string{"PATH", "HOME", "TMPDIR", "GORACE"}}}
	if opts != nil {
		opts(&iopts)
	}
	svc, err := install.New(iopts)
	if err != nil {
		t.Fatal(err)
	}
	c.svc = svc
	c.changes, err = change.New(change.Options{Store: db, Installs: svc, Smoke: broker.Smoke(broker.LoadInstalled(svc), broker.ExecutorOptions{Registered: db.Registrations})})
	if err != nil {
		t.Fatal(err)
	}
	// A canonical folder and a mirror that lacks one of its skills.
	c.canonical, c.mirror = filepath.Join(data, "agents-skills"), filepath.Join(data, "claude-skills")
	for _, d := range []string{filepath.Join(c.canonical, "notes"), filepath.Join(c.canonical, "pdf"), filepath.Join(c.mirror, "notes")} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "SKILL.md"), []byte("---\nname: "+filepath.Base(d)+"\ndescription: A skill.\n---\nBody.\n"), 0o644)
	}
	c.eng = policy.New(&policy.Options{Store: db, Now: clock})
	if err := c.eng.SetCapabilities([]policy.Capability{{SkillKey: "tools/fs", SkillTrust: policy.TrustCore, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
		SkillState: policy.SkillEnabled, ExtensionID: "fs", CapabilityID: "delete_file", Enabled: true,
		RiskLevel: capability.RiskDestructive, SideEffects: capability.SideEffectsInternal, DataEgress: capability.EgressNone}}); err != nil {
		t.Fatal(err)
	}
	reg := registry.New(db, registry.Options{})
	c.reg = reg
	if _, err := reg.Scan(ctx, []discover.Root{{Path: filepath.Join("..", "..", "..", "examples", "skills"), Scope: discover.ScopeProject}}, nil); err != nil {
		t.Fatal(err)
	}
	// The skill pages read files as agents do, through a session manager.
	ws, err := local.Open(filepath.Join(data, "workspaces"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	sessions, err := session.NewManager(session.Options{Catalog: reg, Versions: db, Store: db, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	h, err := admin.New(admin.Options{
		Verify: func(s string) (string, capability.Principal, bool) { p, ok := tokens[s]; return s, p, ok },
		Token: func(_ context.Context, id string) (capability.Principal, bool, error) {
			p, ok := tokens[id]
			return p, ok, nil
		},
		Installs: svc, Policy: c.eng, Audit: audit.NewLog(db), Registry: reg, SkillFiles: sessions, Now: clock, Changes: c.changes,
		Mirrors: []admin.Mirror{{Canonical: c.canonical, Mirror: c.mirror, Limits: discover.DefaultLimits}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.handler = h
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c.url = ts.URL
	jar, _ := cookiejar.New(nil)
	c.http = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c
}

func (c *console) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// get and post return the status, the Location header and the body.
func (c *console) get(t testing.TB, path string) (int, string, string) {
	t.Helper()
	resp, err := c.http.Get(c.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

func (c *console) post(t testing.TB, path string, form url.Values) (int, string, string) {
	t.Helper()
	resp, err := c.http.PostForm(c.url+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in with token and returns the session's CSRF token.
func (c *console) signIn(t testing.TB, token string) string {
	t.Helper()
	status, loc, body := c.post(t, "/admin/login", url.Values{"token": {token}, "next": {"/admin/"}})
	if status != http.StatusSeeOther || loc != "/admin/" {
		t.Fatalf("sign in: %d %s %s", status, loc, body)
	}
	_, _, page := c.get(t, "/admin/")
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the overview:\n%s", page)
	}
	return m[1]
}

func TestSignIn(t *testing.T) {
	c := newConsole(t)
	status, loc, _ := c.get(t, "/admin/installs")
	if status != http.StatusSeeOther || loc != "/admin/login?next=%2Fadmin%2Finstalls" {
		t.Fatalf("signed out: %d %s", status, loc)
	}
	for _, tc := range []struct {
		token  string
		status int
		want   string
	}{
		{"sgt_unknown", http.StatusUnauthorized, "That token is unknown."},
		{"sgt_operator", http.StatusForbidden, "The console is for operators: this token is of tier T1; sign in with a T0 token."},
	} {
		status, _, body := c.post(t, "/admin/login", url.Values{"token": {tc.token}})
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("sign in with %s: %d; want %d with %q:\n%s", tc.token, status, tc.status, tc.want, body)
		}
	}
	if u, _ := url.Parse(c.url); len(c.http.Jar.Cookies(u)) != 0 {
		t.Fatal("a refused sign-in set a cookie")
	}
	resp, err := c.http.PostForm(c.url+"/admin/login", url.Values{"token": {"sgt_admin"}, "next": {"https://evil.example/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ck := resp.Header.Get("Set-Cookie")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/admin/" ||
		!strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") || !strings.Contains(ck, "Path=/admin") {
		t.Fatalf("sign in: %d %s; cookie %s", resp.StatusCode, resp.Header.Get("Location"), ck)
	}
	status, _, body := c.get(t, "/admin/")
	if status != http.StatusOK || !strings.Contains(body, "ops/alice") || !strings.Contains(body, "<h1>Overview</h1>") {
		t.Fatalf("overview: %d\n%s", status, body)
	}
	// Idle past the timeout: the session ends and a page sends to sign in.
	c.advance(admin.DefaultIdleTimeout + time.Second)
	status, loc, _ = c.get(t, "/admin/grants")
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/login") {
		t.Fatalf("after the idle timeout: %d %s", status, loc)
	}
	// A form posted on an ended session is sent to sign in, nothing done.
	status, loc, _ = c.post(t, "/admin/grants", url.Values{"principal": {"acme/x"}})
	if status != http.StatusSeeOther || loc != "/admin/login?expired=1" {
		t.Fatalf("post after expiry: %d %s", status, loc)
	}
	_, _, body = c.get(t, loc)
	if !strings.Contains(body, "Your session ended. Sign in again.") {
		t.Fatalf("login page after expiry:\n%s", body)
	}
	// Sign out ends the session.
	csrf := c.signIn(t, "sgt_admin")
	if status, loc, _ := c.post(t, "/admin/logout", url.Values{"csrf": {csrf}}); status != http.StatusSeeOther || loc != "/admin/login" {
		t.Fatalf("sign out: %d %s", status, loc)
	}
	if status, _, _ := c.get(t, "/admin/"); status != http.StatusSeeOther {
		t.Fatalf("after sign-out the overview answers %d", status)
	}
}

func TestCSRF(t *testing.T) {
	c := newConsole(t)
	csrf := c.signIn(t, "sgt_admin")
	form := url.Values{"principal": {"acme/planner"}, "capability": {"tools/fs:fs/delete_file"}, "level": {"destructive"}, "uses": {"1"}, "reason": {"clean the build tree once"}}
	for _, bad := range []string{"", "not-the-token"} {
		f := url.Values{}
		for k, v := range form {
			f[k] = v
		}
		if bad != "" {
			f.Set("csrf", bad)
		}
		status, _, body := c.post(t, "/admin/grants", f)
		if status != http.StatusForbidden || !strings.Contains(body, "CSRF token is missing or wrong") {
			t.Fatalf("csrf %q: %d\n%s", bad, status, body)
		}
	}
	if n := len(c.eng.Grants()); n != 0 {
		t.Fatalf("a form without its CSRF token added %d grants", n)
	}
	form.Set("csrf", csrf)
	if status, loc, body := c.post(t, "/admin/grants", form); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/grants?done=") {
		t.Fatalf("with the token: %d %s\n%s", status, loc, body)
	}
}

// TestInstallReviewFlow reviews an install whose server gives no risk
// metadata for two tools, completes it with a reason, approves and
// enables it, all through the forms; each step is checked on the page and
// in the store, and the audit log names the operator.
func TestInstallReviewFlow(t *testing.T) {
	c := newConsole(t)
	ctx := context.Background()
	installNotes(t, c)
	csrf := c.signIn(t, "sgt_admin")
	_, _, page := c.get(t, "/admin/installs")
	if !strings.Contains(page, `href="/admin/installs/review?name=notes%40sha256`) || !strings.Contains(page, `class="state blocked"`) {
		t.Fatalf("installs page:\n%s", page)
	}
	_, _, page = c.get(t, "/admin/installs/review?name=notes")
	for _, want := range []string{"<h1>notes <span class=\"state blocked\">blocked</span></h1>", "Admission layers", "content scan",
		"<code>notes/bare</code> lacks riskLevel, sideEffects, dataEgress", "<code>notes/titled</code> lacks"} {
		if !strings.Contains(page, want) {
			t.Fatalf("review page lacks %q:\n%s", want, page)
		}
	}
	// A completion without a reason is refused on the page, nothing stored.
	status, _, page := c.post(t, "/admin/installs/complete", url.Values{"csrf": {csrf}, "name": {"notes"}, "capability": {"notes/bare"}, "risk": {"read"}, "sideEffects": {"none"}, "egress": {"none"}, "why": {"short"}})
	if status != http.StatusBadRequest || !strings.Contains(page, `class="problem" role="alert"`) || !strings.Contains(page, "--why") {
		t.Fatalf("completion without a reason: %d\n%s", status, page)
	}
	for _, capName := range []string{"notes/bare", "notes/titled"} {
		status, loc, body := c.post(t, "/admin/installs/complete", url.Values{"csrf": {csrf}, "name": {"notes"}, "capability": {capName},
			"risk": {"read"}, "sideEffects": {"none"}, "egress": {"none"}, "why": {"reads the notes file only; checked the source"}})
		if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/installs/review?name=notes") {
			t.Fatalf("complete %s: %d %s\n%s", capName, status, loc, body)
		}
	}
	if rv, _ := c.svc.Review(ctx, "notes"); rv.State != store.StateAwaitingApproval {
		t.Fatalf("after completing: %s (%s)", rv.State, rv.Reason)
	}
	// Per-capability settings: the form offers them, and a setting the
	// policy engine could not enforce is refused with the reason shown.
	_, _, page = c.get(t, "/admin/installs/review?name=notes")
	for _, want := range []string{`<input name="constraints:notes/echo" aria-label="constraints of notes/echo"`, `<select name="approval:notes/delete_notes"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("review page lacks %q:\n%s", want, page)
		}
	}
	status, _, page = c.post(t, "/admin/installs/approve", url.Values{"csrf": {csrf}, "name": {"notes"}, "all": {"1"}, "approval:notes/delete_notes": {"never"}})
	if status != http.StatusBadRequest || !strings.Contains(page, "notes/delete_notes: approval never cannot waive the grant of a destructive capability") {
		t.Fatalf("approve with never on a destructive capability: %d\n%s", status, page)
	}
	status, loc, _ := c.post(t, "/admin/installs/approve", url.Values{"csrf": {csrf}, "name": {"notes"}, "all": {"1"},
		"constraints:notes/echo": {`{"argValues":{"text":["hi"]}}`}, "approval:notes/echo": {"always"}, "approval:notes/add_note": {""}})
	if status != http.StatusSeeOther {
		t.Fatalf("approve: %d", status)
	}
	if rv, _ := c.svc.Review(ctx, "notes"); len(rv.Settings) != 1 || capSetting(rv, "notes/echo") != `{"argValues":{"text":["hi"]}} always` {
		t.Fatalf("approved settings %+v", rv.Settings)
	}
	_, _, page = c.get(t, loc)
	if !strings.Contains(page, `role="status">approve: approved`) || !strings.Contains(page, `<span class="state installed">installed</span>`) {
		t.Fatalf("after approval:\n%s", page)
	}
	if status, _, _ := c.post(t, "/admin/installs/enable", url.Values{"csrf": {csrf}, "name": {"notes"}}); status != http.StatusSeeOther {
		t.Fatalf("enable: %d", status)
	}
	rv, _ := c.svc.Review(ctx, "notes")
	if rv.State != store.StateEnabled {
		t.Fatalf("after enabling: %s", rv.State)
	}
	// The enabled skill's settings change in place from its page.
	if _, _, page := c.get(t, "/admin/installs/review?name=notes"); !strings.Contains(page, `<button type="submit" name="settings" value="1">Change the settings</button>`) {
		t.Fatalf("enabled skill's page lacks the settings form:\n%s", page)
	}
	if status, _, page := c.post(t, "/admin/installs/approve", url.Values{"csrf": {csrf}, "name": {"notes"}, "settings": {"1"},
		"approval:notes/echo": {"never"}}); status != http.StatusSeeOther {
		t.Fatalf("change settings: %d\n%s", status, page)
	}
	if rv, _ = c.svc.Review(ctx, "notes"); rv.State != store.StateEnabled || capSetting(rv, "notes/echo") != `{"argValues":{"text":["hi"]}} never` {
		t.Fatalf("after changing settings: %s %q", rv.State, capSetting(rv, "notes/echo"))
	}
	recs, err := audit.NewLog(c.db).Query(ctx, audit.Filter{Subject: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	var byAlice []string
	for _, r := range recs {
		if r.Actor == "operator:ops/alice@T0" {
			byAlice = append(byAlice, r.Action)
		}
	}
	if got := strings.Join(byAlice, " "); !strings.Contains(got, "install.complete install.complete") || !strings.HasSuffix(got, "install.installed install.enabled install.approve") {
		t.Fatalf("audit records by the operator: %s", got)
	}
	// A rejection of an installed skill is refused with the reason shown,
	// and what the operator typed is escaped.
	status, _, page = c.post(t, "/admin/installs/reject", url.Values{"csrf": {csrf}, "name": {"notes"}, "why": {"<script>alert(1)</script> no longer needed"}})
	if status != http.StatusConflict || !strings.Contains(page, "not possible in this state") || strings.Contains(page, "<script>") {
		t.Fatalf("reject an enabled skill: %d\n%s", status, page)
	}
}

func TestGrantsAndAudit(t *testing.T) {
	c := newConsole(t)
	csrf := c.signIn(t, "sgt_admin")
	status, loc, body := c.post(t, "/admin/grants", url.Values{"csrf": {csrf}, "principal": {"acme/planner"}, "capability": {"tools/fs:fs/delete_file"},
		"level": {"destructive"}, "uses": {"1"}, "expires": {"2h"}, "reason": {"clean the build tree once"}})
	if status != http.StatusSeeOther {
		t.Fatalf("add grant: %d\n%s", status, body)
	}
	gs := c.eng.Grants()
	if len(gs) != 1 || gs[0].CreatedBy != "operator:ops/alice@T0" || gs[0].Uses != 1 || gs[0].ExpiresAt == nil || !gs[0].ExpiresAt.Equal(c.now.Add(2*time.Hour)) {
		t.Fatalf("grants %+v", gs)
	}
	_, _, page := c.get(t, loc)
	if !strings.Contains(page, "added grant "+gs[0].ID) || !strings.Contains(page, "<code>tools/fs:fs/delete_file</code>") || !strings.Contains(page, "aria-label=\"revoke "+gs[0].ID+"\"") {
		t.Fatalf("grants page:\n%s", page)
	}
	status, _, page = c.post(t, "/admin/grants", url.Values{"csrf": {csrf}, "principal": {"acme/planner"}, "capability": {"tools/fs:fs/delete_file"}, "level": {"read"}, "expires": {"soon"}, "reason": {"x"}})
	if status != http.StatusBadRequest || !strings.Contains(page, `expires &#34;soon&#34;: a duration like 30m, 2h or 7d`) {
		t.Fatalf("bad expiry: %d\n%s", status, page)
	}
	if status, _, _ := c.post(t, "/admin/grants/revoke", url.Values{"csrf": {csrf}, "id": {gs[0].ID}}); status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", status)
	}
	for _, g := range c.eng.Grants() {
		if g.ID == gs[0].ID && g.Status(c.now) != "revoked" {
			t.Fatalf("after revoking: %s", g.Status(c.now))
		}
	}
	_, _, page = c.get(t, "/admin/audit?action=grant.")
	if !strings.Contains(page, "grant.add") || !strings.Contains(page, "grant.revoke") || !strings.Contains(page, "operator:ops/alice@T0") {
		t.Fatalf("audit page:\n%s", page)
	}
	resp, err := c.http.Get(c.url + "/admin/audit.jsonl?action=grant.")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/jsonl; charset=utf-8" {
		t.Fatalf("export content type %q", ct)
	}
	var actions []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		actions = append(actions, r.Action)
	}
	if strings.Join(actions, " ") != "grant.add grant.revoke" {
		t.Fatalf("export: %v", actions)
	}
	if status, _, _ := c.get(t, "/admin/audit?decision=maybe"); status != http.StatusBadRequest {
		t.Fatalf("bad decision filter: %d", status)
	}
	resp2, _ := c.http.Get(c.url + "/admin/")
	resp2.Body.Close()
	if csp := resp2.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || resp2.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("security headers: %v", resp2.Header)
	}
}

// installNotes installs "notes", whose server (the test server's normal
// mode) gives no risk metadata for two of its tools: it ends blocked.
func installNotes(t testing.TB, c *console) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "notes")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: notes\ndescription: Keeps notes with MCP tools.\n---\nUse the tools.\n"), 0o644)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"command": testServer, "env": map[string]string{"SKILLGATE_TESTSERVER": "normal"}}}})
	os.WriteFile(filepath.Join(src, "mcp.json"), cfg, 0o644)
	if _, err := c.svc.Install(context.Background(), src, "operator:ops/alice"); err != nil {
		t.Fatal(err)
	}
}

// TestSkillsAndPolicies: the skills list filters and pages the registry,
// a skill's page shows its frontmatter, diagnostics, files and versions
// and a file's text read-only (nothing outside the skill), and the
// policies page lists the active set and replays a request.
func TestSkillsAndPolicies(t *testing.T) {
	c := newConsole(t)
	c.signIn(t, "sgt_admin")
	_, _, page := c.get(t, "/admin/skills")
	if !strings.Contains(page, `<a href="/admin/skills/show?name=pdf-forms">pdf-forms</a>`) || !strings.Contains(page, "of ") {
		t.Fatalf("skills page:\n%s", page)
	}
	_, _, page = c.get(t, "/admin/skills?q=compraventa")
	if !strings.Contains(page, "1–1 of 1") || strings.Contains(page, ">pdf-forms<") {
		t.Fatalf("filtered skills page:\n%s", page)
	}
	// The text query ranks, as skill_list does: a task in other words
	// than the description's finds the deed first, with its score.
	_, _, page = c.get(t, "/admin/skills?q="+url.QueryEscape("the notary needs a mortgage deed"))
	if !strings.Contains(page, "<th>score</th><th>skill</th>") || !strings.Contains(page, "1–2 of 2") ||
		!regexp.MustCompile(`<tbody>\n<tr><td class="score">[0-9.]+</td><td><a href="/admin/skills/show\?name=escrituras%2fhipoteca">`).MatchString(page) {
		t.Fatalf("ranked skills page:\n%s", page)
	}
	for _, bad := range []string{"?tier=9", "?invokable_by=T9", "?state=lost", "?page=0", "?trust=some", "?q=" + strings.Repeat("x", 600)} {
		if status, _, _ := c.get(t, "/admin/skills"+bad); status != http.StatusBadRequest {
			t.Errorf("skills%s: %d; want 400", bad, status)
		}
	}
	_, _, page = c.get(t, "/admin/skills/show?name=pdf-forms")
	for _, want := range []string{"<h1>pdf-forms <span class=\"state enabled\">enabled</span></h1>", "<h2>Frontmatter</h2>", "<th>name</th>",
		`href="/admin/skills/show?name=pdf-forms&amp;file=SKILL.md"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("skill page lacks %q:\n%s", want, page)
		}
	}
	_, _, page = c.get(t, "/admin/skills/show?name=pdf-forms&file=SKILL.md")
	if !strings.Contains(page, `<pre class="file">---`) {
		t.Fatalf("file view:\n%s", page)
	}
	for _, bad := range []string{"../../go.mod", "/etc/passwd", "nope.md"} {
		status, _, page := c.get(t, "/admin/skills/show?name=pdf-forms&file="+url.QueryEscape(bad))
		if status != http.StatusNotFound || !strings.Contains(page, "is not one of the skill&#39;s files") {
			t.Errorf("file %s: %d\n%s", bad, status, page)
		}
	}
	if status, _, _ := c.get(t, "/admin/skills/show?name=absent"); status != http.StatusNotFound {
		t.Errorf("an absent skill: %d", status)
	}
	_, _, page = c.get(t, "/admin/policies")
	if !strings.Contains(page, "<h2>The active set</h2>") || !strings.Contains(page, "<h2>Test a request</h2>") {
		t.Fatalf("policies page:\n%s", page)
	}
	_, _, page = c.get(t, "/admin/policies?principal=acme/planner&tier=T3&capability="+url.QueryEscape("tools/fs:fs/delete_file")+"&args="+url.QueryEscape(`{"path":"/tmp/x"}`))
	if !strings.Contains(page, "acme/planner@T3 calling tools/fs:fs/delete_file: <strong>") {
		t.Fatalf("policy test:\n%s", page)
	}
	_, _, page = c.get(t, "/admin/policies?principal=nobody&capability=x")
	if !strings.Contains(page, `class="problem" role="alert"`) {
		t.Fatalf("a bad policy test:\n%s", page)
	}
}

// capSetting renders what rv's approved manifest records of a
// capability's constraints and call approval default.
func capSetting(rv *install.Review, name string) string {
	for _, c := range rv.Capabilities {
		if c.Name == name {
			return string(c.Constraints) + " " + string(c.CallApproval)
		}
	}
	return "absent"
}
