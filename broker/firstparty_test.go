package broker_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/broker"
	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/policy"
	"github.com/skillgate/skillgate/registry"
	"github.com/skillgate/skillgate/store"
)

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
	return registry.Entry{Version: store.Version{Key: key, Name: key, Dir: dir, Root: filepath.Dir(dir), Digest: "sha256:ab", Tier: 2,
		InvokableBy: []string{"T0", "T3"}, Trust: "first_party", Valid: true, Enabled: true}}
}

// TestReadFirstParty: which first_party skills are served, dormant or left
// out, with the problem naming the file and what to fix.
func TestReadFirstParty(t *testing.T) {
	man := func(key, approval string) string {
		return strings.NewReplacer("%KEY%", key, "%APPROVAL%", approval).Replace(shippedManifest)
	}
	tests := []struct {
		name     string
		files    map[string]string
		env      map[string]string
		served   bool
		dormant  []string
		approved capability.Trust
		problem  string // with DIR for the skill's directory
	}{
		{"served", map[string]string{"manifest.json": man("github", ""), "mcp.json": shippedConfig}, map[string]string{"GITHUB_TOKEN": "t"}, true, nil, "first_party", ""},
		{"dormant", map[string]string{"manifest.json": man("github", ""), "mcp.json": shippedConfig}, nil, false, []string{"GITHUB_TOKEN"}, "", ""},
		{"approved as imported", map[string]string{"manifest.json": man("github", `,"approval":{"by":"x","at":"2026-01-01T00:00:00Z","trust":"imported"}`), "mcp.json": shippedConfig},
			map[string]string{"GITHUB_TOKEN": "t"}, true, nil, "imported", ""},
		{"instructions only", map[string]string{"mcp.json": shippedConfig}, nil, false, nil, "", ""},
		{"another skill's manifest", map[string]string{"manifest.json": man("gitlab", ""), "mcp.json": shippedConfig}, nil, false, nil, "",
			`first_party skill github: DIR/manifest.json: skillId is "gitlab" but the skill is "github": fix skillId`},
		{"no mcp.json", map[string]string{"manifest.json": man("github", "")}, nil, false, nil, "",
			"first_party skill github: the manifest names servers but open DIR/mcp.json: no such file or directory"},
		{"server not declared", map[string]string{"manifest.json": man("github", ""), "mcp.json": `{"mcpServers":{"other":{"command":"x"}}}`}, nil, false, nil, "",
			`first_party skill github: DIR/manifest.json: providers name server "gh", which DIR/mcp.json does not declare`},
		{"unknown risk", map[string]string{"manifest.json": strings.Replace(man("github", ""), `{"value":"none","source":"operator"}`, `{}`, 1), "mcp.json": shippedConfig}, nil, false, nil, "",
			"first_party skill github: DIR/manifest.json: invalid artefact: manifest: capabilities[0] (gh/create_issue): approved with unknown dataEgress"},
		{"not JSON", map[string]string{"manifest.json": "{", "mcp.json": shippedConfig}, nil, false, nil, "",
			"first_party skill github: DIR/manifest.json: invalid artefact: manifest: not valid JSON: unexpected end of input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := firstParty(t, "github", tc.files)
			imported := e
			imported.Key, imported.Trust = "notes", "imported"
			check := broker.CredentialsFrom(func(n string) (string, bool) { v, ok := tc.env[n]; return v, ok })
			got, err := broker.ReadFirstParty(context.Background(), entries{e, imported}, check)
			if err != nil {
				t.Fatal(err)
			}
			if served := len(got.Skills) == 1; served != tc.served || len(got.Skills) > 1 {
				t.Fatalf("served %v, want %v", got.Skills, tc.served)
			}
			if tc.served {
				s := got.Skills[0]
				if s.Key != "github" || s.Trust != capability.TrustFirstParty || s.ApprovedTrust != tc.approved || s.Digest != "sha256:ab" || s.Dir != e.Dir ||
					s.Servers["gh"].Command != "gh-mcp" || len(s.Manifest.Capabilities) != 1 {
					t.Errorf("skill %+v", s)
				}
			}
			var dormant []string
			for _, d := range got.Dormant {
				dormant = append(dormant, d.Skill+":"+strings.Join(d.Missing, ","))
			}
			var want []string
			if tc.dormant != nil {
				want = []string{"github:" + strings.Join(tc.dormant, ",")}
			}
			if !reflect.DeepEqual(dormant, want) {
				t.Errorf("dormant %v, want %v", dormant, want)
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

// TestPolicyTrust: the policy records carry the trust a capability is
// served at and the trust its manifest was approved for (not a constant),
// and first_party tools are named as shipped.
func TestPolicyTrust(t *testing.T) {
	imported := skillFor(t, "notes")
	imported.Trust = capability.TrustImported
	e := firstParty(t, "github", map[string]string{
		"manifest.json": strings.NewReplacer("%KEY%", "github", "%APPROVAL%", "").Replace(shippedManifest), "mcp.json": shippedConfig})
	fp, err := broker.ReadFirstParty(context.Background(), entries{e}, nil)
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
