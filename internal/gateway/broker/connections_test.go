package broker_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
	"github.com/skillgate/skillgate/internal/testkit/remotemcp"
	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// connFixture is an authorization server and a remote MCP server
// requiring its tokens on loopback, a credential store where tenant acme
// holds two accounts of the provider remote (work: alice, the default;
// personal: bob), and the skill declaring the server as users do (a URL,
// no headers), introspected with acme's connection and approved.
type connFixture struct {
	as       *oauthserver.Server
	rs       *remotemcp.Server
	store    *credential.Store
	skill    broker.Skill
	connect  func(k credential.ConnectionKey, subject string)
	work     credential.ConnectionKey
	personal credential.ConnectionKey
}

func newConnFixture(t testing.TB) *connFixture { return newConnFixtureLife(t, time.Hour) }

// newConnFixtureLife is newConnFixture with access tokens living lifetime.
func newConnFixtureLife(t testing.TB, lifetime time.Duration) *connFixture {
	t.Helper()
	ctx := t.Context()
	as := oauthserver.New(t, &oauthserver.Options{AccessTokenLifetime: lifetime, Scopes: []string{"tools"}})
	rs := remotemcp.New(t, &remotemcp.Options{AuthServer: as, Scopes: []string{"tools"}, RequireScopes: true})
	client := oauth.New(&oauth.Options{AllowPrivateNetworks: true, AllowInsecureHTTP: true, Timeout: 5 * time.Second})
	store, err := credential.Open(ctx, t.TempDir(), credential.Options{})
	if err != nil {
		t.Fatal(err)
	}
	conn := connection.NewConnector(client, store, nil)
	connect := func(k credential.ConnectionKey, subject string) {
		t.Helper()
		st, err := conn.Start(ctx, connection.ConnectRequest{Key: k, ServerURL: rs.URL, RedirectURI: "http://127.0.0.1:9/callback"})
		if err != nil {
			t.Fatal(err)
		}
		cb, err := as.Authorize(ctx, http.DefaultClient, st.URL, subject)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Complete(ctx, cb.Query()); err != nil {
			t.Fatal(err)
		}
	}
	acme := credential.Scope{Tenant: "acme"}
	work := credential.ConnectionKey{Scope: acme, Provider: "remote", Account: "work"}
	personal := credential.ConnectionKey{Scope: acme, Provider: "remote", Account: "personal"}
	connect(work, "alice")
	connect(personal, "bob")

	// The skill's server, as its mcp.json declares it: a URL, no headers.
	decl := mcpclient.ServerDecl{ID: "remote", Transport: capability.TransportHTTP, URL: rs.URL}
	c, err := store.Connection(ctx, work)
	if err != nil {
		t.Fatal(err)
	}
	skill := remoteSkill(t, decl, c.OAuth.AccessToken)

	return &connFixture{as: as, rs: rs, store: store, skill: skill, connect: connect, work: work, personal: personal}
}

// remoteSkill is the skill "remote" declaring the remote server d,
// introspected with token (sent as a connection's bearer or as the
// secret REMOTE_TOKEN a declared header references) and every tool
// approved as a read without side effects, as an install would.
func remoteSkill(t testing.TB, d mcpclient.ServerDecl, token string) broker.Skill {
	t.Helper()
	rep, err := mcpclient.Introspect(t.Context(), d, &mcpclient.Options{Limits: limits(), Credentials: func(n string) (string, bool) {
		return token, n == mcpclient.BearerCredential || n == "REMOTE_TOKEN"
	}})
	if err != nil {
		t.Fatal(err)
	}
	m := &manifest.Manifest{SkillID: "remote", Version: "sha256:r", Providers: []manifest.Provider{{ServerID: "remote"}}}
	for _, rc := range rep.Capabilities {
		m.Capabilities = append(m.Capabilities, manifest.Capability{ExtensionID: "remote", CapabilityID: rc.CapabilityID, Risk: capability.Risk{
			RiskLevel:   capability.RiskField[capability.RiskLevel]{Value: capability.RiskRead, Source: capability.SourceOperator, Basis: "test"},
			SideEffects: capability.RiskField[capability.SideEffects]{Value: capability.SideEffectsNone, Source: capability.SourceOperator, Basis: "test"},
			DataEgress:  capability.RiskField[capability.DataEgress]{Value: capability.EgressNone, Source: capability.SourceOperator, Basis: "test"},
		}})
	}
	return broker.Skill{Key: "remote", Digest: "sha256:r", Servers: map[string]mcpclient.ServerDecl{"remote": d},
		Pins: map[string]capability.PinSet{"remote": rep.Pins}, Manifest: m, Tier: 2, InvokableBy: []string{"T1", "T2", "T3"}}
}

