package broker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// fakeInstalls is an install service of enabled skills held in memory;
// the runtime's tests change it as another process would change the
// store.
type fakeInstalls struct {
	mu     sync.Mutex
	gen    int64
	skills []install.Installed
	drift  []string
}

func (f *fakeInstalls) Enabled(context.Context) ([]install.Installed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.skills), nil
}

func (f *fakeInstalls) Generation(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen, nil
}

func (f *fakeInstalls) RecordDrift(_ context.Context, key, serverID string, _ capability.Drift, actor string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drift = append(f.drift, key+"/"+serverID+" by "+actor)
	return nil
}

// enable adds an enabled skill and moves the generation, as an enable
// committed by the CLI does.
func (f *fakeInstalls) enable(in install.Installed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.skills = append(f.skills, in)
	f.gen++
}

// installedFor is skillFor as the install service returns it: the
// approved manifest, the parsed mcp.json and the pins.
func installedFor(t testing.TB, key string) install.Installed {
	t.Helper()
	sk := skillFor(t, key)
	decl := sk.Servers["srv"]
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{"command": decl.Command, "env": decl.Env}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpclient.ParseConfig(doc)
	if err != nil {
		t.Fatal(err)
	}
	sk.Manifest.Providers = []manifest.Provider{{Type: "mcp", ServerID: "srv"}}
	return install.Installed{Key: key, Digest: sk.Digest, Tier: 2, InvokableBy: []string{"T0", "T1", "T2", "T3"},
		Manifest: sk.Manifest, Config: cfg, Pins: sk.Pins}
}

// notifier records what the runtime's watch tells the gateway.
type notifier struct {
	synced  chan struct{}
	changed chan struct{}
}

func newNotifier() *notifier {
	return &notifier{synced: make(chan struct{}, 100), changed: make(chan struct{}, 100)}
}

func (n *notifier) SyncRegistry(context.Context) (bool, error) {
	select {
	case n.synced <- struct{}{}:
	default:
	}
	return false, nil
}

func (n *notifier) CapabilitiesChanged(context.Context) error {
	n.changed <- struct{}{}
	return nil
}

// wait waits for the next signal on ch; the deadline is a failsafe for a
// hung test, not a timing assertion.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
	}
}

// openRuntime opens a runtime over a fresh store and policy directory and
// runs its watch until the test ends.
func openRuntime(t *testing.T, ins *fakeInstalls, n *notifier) (*broker.Runtime, string) {
	t.Helper()
	return openRuntimeWith(t, ins, n, broker.RuntimeOptions{})
}

// openRuntimeWith is openRuntime with more options (Installs, Store,
// PolicyDir and Limits are set here).
func openRuntimeWith(t *testing.T, ins *fakeInstalls, n *notifier, opts broker.RuntimeOptions) (*broker.Runtime, string) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "policies")
	opts.Installs, opts.Store, opts.PolicyDir, opts.Limits = ins, openStore(t), dir, limits()
	rt, err := broker.OpenRuntime(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rt.Watch(wctx, time.Millisecond, n)
	}()
	t.Cleanup(func() { cancel(); <-done })
	wait(t, n.synced, "first registry sync")
	return rt, dir
}

