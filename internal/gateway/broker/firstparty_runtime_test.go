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

	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// movingEntries is a FirstPartySource whose entries a test changes, with
// a notifier that reports a registry change once after each.
type movingEntries struct {
	mu      sync.Mutex
	es      entries
	changed bool
}

func (m *movingEntries) List(ctx context.Context, q registry.Query) ([]registry.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.es.List(ctx, q)
}

func (m *movingEntries) set(es ...registry.Entry) {
	m.mu.Lock()
	m.es, m.changed = es, true
	m.mu.Unlock()
}

type registryNotifier struct {
	*notifier
	src *movingEntries
}

func (n registryNotifier) SyncRegistry(ctx context.Context) (bool, error) {
	n.src.mu.Lock()
	changed := n.src.changed
	n.src.changed = false
	n.src.mu.Unlock()
	_, _ = n.notifier.SyncRegistry(ctx)
	return changed, nil
}

// TestRuntimeFollowsFirstParty: a first_party skill scanned while the
// gateway runs (the registry changes) is served at once from its shipped
// manifest, without an approval or pins, and its calls reach its server;
// a skill whose credential is missing stays dormant.
func TestRuntimeFollowsFirstParty(t *testing.T) {
	exe, _ := os.Executable()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{"command": exe, "env": serverEnv()}}})
	dormantCfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{"command": exe,
		"env": map[string]string{"SKILLGATE_TESTSERVER": "files", "TOKEN": "${ECHO_TOKEN}"}}}})
	man := func(key string) string {
		return `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"` + key + `","version":"sha256:00",` +
			`"providers":[{"type":"mcp","serverId":"srv"}],"capabilities":[{"extensionId":"srv","capabilityId":"echo","toolName":"` + key + `_echo","description":"Echo text.",` +
			`"inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},` +
			`"risk":{"riskLevel":{"value":"read","source":"operator"},"sideEffects":{"value":"none","source":"operator"},"dataEgress":{"value":"none","source":"operator"}}}]}`
	}
	shipped := firstParty(t, "shipped", map[string]string{"manifest.json": man("shipped"), "mcp.json": string(cfg)})
	dormant := firstParty(t, "asleep", map[string]string{"manifest.json": man("asleep"), "mcp.json": string(dormantCfg)})

	src := &movingEntries{}
	n := registryNotifier{newNotifier(), src}
	ctx := context.Background()
	rt, err := broker.OpenRuntime(ctx, broker.RuntimeOptions{Installs: &fakeInstalls{}, Store: openStore(t), PolicyDir: filepath.Join(t.TempDir(), "p"),
		Limits: limits(), FirstParty: src, Credentials: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); rt.Watch(wctx, 1e6, n) }()
	t.Cleanup(func() { cancel(); <-done })
	wait(t, n.synced, "first registry sync")

	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T3"}
	if got := toolNames(t, rt.Broker, p); len(got) != 0 {
		t.Fatalf("tools before the scan: %v", got)
	}
	src.set(shipped, dormant)
	wait(t, n.changed, "capability change after the scan")
	if got, want := toolNames(t, rt.Broker, p), []string{"shipped_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools after the scan: %v, want %v", got, want)
	}
	tools, _ := rt.Broker.Tools(ctx, p)
	if tools[0].Description != "Echo text." {
		t.Errorf("the tool is not described as shipped: %+v", tools[0])
	}
	res, err := call(rt.Broker, ctx, gatewayCaller(p), "shipped_echo", json.RawMessage(`{"text":"hola"}`))
	if err != nil || res.IsError || !strings.Contains(string(mustJSON(t, res)), "hola") {
		t.Fatalf("call: %v %s", err, mustJSON(t, res))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServerStartChecksContent: a server starts only from the files that
// were scanned (or approved): a skill changed by one byte since is not
// started, its calls never reach a server, and the refusal is audited.
func TestServerStartChecksContent(t *testing.T) {
	exe, _ := os.Executable()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{"command": exe, "env": serverEnv()}}})
	man := `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"shipped","version":"sha256:00",` +
		`"providers":[{"type":"mcp","serverId":"srv"}],"capabilities":[{"extensionId":"srv","capabilityId":"echo","toolName":"shipped_echo","description":"Echo text.",` +
		`"inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},` +
		`"risk":{"riskLevel":{"value":"read","source":"operator"},"sideEffects":{"value":"none","source":"operator"},"dataEgress":{"value":"none","source":"operator"}}}]}`
	shipped := firstParty(t, "shipped", map[string]string{"manifest.json": man, "mcp.json": string(cfg), "notes.md": "Use echo.\n"})
	// One byte changes after the scan recorded the digest.
	if err := os.WriteFile(filepath.Join(shipped.Dir, "notes.md"), []byte("Use echO.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := &movingEntries{}
	src.set(shipped)
	n := registryNotifier{newNotifier(), src}
	ctx := context.Background()
	st := openStore(t)
	rt, err := broker.OpenRuntime(ctx, broker.RuntimeOptions{Installs: &fakeInstalls{}, Store: st, PolicyDir: filepath.Join(t.TempDir(), "p"),
		Limits: limits(), FirstParty: src, Credentials: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); rt.Watch(wctx, 1e6, n) }()
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T3"}
	wait(t, n.synced, "first registry sync")
	res, err := call(rt.Broker, ctx, gatewayCaller(p), "shipped_echo", json.RawMessage(`{"text":"hola"}`))
	cancel()
	<-done
	if err != nil || !res.IsError || !strings.Contains(string(mustJSON(t, res)), "never reached its server") ||
		!strings.Contains(string(mustJSON(t, res)), "the files of shipped no longer hash to the approved "+shipped.Digest) {
		t.Fatalf("call of a changed skill: %v %s", err, mustJSON(t, res))
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := st.AuditRecords(ctx, store.AuditFilter{Action: "capability.server.start"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Subject != "shipped:srv" || recs[0].Decision != capability.Deny ||
		!strings.HasPrefix(recs[0].Reasons[0], "content changed since approval: the files of shipped no longer hash to the approved "+shipped.Digest) {
		t.Fatalf("audit records: %+v", recs)
	}
}
