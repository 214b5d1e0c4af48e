package change_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// shippedRoot stands in for the registry's first_party skills.
type shippedRoot []registry.Entry

// List implements broker.FirstPartySource.
func (r shippedRoot) List(context.Context, registry.Query) ([]registry.Entry, error) { return r, nil }

// shippedSkill writes a first_party skill key whose server (id server)
// offers one tool, name with inputSchema schema, described by its shipped
// manifest.json; backends, when not "", is its backends.yaml. The server
// lists the tool with listed as its inputSchema (schema when "").
func shippedSkill(t *testing.T, key, server, name, schema, backends, listed string) registry.Entry {
	t.Helper()
	dir := filepath.Join(t.TempDir(), key)
	os.MkdirAll(dir, 0o755)
	if listed == "" {
		listed = schema
	}
	result := `{"tools":[{"name":"` + name + `","description":"Shipped.","inputSchema":` + listed + `}]}`
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{server: map[string]any{"command": testServer,
		"env": map[string]string{testserver.EnvMode: testserver.ModeRaw, testserver.EnvResult: result}}}})
	man := `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"` + key + `","version":"sha256:` + strings.Repeat("0", 64) + `",` +
		`"providers":[{"type":"mcp","serverId":"` + server + `"}],` +
		`"capabilities":[{"extensionId":"` + server + `","capabilityId":"` + name + `","description":"Shipped ` + name + `.","inputSchema":` + schema + `,` +
		`"risk":{"riskLevel":{"value":"write","source":"operator"},"sideEffects":{"value":"external","source":"operator"},"dataEgress":{"value":"network","source":"operator"}}}]}`
	files := map[string]string{"SKILL.md": "---\nname: " + key + "\ndescription: Shipped.\n---\nUse it.\n", "mcp.json": string(cfg), "manifest.json": man}
	if backends != "" {
		files["backends.yaml"] = backends
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return registry.Entry{Version: store.Version{Key: key, Name: key, Dir: dir, Trust: "first_party", Tier: 2,
		InvokableBy: []string{"T0", "T1", "T2", "T3"}, Valid: true, Enabled: true, Current: true}}
}

// newTierEnv is newEnv with the first_party skills of root beside the
// installs, as the application wires them.
func newTierEnv(t *testing.T, root shippedRoot) *env {
	t.Helper()
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc, err := install.New(install.Options{Store: db, Root: filepath.Join(data, "imported"), Changes: db, Shipped: broker.ShippedProviders(root),
		MCP: mcpclient.Options{InheritEnv: []string{"PATH", "HOME", "TMPDIR", "GORACE"}}})
	if err != nil {
		t.Fatal(err)
	}
	load := broker.LoadAll(broker.LoadFirstParty(root, nil), broker.LoadInstalled(svc))
	cs, err := change.New(change.Options{Store: db, Installs: svc, Smoke: broker.Smoke(load, broker.ExecutorOptions{Registered: db.Registrations})})
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, svc: svc, changes: cs}
}