// toolNames lists the tools p sees.
func toolNames(t *testing.T, b *broker.Broker, p capability.Principal) []string {
	t.Helper()
	tools, err := b.Tools(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestRuntimeFollowsInstalls: a skill enabled by another process (the
// install generation moves) becomes callable without a restart, and the
// gateway is told its capabilities changed.
func TestRuntimeFollowsInstalls(t *testing.T) {
	ins := &fakeInstalls{}
	n := newNotifier()
	rt, _ := openRuntime(t, ins, n)
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"}
	if got := toolNames(t, rt.Broker, p); len(got) != 0 {
		t.Fatalf("tools before the install: %v", got)
	}
	ins.enable(installedFor(t, "tools/alpha"))
	wait(t, n.changed, "capability change after the install")
	if got, want := toolNames(t, rt.Broker, p), []string{"echo", "tools--alpha__read_file", "tools--alpha__write_file"}; !slices.Equal(got, want) {
		t.Fatalf("tools after the install: %v, want %v", got, want)
	}
	res, err := call(rt.Broker, context.Background(), gatewayCaller(p), "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
}

// TestRuntimeFollowsPolicies: a policy file written while the gateway
// runs takes effect at the next poll: the capabilities it forbids leave
// the agent's scope (no scope cache outlives the policies it was computed
// from), and the gateway is told.
func TestRuntimeFollowsPolicies(t *testing.T) {
	ins := &fakeInstalls{}
	ins.enable(installedFor(t, "tools/alpha"))
	n := newNotifier()
	rt, dir := openRuntime(t, ins, n)
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"}
	if got := toolNames(t, rt.Broker, p); len(got) != 3 {
		t.Fatalf("tools before the policy: %v", got)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cedar := "@id(\"permit-all\")\npermit (principal, action, resource);\n\n@id(\"no-a1\")\nforbid (principal, action, resource) when { principal.agent == \"a1\" };\n"
	if err := os.WriteFile(filepath.Join(dir, "base.cedar"), []byte(cedar), 0o600); err != nil {
		t.Fatal(err)
	}
	wait(t, n.changed, "capability change after the policy")
	if got := toolNames(t, rt.Broker, p); len(got) != 0 {
		t.Fatalf("tools after the policy: %v, want none", got)
	}
	other := capability.Principal{Tenant: "acme", Agent: "a2", Tier: "T1"}
	if got := toolNames(t, rt.Broker, other); len(got) != 3 {
		t.Fatalf("another agent's tools: %v", got)
	}
	res, err := call(rt.Broker, context.Background(), gatewayCaller(p), "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || !res.IsError {
		t.Fatalf("call after the forbid: %v %+v", err, res)
	}
}

// TestRuntimeRefresh: Refresh (what pin drift asks for) reloads the
// installed skills even when the install generation did not move, and
// the registry is polled on every round.
func TestRuntimeRefresh(t *testing.T) {
	ins := &fakeInstalls{}
	n := newNotifier()
	rt, _ := openRuntime(t, ins, n)
	wait(t, n.synced, "second registry sync")
	ins.mu.Lock()
	ins.skills = append(ins.skills, installedFor(t, "tools/alpha")) // generation unchanged
	ins.mu.Unlock()
	rt.Refresh()
	wait(t, n.changed, "capability change after Refresh")
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"}
	if got := toolNames(t, rt.Broker, p); len(got) != 3 {
		t.Fatalf("tools after Refresh: %v", got)
	}
}

// TestRuntimeClose: Close flushes the audit records of the calls made and
// closes the upstream connections; a call after it never reaches the
// server, and a second Close is harmless.
func TestRuntimeClose(t *testing.T) {
	ctx := context.Background()
	ins := &fakeInstalls{}
	ins.enable(installedFor(t, "tools/alpha"))
	db := openStore(t)
	rt, err := broker.OpenRuntime(ctx, broker.RuntimeOptions{Installs: ins, Store: db, PolicyDir: t.TempDir(), Limits: limits()})
	if err != nil {
		t.Fatal(err)
	}
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"}
	res, err := call(rt.Broker, ctx, gatewayCaller(p), "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := audit.NewLog(db).Query(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Subject != "tools/alpha:srv/echo" || recs[0].Decision != capability.Allow {
		t.Fatalf("audit after Close: %+v", recs)
	}
	res, err = call(rt.Broker, ctx, gatewayCaller(p), "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || !res.IsError {
		t.Fatalf("call after Close: %v %+v", err, res)
	}
	if txt := textOf(res); !strings.Contains(txt, "was allowed but never reached its server") {
		t.Fatalf("call after Close: %q", txt)
	}
	if err := rt.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// textOf returns the text of a one-text result.
func textOf(res *mcp.CallToolResult) string {
	if len(res.Content) != 1 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestRuntimeObserves: Observe sees each audit record of the capability
// path as it is queued, and Changed each change the watch applies.
func TestRuntimeObserves(t *testing.T) {
	var mu sync.Mutex
	var decisions, changes []string
	ins := &fakeInstalls{}
	ins.enable(installedFor(t, "tools/alpha"))
	n := newNotifier()
	rt, dir := openRuntimeWith(t, ins, n, broker.RuntimeOptions{
		Observe: func(r audit.Record) {
			mu.Lock()
			decisions = append(decisions, r.Action+" "+string(r.Decision))
			mu.Unlock()
		},
		Changed: func(what string) { mu.Lock(); changes = append(changes, what); mu.Unlock() },
	})
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cedar := "@id(\"no-a1\")\nforbid (principal, action, resource) when { principal.agent == \"a1\" };\n@id(\"all\")\npermit (principal, action, resource);\n"
	if err := os.WriteFile(filepath.Join(dir, "base.cedar"), []byte(cedar), 0o600); err != nil {
		t.Fatal(err)
	}
	wait(t, n.changed, "capability change after the policy")
	if _, err := call(rt.Broker, context.Background(), gatewayCaller(p), "echo", json.RawMessage(`{"text":"hi"}`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(changes, "policies") || !slices.Contains(decisions, "capability.invoke deny") {
		t.Fatalf("changes %v, decisions %v", changes, decisions)
	}
}
