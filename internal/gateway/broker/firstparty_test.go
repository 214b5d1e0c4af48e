package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// records keeps audit records.
type records struct {
	mu  sync.Mutex
	all []audit.Record
}

func (r *records) Record(rec audit.Record) error {
	r.mu.Lock()
	r.all = append(r.all, rec)
	r.mu.Unlock()
	return nil
}

func (r *records) last() audit.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.all) == 0 {
		return audit.Record{}
	}
	return r.all[len(r.all)-1]
}

// noUpstream refuses every call: the tests using it never forward.
type noUpstream struct{}

func (noUpstream) Call(_ context.Context, _ capability.Principal, _ mcpclient.Target, _ string, _ json.RawMessage, done mcpclient.ResultFunc) {
	done(nil, errors.New("no upstream in this test"))
}
func (noUpstream) Retain(map[string]bool) {}

// entries is a FirstPartySource over fixed registry entries.
type entries []registry.Entry

func (es entries) List(_ context.Context, q registry.Query) ([]registry.Entry, error) {
	var out []registry.Entry
	for _, e := range es {
		if q.Trust == "" || e.Trust == q.Trust {
			out = append(out, e)
		}
	}
	return out, nil
}

const shippedManifest = `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"%KEY%","version":"sha256:00",` +
	`"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"create_issue","description":"Create an issue.",` +
	`"inputSchema":{"type":"object","properties":{"title":{"type":"string"}}},` +
	`"risk":{"riskLevel":{"value":"write","source":"operator"},"sideEffects":{"value":"internal","source":"operator"},"dataEgress":{"value":"none","source":"operator"}}}]%APPROVAL%}`

const shippedConfig = `{"mcpServers":{"gh":{"command":"gh-mcp","env":{"GITHUB_TOKEN":"${GITHUB_TOKEN}"}}}}`

// firstParty writes a first_party skill's files and returns its entry.
func firstParty(t *testing.T, key string, files map[string]string) registry.Entry {
	t.Helper()
	dir := filepath.Join(t.TempDir(), key)
	os.MkdirAll(dir, 0o755)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The digest a scan records: servers start only from these files.
	digest, err := discover.TreeDigest(context.Background(), dir)
	if err != nil {
		digest = "sha256:unhashable"
	}
	return registry.Entry{Version: store.Version{Key: key, Name: key, Dir: dir, Root: filepath.Dir(dir), Digest: digest, Tier: 2,
		InvokableBy: []string{"T0", "T3"}, Trust: "first_party", Valid: true, Enabled: true}}
}

// TestReadFirstParty: which first_party skills are served or left out,
// with the problem naming the file and what to fix.
func TestReadFirstParty(t *testing.T) {
	man := func(key, approval string) string {
		return strings.NewReplacer("%KEY%", key, "%APPROVAL%", approval).Replace(shippedManifest)
	}
	tests := []struct {
		name     string
		files    map[string]string
		served   bool
		approved capability.Trust
		problem  string // with DIR for the skill's directory
	}{
		{"served", map[string]string{"manifest.json": man("github", ""), "mcp.json": shippedConfig}, true, "first_party", ""},
		{"approved as imported", map[string]string{"manifest.json": man("github", `,"approval":{"by":"x","at":"2026-01-01T00:00:00Z","trust":"imported"}`), "mcp.json": shippedConfig},
			true, "imported", ""},
		{"instructions only", map[string]string{"mcp.json": shippedConfig}, false, "", ""},
		{"another skill's manifest", map[string]string{"manifest.json": man("gitlab", ""), "mcp.json": shippedConfig}, false, "",
			`first_party skill github: DIR/manifest.json: skillId is "gitlab" but the skill is "github": fix skillId`},
		{"no mcp.json", map[string]string{"manifest.json": man("github", "")}, false, "",
			"first_party skill github: the manifest names servers but open DIR/mcp.json: no such file or directory"},
		{"server not declared", map[string]string{"manifest.json": man("github", ""), "mcp.json": `{"mcpServers":{"other":{"command":"x"}}}`}, false, "",
			`first_party skill github: DIR/manifest.json: providers name server "gh", which DIR/mcp.json does not declare`},
		{"unknown risk", map[string]string{"manifest.json": strings.Replace(man("github", ""), `{"value":"none","source":"operator"}`, `{}`, 1), "mcp.json": shippedConfig}, false, "",
			"first_party skill github: DIR/manifest.json: invalid artefact: manifest: capabilities[0] (gh/create_issue): approved with unknown dataEgress"},
		{"not JSON", map[string]string{"manifest.json": "{", "mcp.json": shippedConfig}, false, "",
			"first_party skill github: DIR/manifest.json: invalid artefact: manifest: not valid JSON: unexpected end of input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := firstParty(t, "github", tc.files)
			imported := e
			imported.Key, imported.Trust = "notes", "imported"
			got, err := broker.ReadFirstParty(context.Background(), entries{e, imported})
			if err != nil {
				t.Fatal(err)
			}
			if served := len(got.Skills) == 1; served != tc.served || len(got.Skills) > 1 {
				t.Fatalf("served %v, want %v", got.Skills, tc.served)
			}
			if tc.served {
				s := got.Skills[0]
				if s.Key != "github" || s.Trust != capability.TrustFirstParty || s.ApprovedTrust != tc.approved || s.Digest != e.Digest || s.Dir != e.Dir ||
					s.Servers["gh"].Command != "gh-mcp" || len(s.Manifest.Capabilities) != 1 {
					t.Errorf("skill %+v", s)
				}
			}
			var problems []string
			if tc.problem != "" {
				problems = []string{strings.ReplaceAll(tc.problem, "DIR", e.Dir)}
			}
			if !reflect.DeepEqual(got.Problems, problems) {
				t.Errorf("problems\n got %q\nwant %q", got.Problems, problems)
			}
		})
	}
}

