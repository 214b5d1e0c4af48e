package server_test

import (
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
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/edge/admin"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// memShared is a [server.SharedFile] in memory: the store that replicas
// share, as PostgreSQL is in production.
type memShared struct {
	mu   sync.Mutex
	docs map[string][]byte
	revs map[string]int64
}

func newMemShared() *memShared {
	return &memShared{docs: map[string][]byte{}, revs: map[string]int64{}}
}

func (m *memShared) ReadFile(_ context.Context, name string) ([]byte, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.docs[name], m.revs[name], nil
}

func (m *memShared) FileRevision(_ context.Context, name string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.revs[name], nil
}

func (m *memShared) UpdateFile(_ context.Context, name string, change func([]byte) ([]byte, error)) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, err := change(m.docs[name])
	if err != nil {
		return 0, err
	}
	m.docs[name] = b
	m.revs[name]++
	return m.revs[name], nil
}

// consoleReplica is `skillgate serve` with its console as serve wires it
// (Verify: Server.VerifyToken, Token: Server.CurrentToken), on a token set
// that the CLI changes behind its back.
type consoleReplica struct {
	url    string
	tokens *server.Tokens
	eng    *policy.Engine
}

func newConsoleReplica(t *testing.T, env *mcpservertest.Env, set *server.TokenSet) *consoleReplica {
	t.Helper()
	tokens, err := server.OpenTokenSet(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Gateway: env.Gateway, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	eng := policy.New(nil)
	if err := eng.SetCapabilities([]policy.Capability{{SkillKey: "tools/fs", SkillTrust: policy.TrustCore, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
		SkillState: policy.SkillEnabled, ExtensionID: "fs", CapabilityID: "delete_file", Enabled: true,
		RiskLevel: capability.RiskDestructive, SideEffects: capability.SideEffectsInternal, DataEgress: capability.EgressNone}}); err != nil {
		t.Fatal(err)
	}
	console, err := admin.New(admin.Options{Verify: srv.VerifyToken, Token: srv.CurrentToken, Policy: eng})
	if err != nil {
		t.Fatal(err)
	}
	srv.MountAdmin(console)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &consoleReplica{url: ts.URL, tokens: tokens, eng: eng}
}

// browser is one operator's browser: a cookie jar that does not follow
// redirects.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a GET (form nil) or a form POST; it returns the status, the
// Location and the body.
func (b *browser) do(path string, form url.Values) (int, string, string) {
	b.t.Helper()
	var resp *http.Response
	var err error
	if form == nil {
		resp, err = b.c.Get(b.base + path)
	} else {
		resp, err = b.c.PostForm(b.base+path, form)
	}
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(body)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in with secret and returns the session's CSRF token.
func (b *browser) signIn(secret string) string {
	b.t.Helper()
	if status, loc, body := b.do("/admin/login", url.Values{"token": {secret}, "next": {"/admin/grants"}}); status != http.StatusSeeOther || loc != "/admin/grants" {
		b.t.Fatalf("sign in: %d %s\n%s", status, loc, body)
	}
	status, _, page := b.do("/admin/grants", nil)
	m := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		b.t.Fatalf("grants page after signing in: %d\n%s", status, page)
	}
	return m[1]
}

// TestConsoleSessionEndsWithToken: a console session is bound to the token
// it signed in with. Removed as `skillgate token rm` removes it, replaced
// by another secret for the same agent, or edited to another tier, the
// token ends the session at its next request, on the replica that holds
// it: a page sends to the sign-in form saying why, and a POST that adds a
// grant is refused and adds nothing. Over a token file and over a token
// set that replicas share (the change made by another process, and no
// reload in between).
func TestConsoleSessionEndsWithToken(t *testing.T) {
	ctx := context.Background()
	env := mcpservertest.NewEnv(t, examples, nil, nil)
	alice := capability.Principal{Tenant: "ops", Agent: "alice", Tier: skill.T0}
	for _, kind := range []string{"file", "shared"} {
		t.Run(kind, func(t *testing.T) {
			var cli *server.TokenSet // what `skillgate token` opens
			var edit func(func([]server.Token))
			switch kind {
			case "file":
				path := filepath.Join(t.TempDir(), server.TokensFile)
				cli = server.FileTokens(path)
				edit = func(change func([]server.Token)) {
					var f struct{ Tokens []server.Token }
					b, _ := os.ReadFile(path)
					if err := json.Unmarshal(b, &f); err != nil {
						t.Fatal(err)
					}
					change(f.Tokens)
					b, _ = json.Marshal(map[string]any{"tokens": f.Tokens})
					time.Sleep(10 * time.Millisecond) // a new modification time
					if err := os.WriteFile(path, b, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			case "shared":
				mem := newMemShared()
				cli = server.SharedTokens(mem)
				edit = func(change func([]server.Token)) {
					if _, err := mem.UpdateFile(ctx, server.TokensFile, func(old []byte) ([]byte, error) {
						var f struct{ Tokens []server.Token }
						if err := json.Unmarshal(old, &f); err != nil {
							return nil, err
						}
						change(f.Tokens)
						return json.Marshal(map[string]any{"tokens": f.Tokens})
					}); err != nil {
						t.Fatal(err)
					}
				}
			}
			r := newConsoleReplica(t, env, cli)
			grant := func(csrf string) url.Values {
				return url.Values{"csrf": {csrf}, "principal": {"acme/planner"}, "capability": {"tools/fs:fs/delete_file"}, "level": {"destructive"}, "uses": {"1"}, "reason": {"clean the build tree once"}}
			}
			for _, tc := range []struct {
				name   string
				change func(tok server.Token)
			}{
				{"removed", func(tok server.Token) {
					if err := cli.Remove(ctx, tok.ID); err != nil {
						t.Fatal(err)
					}
				}},
				{"replaced by a new secret for the same agent", func(tok server.Token) {
					if err := cli.Remove(ctx, tok.ID); err != nil {
						t.Fatal(err)
					}
					if _, _, err := cli.Add(ctx, alice, time.Now()); err != nil {
						t.Fatal(err)
					}
				}},
				{"its secret changed in place", func(tok server.Token) {
					edit(func(toks []server.Token) {
						for i := range toks {
							if toks[i].ID == tok.ID {
								toks[i].SHA256 = "0000000000000000000000000000000000000000000000000000000000000000"
							}
						}
					})
				}},
				{"lowered to T1", func(tok server.Token) {
					edit(func(toks []server.Token) {
						for i := range toks {
							if toks[i].ID == tok.ID {
								toks[i].Tier = "T1"
							}
						}
					})
				}},
			} {
				secret, tok, err := cli.Add(ctx, alice, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				r.tokens.Reload(ctx) // as the store's notification makes a replica do
				b := newBrowser(t, r.url)
				csrf := b.signIn(secret)
				// A second operator, whose token stays.
				other, _, err := cli.Add(ctx, capability.Principal{Tenant: "ops", Agent: "bob", Tier: skill.T0}, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				r.tokens.Reload(ctx)
				ob := newBrowser(t, r.url)
				ocsrf := ob.signIn(other)

				tc.change(tok)
				if status, loc, body := b.do("/admin/grants", nil); status != http.StatusSeeOther || loc != "/admin/login?ended=token&next=%2Fadmin%2Fgrants" {
					t.Errorf("%s: the next page: %d %s; want 303 to the sign-in form\n%s", tc.name, status, loc, body)
				}
				if status, _, body := b.do("/admin/login?ended=token", nil); status != http.StatusOK ||
					!regexp.MustCompile(`Your session ended: the token it was signed in with was removed or changed\. Sign in again with a current T0 token\.`).MatchString(body) {
					t.Errorf("%s: sign-in form: %d\n%s", tc.name, status, body)
				}
				if status, loc, body := b.do("/admin/grants", grant(csrf)); status != http.StatusSeeOther || loc != "/admin/login?expired=1" {
					t.Errorf("%s: adding a grant: %d %s; want 303 to the sign-in form\n%s", tc.name, status, loc, body)
				}
				if gs := r.eng.Grants(); len(gs) != 0 {
					t.Fatalf("%s: a grant was added: %+v", tc.name, gs)
				}
				// The other operator's session goes on.
				if status, loc, _ := ob.do("/admin/grants", grant(ocsrf)); status != http.StatusSeeOther || loc == "/admin/login?expired=1" {
					t.Errorf("%s: the other operator adds a grant: %d %s", tc.name, status, loc)
				}
				for _, g := range r.eng.Grants() {
					if err := r.eng.RevokeGrant(ctx, g.ID, "test"); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}
