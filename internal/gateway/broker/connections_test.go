package broker_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/manifest"
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

// TestConnectionsBroker: a remote server behind OAuth, reached through
// each tenant's connection. acme (two accounts of the provider) calls it
// with its default account's token; beta, without a connection, neither
// sees the tool nor calls it ("connection required"); Cedar sees the
// account and forbids one to an agent; the audit record names the
// account; an expired connection makes the tool dormant for acme alone,
// and reconnecting wakes it.
func TestConnectionsBroker(t *testing.T) {
	ctx := t.Context()
	as := oauthserver.New(t, &oauthserver.Options{AccessTokenLifetime: time.Hour, Scopes: []string{"tools"}})
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
	rep, err := mcpclient.Introspect(ctx, decl, &mcpclient.Options{Limits: limits(), Credentials: func(n string) (string, bool) {
		return c.OAuth.AccessToken, n == mcpclient.BearerCredential
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
	skill := broker.Skill{Key: "remote", Digest: "sha256:r", Servers: map[string]mcpclient.ServerDecl{"remote": decl},
		Pins: map[string]capability.PinSet{"remote": rep.Pins}, Manifest: m, Tier: 2, InvokableBy: []string{"T1", "T2", "T3"}}

	dir := t.TempDir()
	cedar := "@id(\"permit-all\")\npermit (principal, action, resource);\n\n@id(\"no-work-for-intern\")\nforbid (principal, action, resource) when { principal.agent == \"intern\" && context has account && context.account == \"work\" };\n"
	if err := os.WriteFile(filepath.Join(dir, "base.cedar"), []byte(cedar), 0o600); err != nil {
		t.Fatal(err)
	}
	eng := policy.New(&policy.Options{PolicyDir: dir})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits(), CredentialSource: store})
	t.Cleanup(func() { pool.Close() })
	recs := &records{}
	b, err := broker.New(broker.Options{
		Load:    func(context.Context) ([]broker.Skill, error) { return []broker.Skill{skill}, nil },
		Decider: broker.NewPolicyDecider(eng), Upstream: pool, Audit: recs,
		Executors: broker.ExecutorOptions{Connections: store},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
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