// TestFirstPartyDormantPerPrincipal: a first_party capability is listed
// and callable only for the principals its credentials are configured
// for; for the others it does not exist, and the refusal is audited as
// dormant, naming the credential.
func TestFirstPartyDormantPerPrincipal(t *testing.T) {
	ctx := context.Background()
	e := firstParty(t, "github", map[string]string{
		"manifest.json": strings.NewReplacer("%KEY%", "github", "%APPROVAL%", "").Replace(shippedManifest), "mcp.json": shippedConfig})
	rec := &records{}
	b, err := broker.New(broker.Options{
		Load: broker.LoadFirstParty(entries{e}, nil), Decider: &listDecider{}, Upstream: noUpstream{}, Audit: rec,
		// acme has configured GITHUB_TOKEN; globex has not.
		Configured: func(_ context.Context, p capability.Principal, skill string, names []string) []string {
			if p.Tenant == "acme" || skill != "github" {
				return nil
			}
			return names
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	acme := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T0"}
	globex := capability.Principal{Tenant: "globex", Agent: "a1", Tier: "T0"}
	for p, want := range map[capability.Principal]int{acme: 1, globex: 0} {
		if tools, _ := b.Tools(ctx, p); len(tools) != want {
			t.Errorf("%s sees %d tools, want %d", p, len(tools), want)
		}
	}
	res, err := call(b, ctx, gatewayCaller(globex), "create_issue", json.RawMessage(`{"title":"Bug"}`))
	if err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != `skillgate: unknown tool "create_issue": it is not among the capabilities you may call` {
		t.Fatalf("globex's call: %v %+v", err, res)
	}
	if got := rec.last(); got.Subject != "github:gh/create_issue" || len(got.Reasons) != 1 ||
		got.Reasons[0] != "dormant: credentials not configured for "+globex.String()+": GITHUB_TOKEN" {
		t.Errorf("audit record %+v", got)
	}
}

// TestPolicyTrust: the policy records carry the trust a capability is
// served at and the trust its manifest was approved for (not a constant),
// and first_party tools are named as shipped.
func TestPolicyTrust(t *testing.T) {
	imported := skillFor(t, "notes")
	imported.Trust = capability.TrustImported
	e := firstParty(t, "github", map[string]string{
		"manifest.json": strings.NewReplacer("%KEY%", "github", "%APPROVAL%", "").Replace(shippedManifest), "mcp.json": shippedConfig})
	fp, err := broker.ReadFirstParty(context.Background(), entries{e})
	if err != nil || len(fp.Skills) != 1 {
		t.Fatalf("%v %+v", err, fp)
	}
	mismatched := fp.Skills[0]
	mismatched.Key, mismatched.ApprovedTrust = "jira", capability.TrustImported
	type rec struct {
		id                   string
		trust, approvedTrust policy.Trust
	}
	var got []rec
	for _, pc := range broker.PolicyCapabilities([]broker.Skill{imported, fp.Skills[0], mismatched}) {
		if pc.CapabilityID == "echo" || pc.SkillKey != "notes" {
			got = append(got, rec{pc.SkillKey + ":" + pc.ExtensionID + "/" + pc.CapabilityID, pc.SkillTrust, pc.ApprovedTrust})
		}
	}
	want := []rec{
		{"github:gh/create_issue", "first_party", "first_party"},
		{"jira:gh/create_issue", "first_party", "imported"},
		{"notes:srv/echo", "imported", "imported"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("policy records\n got %v\nwant %v", got, want)
	}
}
