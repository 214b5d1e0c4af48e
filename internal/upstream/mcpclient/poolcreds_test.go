package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// memCredentials is a credential source in memory: tenant → name → value.
type memCredentials struct {
	mu  sync.Mutex
	m   map[string]map[string]string
	gen atomic.Uint64
}

func (c *memCredentials) Resolve(p capability.Principal, name string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[p.Tenant][name]
	return v, ok
}

func (c *memCredentials) Generation() uint64 { return c.gen.Load() }

func (c *memCredentials) set(tenant, name, value string) {
	c.mu.Lock()
	if c.m[tenant] == nil {
		c.m[tenant] = map[string]string{}
	}
	if value == "" {
		delete(c.m[tenant], name)
	} else {
		c.m[tenant][name] = value
	}
	c.mu.Unlock()
	c.gen.Add(1)
}

// recorderTarget declares the recorder with TOKEN=${TOKEN}, reporting
// TOKEN, and pins its tools.
func recorderTarget(t *testing.T) mcpclient.Target {
	t.Helper()
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`{"tools":[{"name":"create_issue","inputSchema":{"type":"object"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := testDecl(t, "gh", testserver.ModeRecorder, map[string]string{
		testserver.EnvToolsFile: tools, testserver.EnvReportEnv: "TOKEN", "TOKEN": "${TOKEN}",
	})
	opts := testOptions(testLimits())
	opts.Credentials = func(string) (string, bool) { return "introspection", true }
	rep, err := mcpclient.Introspect(context.Background(), d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return mcpclient.Target{Skill: "tools/gh", Digest: "sha256:1", Server: d, Pins: rep.Pins}
}

// TestPoolPerCredentialSet: two tenants with different tokens never share
// an upstream process; principals whose credentials resolve alike do; a
// rotated token starts a new process and closes the old one; a missing
// token fails the call, before starting anything, naming the credential
// and the tenant.
func TestPoolPerCredentialSet(t *testing.T) {
	ctx := context.Background()
	tg := recorderTarget(t)
	creds := &memCredentials{m: map[string]map[string]string{}}
	creds.set("acme", "TOKEN", "acme-token")
	creds.set("globex", "TOKEN", "globex-token")
	creds.set("initech", "TOKEN", "acme-token") // same value as acme
	p := mcpclient.NewPool(mcpclient.PoolOptions{Limits: testLimits(), CredentialSource: creds})
	defer p.Close()

	as := func(tenant string) capability.Principal {
		return capability.Principal{Tenant: tenant, Agent: "drafter", Tier: "T3"}
	}
	record := func(tenant string) testserver.Recording {
		t.Helper()
		res, err := callRawAs(ctx, p, as(tenant), tg, "create_issue", `{}`)
		if err != nil {
			t.Fatalf("%s: %v", tenant, err)
		}
		var rec testserver.Recording
		if err := json.Unmarshal([]byte(rawText(t, res)), &rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	acme, globex, initech := record("acme"), record("globex"), record("initech")
	if acme.Env["TOKEN"] != "acme-token" || globex.Env["TOKEN"] != "globex-token" || initech.Env["TOKEN"] != "acme-token" {
		t.Fatalf("tokens seen: acme %q, globex %q, initech %q", acme.Env["TOKEN"], globex.Env["TOKEN"], initech.Env["TOKEN"])
	}
	if acme.PID == globex.PID {
		t.Fatal("acme and globex share one upstream process")
	}
	if acme.PID != initech.PID {
		t.Error("two tenants with the same token did not share the process")
	}
	if again := record("acme"); again.PID != acme.PID {
		t.Error("a second call of acme started another process")
	}
	if st := p.Stats(); len(st) != 2 || st[0].Target != "tools/gh@sha256:1/gh" || st[1].Target != "tools/gh@sha256:1/gh" {
		t.Fatalf("stats %+v", st)
	}

	// acme rotates its token: its next call reaches a new process with the
	// new token; initech keeps the old process; globex is untouched.
	creds.set("acme", "TOKEN", "acme-token-2")
	rotated := record("acme")
	if rotated.Env["TOKEN"] != "acme-token-2" || rotated.PID == acme.PID {
		t.Fatalf("after rotation acme got %q on pid %d (was %d)", rotated.Env["TOKEN"], rotated.PID, acme.PID)
	}
	if r := record("initech"); r.PID != initech.PID {
		t.Error("initech lost its process when acme rotated")
	}
	if r := record("globex"); r.PID != globex.PID {
		t.Error("globex lost its process when acme rotated")
	}
	// initech's token goes: the process it shared with old acme has no
	// principal left and is closed by Prune.
	creds.set("initech", "TOKEN", "")
	p.Prune()
	if st := p.Stats(); len(st) != 2 {
		t.Errorf("after prune %d connections, want 2 (acme's new, globex's): %+v", len(st), st)
	}
	_, err := callRawAs(ctx, p, as("initech"), tg, "create_issue", `{}`)
	const want = "missing credential: upstream tools/gh@sha256:1/gh needs TOKEN, which is not set for tenant initech (agent drafter); set it with: skillgate credential set TOKEN --tenant initech"
	if !errors.Is(err, mcpclient.ErrMissingCredential) || !errors.Is(err, mcpclient.ErrNotSent) || err.Error() != want {
		t.Fatalf("call without the token = %v\nwant %s", err, want)
	}
	if got := p.Missing(as("initech"), tg); len(got) != 1 || got[0] != "TOKEN" {
		t.Errorf("Missing(initech) = %v", got)
	}
	if got := p.Missing(as("globex"), tg); len(got) != 0 {
		t.Errorf("Missing(globex) = %v", got)
	}
	if st := p.Stats(); len(st) != 2 || strings.Contains(st[0].LastErr+st[1].LastErr, "token") {
		t.Errorf("stats %+v", st)
	}
}

// TestPoolScrubsPrincipalsCredentials: a server that prints the token it
// was started with for one tenant gets it into no error and no pool stat.
func TestPoolScrubsPrincipalsCredentials(t *testing.T) {
	const secret = "acme-S3CRET-0123456789"
	creds := &memCredentials{m: map[string]map[string]string{}}
	creds.set("acme", "API_TOKEN", secret)
	p := mcpclient.NewPool(mcpclient.PoolOptions{Limits: testLimits(), CredentialSource: creds})
	defer p.Close()
	tg := mcpclient.Target{Skill: "tools/leaky", Digest: "sha256:1",
		Server: testDecl(t, "s", testserver.ModeExit, map[string]string{testserver.EnvError: "token=${API_TOKEN}", "API_TOKEN": "${API_TOKEN}"})}
	_, err := callRawAs(context.Background(), p, capability.Principal{Tenant: "acme", Agent: "a", Tier: "T3"}, tg, "echo", `{}`)
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "token=[redacted:API_TOKEN]") {
		t.Fatalf("error %v", err)
	}
	for _, st := range p.Stats() {
		if strings.Contains(st.LastErr, secret) {
			t.Errorf("stat %+v", st)
		}
	}
}