// TestPromoteAcrossTrustTiers: a first_party provider skill (served from
// its root, no install) and an imported one offering the same action queue
// one promote_provider change, whether the first_party side is a raw
// provider-suffixed tool or already an executor through its backends.yaml;
// applying it registers the backends, and the executor lists both
// providers with each pinned call resolving to its own.
func TestPromoteAcrossTrustTiers(t *testing.T) {
	ann := `"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true}`
	issues := `{"type":"object","properties":{"query":{"type":"string"},"state":{"type":"string"}},"required":["query"]}`
	ghCreate := `{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"}},"required":["owner","repo","title"]}`
	glCreate := `{"type":"object","properties":{"repository":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"}},"required":["repository","title"]}`
	hubBackends := "apiVersion: skillgate.dev/v1\nkind: Backends\nprovider: github\nbackends:\n  - executor: create_issue\n    server: github\n    tool: create_issue\n" +
		"    arguments:\n      owner: args.repository.split(\"/\")[0]\n      repo: args.repository.split(\"/\")[1]\n      title: args.title\n      body: args.?body\n"
	for _, tc := range []struct {
		name                     string
		shipped                  registry.Entry
		labTool, labSchema       string
		summary, executor, smoke string
		registered               int
		refused                  string
	}{
		{
			name:    "provider-suffixed tools",
			shipped: shippedSkill(t, "hub", "github", "find_labels_github", issues, "", ""),
			labTool: "find_labels_gitlab", labSchema: issues,
			summary:  "find_labels: one executor with backends github (hub: github/find_labels_github), gitlab (lab: gitlab/find_labels_gitlab) (a new executor)",
			executor: "find_labels", registered: 2,
			smoke: "find_labels lists providers github, gitlab; a call resolves to github (hub: github/find_labels_github) (provider github is the first live provider in name order (skill hub)); " +
				"pinned: github → github (hub: github/find_labels_github); gitlab → gitlab (lab: gitlab/find_labels_gitlab)",
		},
		{
			name:    "a first_party executor and an imported raw tool",
			shipped: shippedSkill(t, "hub", "github", "create_issue", ghCreate, hubBackends, ""),
			labTool: "create_issue", labSchema: glCreate,
			summary:  "create_issue: one executor with backends gitlab (lab: gitlab/create_issue) beside github",
			executor: "create_issue", registered: 1,
			smoke: "create_issue lists providers github, gitlab; a call resolves to github (hub: github/create_issue) (provider github is the first live provider in name order (skill hub)); " +
				"pinned: github → github (hub: github/create_issue); gitlab → gitlab (lab: gitlab/create_issue)",
		},
		{
			name:    "a first_party server that no longer lists its shipped definition",
			shipped: shippedSkill(t, "hub", "github", "find_labels_github", issues, "", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
			labTool: "find_labels_gitlab", labSchema: issues,
			summary:  "find_labels: one executor with backends github (hub: github/find_labels_github), gitlab (lab: gitlab/find_labels_gitlab) (a new executor)",
			executor: "find_labels",
			refused:  "change cannot be applied: layer 7 (confinement): backend github (hub: github/find_labels_github): the tool's definition is not the approved one; recheck hub (skillgate recheck hub) and review the drift",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newTierEnv(t, shippedRoot{tc.shipped})
			tools := `{"tools":[{"name":"` + tc.labTool + `","description":"On GitLab.","inputSchema":` + tc.labSchema + `,` + ann + `}]}`
			ok(t)(e.svc.Install(ctx, skillDir(t, "lab", "gitlab", tools), "operator:ana"))
			items, err := e.changes.List(ctx, false)
			if err != nil || len(items) != 1 {
				t.Fatalf("changes: %+v %v", items, err)
			}
			if it := items[0]; it.Kind != "promote_provider" || it.Subject != tc.executor || it.Summary != tc.summary || it.Why != "found when lab was awaiting_approval" {
				t.Fatalf("change: %+v", it)
			}
			ok(t)(e.svc.Approve(ctx, "lab", nil, "operator:ana"))
			ok(t)(e.svc.Enable(ctx, "lab", "operator:ana"))
			why := "one executor for both forges"
			if tc.refused != "" {
				if _, err := e.changes.Approve(ctx, items[0].ID, why, "operator:bo"); !errors.Is(err, change.ErrRefused) || err.Error() != tc.refused {
					t.Fatalf("apply: %v\nwant %s", err, tc.refused)
				}
				if regs, _ := e.db.Registrations(ctx); len(regs) != 0 {
					t.Fatalf("a refused apply registered %+v", regs)
				}
				return
			}
			if got, err := e.changes.Approve(ctx, items[0].ID, why, "operator:bo"); err != nil || got.State != "applied" {
				t.Fatalf("apply: %+v %v", got, err)
			}
			regs, _ := e.db.Registrations(ctx)
			if len(regs) != 1 || regs[0].Executor != tc.executor || len(regs[0].Backends) != tc.registered {
				t.Fatalf("registrations: %+v", regs)
			}
			recs, _ := e.db.AuditRecords(ctx, store.AuditFilter{Action: "change.apply"})
			if len(recs) != 1 || len(recs[0].Reasons) != 2 || recs[0].Reasons[1] != tc.smoke {
				t.Fatalf("audit: %+v", recs)
			}
			// Enabling lab again finds nothing new: the tools are served.
			if all, _ := e.changes.List(ctx, true); len(all) != 1 {
				t.Errorf("after apply: %+v", all)
			}
		})
	}
}
