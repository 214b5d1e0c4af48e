package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

func TestPolicyAPI(t *testing.T) {
	ctx := context.Background()
	env := mcpservertest.NewEnv(t, examples, nil, nil)
	tokPath := filepath.Join(t.TempDir(), server.TokensFile)
	tokens, err := server.OpenTokens(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Gateway: env.Gateway, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	eng := policy.New(&policy.Options{Store: db})
	if err := eng.SetCapabilities([]policy.Capability{{SkillKey: "tools/fs", SkillTrust: policy.TrustCore, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
		SkillState: policy.SkillEnabled, ExtensionID: "fs", CapabilityID: "delete_file", Enabled: true,
		RiskLevel: capability.RiskDestructive, SideEffects: capability.SideEffectsInternal, DataEgress: capability.EgressNone}}); err != nil {
		t.Fatal(err)
	}
	srv.MountPolicy(eng)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	token := func(tier skill.AgentTier) string {
		secret, _, err := server.AddToken(tokPath, capability.Principal{Tenant: "acme", Agent: "op-" + string(tier), Tier: tier}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	human, agent := token(skill.T0), token(skill.T3)
	do := func(method, path, tok, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	testBody := `{"principal":"Agent::\"acme/a\"","tier":"T3","capability":"tools/fs:fs/delete_file","args":{"path":"/tmp/x"}}`
	code, body := do("POST", "/v1/policy/test", human, testBody)
	if code != 200 || !strings.Contains(body, `"effect": "require_approval"`) {
		t.Fatalf("test: %d %s", code, body)
	}
	if code, body = do("POST", "/v1/grants", agent, `{}`); code != 403 || !strings.Contains(body, "forbidden: this needs a token of agent tier T0 (a human operator); this token is acme/op-T3@T3 (POST /v1/grants)") {
		t.Fatalf("agent adds grant: %d %s", code, body)
	}
	if code, body = do("POST", "/v1/grants", human, `{"principal":"acme/a","capability":"tools/fs:fs/delete_file","level":"destructive","uses":1,"expires":"1h","bogus":1}`); code != 400 || !strings.Contains(body, `unknown field \"bogus\"`) {
		t.Fatalf("unknown field: %d %s", code, body)
	}
	// The API takes capabilities with their skill only.
	if code, body = do("POST", "/v1/grants", human, `{"principal":"acme/a","capability":"fs/delete_file","level":"destructive"}`); code != 400 || !strings.Contains(body, `invalid grant: capability \"fs/delete_file\" does not name its skill`) {
		t.Fatalf("short form: %d %s", code, body)
	}
	if code, body = do("POST", "/v1/policy/test", human, `{"principal":"acme/a","capability":"fs/delete_file"}`); code != 400 || !strings.Contains(body, `does not name its skill`) {
		t.Fatalf("short form in policy test: %d %s", code, body)
	}
	if code, body = do("POST", "/v1/grants", human, `{"principal":"acme/a","capability":"tools/fs:fs/delete_file","level":"root"}`); code != 400 || !strings.Contains(body, `invalid grant: level \"root\"`) {
		t.Fatalf("bad level: %d %s", code, body)
	}
	// A capability no installed skill offers: refused with the closest
	// one, as by grant add (Engine.AddGrant for both).
	if code, body = do("POST", "/v1/grants", human, `{"principal":"acme/a","capability":"tools/fs:fs/delete_fil","level":"destructive"}`); code != 400 ||
		!strings.Contains(body, `invalid grant: capability tools/fs:fs/delete_fil: no installed skill offers it; did you mean tools/fs:fs/delete_file? (skillgate review SKILL lists what a skill offers)`) {
		t.Fatalf("unoffered capability: %d %s", code, body)
	}
	code, body = do("POST", "/v1/grants", human, `{"principal":"acme/a","capability":"tools/fs:fs/delete_file","level":"destructive","uses":1,"expires":"1h","reason":"cleanup"}`)
	var g policy.Grant
	if err := json.Unmarshal([]byte(body), &g); code != 200 || err != nil || g.CreatedBy != "operator:acme/op-T0@T0" || g.Uses != 1 || g.ExpiresAt == nil {
		t.Fatalf("add: %d %s", code, body)
	}
	// The body is the CLI's --json output: indented, one trailing newline.
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(g)
	if body != want.String() {
		t.Fatalf("body is not the CLI's JSON:\n%s\nwant\n%s", body, want.String())
	}
	if d := eng.Evaluate(ctx, capability.Principal{Tenant: "acme", Agent: "a", Tier: "T3"}, capability.Ref{Skill: "tools/fs", ExtensionID: "fs", CapabilityID: "delete_file"}, nil); d.Effect != capability.Allow {
		t.Fatalf("grant not effective at once: %+v", d)
	}
	code, body = do("GET", "/v1/grants", agent, "")
	if code != 403 {
		t.Fatalf("T3 lists grants: %d %s", code, body)
	}
	code, body = do("GET", "/v1/grants", human, "")
	var gs []policy.Grant
	if err := json.Unmarshal([]byte(body), &gs); code != 200 || err != nil || len(gs) != 1 || gs[0].Used != 1 {
		t.Fatalf("list: %d %s", code, body)
	}
	if code, body = do("DELETE", "/v1/grants/"+g.ID, human, ""); code != 200 || body != "{\n  \"revoked\": \""+g.ID+"\"\n}\n" {
		t.Fatalf("revoke: %d %q", code, body)
	}
	if code, body = do("DELETE", "/v1/grants/"+g.ID, human, ""); code != 404 || !strings.Contains(body, "grant not found") {
		t.Fatalf("revoke again: %d %s", code, body)
	}
	// Adding and revoking are in the audit log, by the calling operator;
	// refused requests change nothing and record nothing.
	rs, err := audit.NewLog(db).Query(ctx, audit.Filter{Action: "grant."})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%s %s %s %v %s", r.Action, r.Actor, r.Subject, r.Reasons, r.Data))
	}
	wantAudit := []string{
		fmt.Sprintf(`grant.add operator:acme/op-T0@T0 tools/fs:fs/delete_file [cleanup] {"expires_at":%q,"grant":%q,"level":"destructive","principal":"acme/a","uses":1}`, g.ExpiresAt.Format(time.RFC3339), g.ID),
		fmt.Sprintf(`grant.revoke operator:acme/op-T0@T0 tools/fs:fs/delete_file [revoked] {"grant":%q,"principal":"acme/a"}`, g.ID),
	}
	if strings.Join(got, "\n") != strings.Join(wantAudit, "\n") {
		t.Fatalf("audit records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantAudit, "\n"))
	}
	if code, body = do("POST", "/v1/policy/test", human, `{"principal":"acme/a","capability":"fs"}`); code != 400 || !strings.Contains(body, "invalid capability") {
		t.Fatalf("bad capability: %d %s", code, body)
	}
	if code, _ = do("POST", "/v1/policy/test", "nope", testBody); code != 401 {
		t.Fatalf("no token: %d", code)
	}
}

// TestPrincipalsRefused: a principal with control characters, bidi
// formatting characters or empty '/' segments is refused by POST
// /v1/grants (as principal) and POST /v1/policy/test (as principal and
// parent) with Principal.Validate's message, and nothing is stored.
func TestPrincipalsRefused(t *testing.T) {
	o := newOpenAPIFixture(t)
	const capRef = "tools/fs:fs/delete_file"
	for _, tc := range []struct {
		principal string // as JSON string content
		want      string
	}{
		{`acme/x\u0000y`, `invalid principal: agent id "x\x00y" contains control characters or invalid UTF-8`},
		{`acme/x\u0007y`, `invalid principal: agent id "x\ay" contains control characters or invalid UTF-8`},
		{`acme/x\u001b[2Jy`, `invalid principal: agent id "x\x1b[2Jy" contains control characters or invalid UTF-8`},
		{`acme/x\ny`, `invalid principal: agent id "x\ny" contains control characters or invalid UTF-8`},
		{`acme/x\u007fy`, `invalid principal: agent id "x\x7fy" contains control characters or invalid UTF-8`},
		{`acme/x\u0085y`, `invalid principal: agent id "x\u0085y" contains control characters or invalid UTF-8`},
		{`acme/x\u202ey`, `invalid principal: agent id "x\u202ey" contains a bidirectional formatting character (U+202E)`},
		{`acme/x\u2066y`, `invalid principal: agent id "x\u2066y" contains a bidirectional formatting character (U+2066)`},
		{`ac\u0000me/x`, `invalid principal: tenant "ac\x00me" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{`acme//x`, `invalid principal: agent id "/x" has an empty segment: no '/' at its start or end, nor two in a row`},
		{`acme/x/`, `invalid principal: agent id "x/" has an empty segment: no '/' at its start or end, nor two in a row`},
		{`/x`, `invalid principal: tenant is empty`},
		{`acme/`, `invalid principal: agent id is empty; set --agent or SKILLGATE_AGENT`},
	} {
		errOf := func(method, path, body string) string {
			t.Helper()
			status, b := o.do(t, method, path, o.human, body)
			var e struct{ Error string }
			if err := json.Unmarshal(b, &e); status != http.StatusBadRequest || err != nil {
				t.Errorf("%s %s %s: %d %s; want 400", method, path, body, status, b)
			}
			return e.Error
		}
		if got, want := errOf("POST", "/v1/grants", `{"principal":"`+tc.principal+`","capability":"`+capRef+`","reason":"a reason"}`), "invalid grant: principal: "+tc.want; got != want {
			t.Errorf("grant for %s: %q\n want %q", tc.principal, got, want)
		}
		if got := errOf("POST", "/v1/policy/test", `{"principal":"`+tc.principal+`","tier":"T3","capability":"`+capRef+`"}`); got != tc.want {
			t.Errorf("policy test of %s: %q\n want %q", tc.principal, got, tc.want)
		}
		if got, want := errOf("POST", "/v1/policy/test", `{"principal":"acme/kid","tier":"T3","parent":"`+tc.principal+`","capability":"`+capRef+`"}`), strings.Replace(strings.Replace(tc.want, "tenant", "parent tenant", 1), "agent id", "parent agent id", 1); got != want {
			t.Errorf("policy test with parent %s: %q\n want %q", tc.principal, got, want)
		}
	}
	if status, b := o.do(t, "GET", "/v1/grants", o.human, ""); status != 200 || string(b) != "[]\n" {
		t.Errorf("grants after refusals: %d %s; want none", status, b)
	}
}