// connBroker is a broker over skill alone, reloaded, whose pool (opened
// with popts) takes its credentials, secrets and connections, from store,
// as do its executors; opts gives the rest (decider, audit, catalog).
func connBroker(tb testing.TB, store *credential.Store, skill broker.Skill, opts broker.Options, popts mcpclient.PoolOptions) *broker.Broker {
	tb.Helper()
	popts.Limits, popts.CredentialSource = limits(), store
	pool := mcpclient.NewPool(popts)
	tb.Cleanup(func() { pool.Close() })
	opts.Load = func(context.Context) ([]broker.Skill, error) { return []broker.Skill{skill}, nil }
	opts.Upstream, opts.Executors.Connections = pool, store
	b, err := broker.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.Reload(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestConnectionsBroker: a remote server behind OAuth, reached through
// each tenant's connection. acme (two accounts of the provider) calls it
// with its default account's token; beta, without a connection, neither
// sees the tool nor calls it ("connection required"); Cedar sees the
// account and forbids one to an agent; the audit record names the
// account; an expired connection makes the tool dormant for acme alone,
// and reconnecting wakes it.
func TestConnectionsBroker(t *testing.T) {
	ctx := t.Context()
	f := newConnFixture(t)
	store, skill, connect, work, personal := f.store, f.skill, f.connect, f.work, f.personal
	dir := t.TempDir()
	cedar := "@id(\"permit-all\")\npermit (principal, action, resource);\n\n@id(\"no-work-for-intern\")\nforbid (principal, action, resource) when { principal.agent == \"intern\" && context has account && context.account == \"work\" };\n"
	if err := os.WriteFile(filepath.Join(dir, "base.cedar"), []byte(cedar), 0o600); err != nil {
		t.Fatal(err)
	}
	eng := policy.New(&policy.Options{PolicyDir: dir})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	recs := &records{}
	b := connBroker(t, store, skill, broker.Options{Decider: broker.NewPolicyDecider(eng), Audit: recs}, mcpclient.PoolOptions{})
	drafter := capability.Principal{Tenant: "acme", Agent: "drafter", Tier: "T2"}
	intern := capability.Principal{Tenant: "acme", Agent: "intern", Tier: "T2"}
	outsider := capability.Principal{Tenant: "beta", Agent: "drafter", Tier: "T2"}
	whoami := func(p capability.Principal) (string, bool) {
		t.Helper()
		res, err := call(b, ctx, gatewayCaller(p), "whoami", json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			return textOf(res), false
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var w remotemcp.Whoami
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatal(err)
		}
		return w.Subject, true
	}
	dataOf := func() map[string]any {
		var d map[string]any
		_ = json.Unmarshal(recs.last().Data, &d)
		return d
	}

	if got := toolNames(t, b, drafter); strings.Join(got, ",") != "whoami" {
		t.Fatalf("acme's tools: %v", got)
	}
	if got := toolNames(t, b, outsider); len(got) != 0 {
		t.Fatalf("beta sees %v without a connection", got)
	}
	// Unlisted for beta, whoami lacks only a connection: the gateway
	// relays beta's call of it, which says which one.
	if !b.ConnectionRequired(outsider, "whoami") || b.ConnectionRequired(drafter, "whoami") || b.ConnectionRequired(outsider, "nope") {
		t.Fatal("ConnectionRequired: want true for beta's whoami only")
	}
	if got, ok := whoami(drafter); !ok || got != "alice" {
		t.Fatalf("acme's call: %q %v", got, ok)
	}
	if d, _ := dataOf()["connection"].(map[string]any); d["account"] != "work" || d["provider"] != "remote" || d["tenant"] != "acme" {
		t.Fatalf("audit data %v: want account work", d)
	}
	const beta = "skillgate: connection required: remote for tenant beta (no account is connected; an operator connects one with skillgate connect remote --tenant beta)"
	if got, ok := whoami(outsider); ok || got != beta {
		t.Fatalf("beta's call: %q\nwant %q", got, beta)
	}
	if r := recs.last(); r.Decision != capability.Deny || !strings.HasPrefix(strings.Join(r.Reasons, ";"), "connection required: remote for tenant beta") {
		t.Fatalf("beta's record: %+v", r)
	}
	if got, ok := whoami(intern); ok || !strings.Contains(got, "no-work-for-intern") && !strings.Contains(got, "forbid") {
		t.Fatalf("intern with the work account: %q %v", got, ok)
	}

	// The default moves to personal: acme's calls carry bob's token; the
	// intern may call again.
	if err := store.SetDefaultConnection(ctx, personal); err != nil {
		t.Fatal(err)
	}
	if got, ok := whoami(drafter); !ok || got != "bob" {
		t.Fatalf("after the default moved: %q %v", got, ok)
	}
	if got, ok := whoami(intern); !ok || got != "bob" {
		t.Fatalf("intern with the personal account: %q %v", got, ok)
	}

	// Expired: dormant for acme; beta unchanged; reconnecting wakes it.
	if err := store.MarkConnection(ctx, personal, credential.StateExpired, "invalid_grant"); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, b, drafter); len(got) != 0 {
		t.Fatalf("acme still sees %v with its default account expired", got)
	}
	if !b.ConnectionRequired(drafter, "whoami") {
		t.Fatal("ConnectionRequired: false for acme's whoami with its account expired")
	}
	const expired = "skillgate: connection required: remote for tenant acme (account personal is expired; an operator reconnects it with skillgate connect remote --tenant acme --account personal)"
	if got, ok := whoami(drafter); ok || got != expired {
		t.Fatalf("acme's call with its connection expired: %q\nwant %q", got, expired)
	}
	connect(personal, "bob")
	if got, ok := whoami(drafter); !ok || got != "bob" {
		t.Fatalf("after reconnecting: %q %v", got, ok)
	}
	// What pending shows: beta still lacks a connection; acme connected
	// again since its refusal.
	db := openStore(t)
	if _, err := audit.NewLog(db).Append(ctx, recs.all...); err != nil {
		t.Fatal(err)
	}
	reqs, err := broker.ConnectionRequests(ctx, audit.NewLog(db), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[0].Tenant != "beta" || reqs[0].Provider != "remote" || reqs[0].Times != 1 || reqs[0].Connect != "skillgate connect remote --tenant beta" {
		t.Fatalf("connection requests: %+v", reqs)
	}
	for _, r := range recs.all {
		for _, k := range []credential.ConnectionKey{work, personal} {
			cc, _ := store.Connection(ctx, k)
			if tok := cc.OAuth.AccessToken; strings.Contains(string(r.Data)+strings.Join(r.Reasons, ";"), tok) {
				t.Fatalf("a token is in the audit record %+v", r)
			}
		}
	}
}

// TestConnectionsExecutorAccount: an executor served by the remote
// server takes the account argument: left out, the default account's
// token is sent; pinned, that account's; an account not connected is
// refused with "connection required", and a tenant without a connection
// gets the same for the dormant executor, not "unknown tool".
func TestConnectionsExecutorAccount(t *testing.T) {
	ctx := t.Context()
	f := newConnFixture(t)
	cat, err := executor.ParseCatalog("identity.yaml", []byte(`apiVersion: skillgate.dev/v1
kind: ExecutorCatalog
providers:
  - name: remote
    suffix: _remote
    description: the remote test service
executors:
  - name: read_identity
    description: Say who the caller is at the service.
    inputSchema:
      type: object
      properties:
        note: {type: string, description: A note the service echoes.}
`))
	if err != nil {
		t.Fatal(err)
	}
	skill := f.skill
	skill.Backends = []byte("apiVersion: skillgate.dev/v1\nkind: Backends\nprovider: remote\nbackends:\n  - executor: read_identity\n    server: remote\n    tool: whoami\n    arguments:\n      note: args.?note\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "base.cedar"), []byte("@id(\"permit-all\")\npermit (principal, action, resource);\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eng := policy.New(&policy.Options{PolicyDir: dir})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	recs := &records{}
	b := connBroker(t, f.store, skill, broker.Options{Decider: broker.NewPolicyDecider(eng), Audit: recs,
		Executors: broker.ExecutorOptions{Catalog: cat}}, mcpclient.PoolOptions{})
	if p := b.ExecutorProblems(); len(p) > 0 {
		t.Fatalf("backends refused: %v", p)
	}
	acme := capability.Principal{Tenant: "acme", Agent: "drafter", Tier: "T2"}
	beta := capability.Principal{Tenant: "beta", Agent: "drafter", Tier: "T2"}
	tools, err := b.Tools(ctx, acme)
	if err != nil || len(tools) != 1 || tools[0].Name != "read_identity" {
		t.Fatalf("acme's tools: %v %v", tools, err)
	}
	schema, _ := json.Marshal(tools[0].InputSchema)
	if !strings.Contains(string(schema), `"account":{"description":"Use this connected account`) {
		t.Fatalf("the tool takes no account argument: %s", schema)
	}
	for _, tc := range []struct {
		who  capability.Principal
		args string
		want string
	}{
		{acme, `{}`, "alice"},
		{acme, `{"account":"personal"}`, "bob"},
		{acme, `{"account":"work","provider":"remote"}`, "alice"},
		{acme, `{"account":"nope"}`, "skillgate: connection required: remote for tenant acme (account nope is not connected; an operator connects it with skillgate connect remote --tenant acme --account nope)"},
		{acme, `{"account":7}`, "skillgate: invalid arguments for read_identity: account must be the label of one of your connected accounts, like work"},
		{beta, `{}`, "skillgate: connection required: remote for tenant beta (no account is connected; an operator connects one with skillgate connect remote --tenant beta)"},
	} {
		res, err := call(b, ctx, gatewayCaller(tc.who), "read_identity", json.RawMessage(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		got := textOf(res)
		if !res.IsError {
			raw, _ := json.Marshal(res.StructuredContent)
			var w remotemcp.Whoami
			_ = json.Unmarshal(raw, &w)
			got = w.Subject
		}
		if got != tc.want {
			t.Errorf("%s %s: got %q\nwant %q", tc.who.Tenant, tc.args, got, tc.want)
		}
	}
}

// TestConnectionsRefreshAfter401: a grant whose expiry the authorization
// server never said is used until the remote server refuses it (401);
// then it is refreshed once and the call made again with the new token,
// without the agent noticing.
func TestConnectionsRefreshAfter401(t *testing.T) {
	ctx := t.Context()
	f := newConnFixtureLife(t, 2*time.Second)
	// As if the token response had no expires_in.
	if err := f.store.UpdateConnection(ctx, f.work, func(c *credential.Connection) (bool, error) {
		c.OAuth.Expiry = time.Time{}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	client := oauth.New(&oauth.Options{AllowPrivateNetworks: true, AllowInsecureHTTP: true, Timeout: 5 * time.Second})
	refresher := connection.New(f.store, client, nil)
	var refreshes atomic.Int64
	b := connBroker(t, f.store, f.skill, broker.Options{Decider: &listDecider{}, Audit: &records{}}, mcpclient.PoolOptions{
		Unauthorized: func(ctx context.Context, who capability.Principal, d mcpclient.ServerDecl, account, token string) bool {
			refreshes.Add(1)
			info, err := f.store.ResolveConnection(who, "remote", account)
			if err != nil {
				return false
			}
			_, err = refresher.Refresh(ctx, info.ConnectionKey, token)
			return err == nil
		}})
	admin := capability.Principal{Tenant: "acme", Agent: "ops", Tier: "T0"}
	whoami := func() string {
		t.Helper()
		res, err := call(b, ctx, gatewayCaller(admin), "whoami", json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			return textOf(res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var w remotemcp.Whoami
		_ = json.Unmarshal(raw, &w)
		return w.Subject
	}
	if got := whoami(); got != "alice" {
		t.Fatalf("first call: %q", got)
	}
	before := f.as.Stats().RefreshGrants
	time.Sleep(2500 * time.Millisecond) // the access token expires
	if got := whoami(); got != "alice" {
		t.Fatalf("call after the token expired: %q", got)
	}
	if n := f.as.Stats().RefreshGrants - before; n != 1 || refreshes.Load() != 1 {
		t.Fatalf("%d refreshes at the server, %d 401s: want 1 and 1", n, refreshes.Load())
	}
	if got := whoami(); got != "alice" {
		t.Fatalf("call with the refreshed token: %q", got)
	}
}
