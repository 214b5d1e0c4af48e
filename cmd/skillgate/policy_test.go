package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

const cliCaps = `[
 {"skill":"tools/fs","trust":"core","tier":1,"invokableBy":["T0","T1","T2","T3","T4"],"state":"enabled",
  "extensionId":"fs","capabilityId":"read_file","enabled":true,"riskLevel":"read","sideEffects":"none","dataEgress":"none",
  "constraints":{"pathGlobs":["/srv/**"]}},
 {"skill":"tools/fs","trust":"core","tier":1,"invokableBy":["T0","T1","T2","T3","T4"],"state":"enabled",
  "extensionId":"fs","capabilityId":"delete_file","enabled":true,"riskLevel":"destructive","sideEffects":"internal","dataEgress":"none"}
]`

func TestPolicyCLI(t *testing.T) {
	data := t.TempDir()
	caps := filepath.Join(t.TempDir(), "caps.json")
	write(t, filepath.Dir(caps), map[string]string{"caps.json": cliCaps})

	// No policies: the default set.
	code, out, errs := run(t, data, "policy", "check")
	if code != 0 || !strings.Contains(out, "the default policy applies") {
		t.Fatalf("check default: %d %q %q", code, out, errs)
	}
	write(t, data, map[string]string{
		"policies/base.cedar": "@id(\"permit-all\")\npermit (principal, action, resource);\n\n@id(\"no-t4\")\nforbid (principal, action, resource) when { principal.tierLevel == 4 };\n",
	})
	code, out, _ = run(t, data, "policy", "check")
	if code != 0 || out != "ok: 2 policies in 1 source\n" {
		t.Fatalf("check: %d %q", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.cedar")
	write(t, filepath.Dir(bad), map[string]string{"bad.cedar": "permit (principal, action, resource)\nwhen { true };\n@constraints(\"{\\\"x\\\":1}\") permit (principal, action, resource);\n"})
	code, out, errs = run(t, data, "policy", "check", bad)
	want := bad + `:3: @constraints: invalid constraints: unknown key "x"; the keys are allowedDomains, urlArgs, pathGlobs, pathArgs, argValues and rateLimit (case-sensitive)` + "\n"
	if code != 1 || out != "" || errs != want {
		t.Fatalf("check bad: %d %q\n got: %q\nwant: %q", code, out, errs, want)
	}
	code, out, _ = run(t, data, "policy", "check", "--json", bad)
	var rep app.CheckReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.OK || len(rep.Errors) != 1 {
		t.Fatalf("check --json: %d %v %+v", code, err, rep)
	}

	// policy test.
	code, out, _ = run(t, data, "policy", "test", "--principal", `Agent::"acme/a"`, "--capability", "fs/read_file", "--args", `{"path":"/srv/x"}`, "--capabilities", caps)
	if code != 0 || out != "acme/a@T3 tools/fs:fs/read_file → allow\n  policy: permitted by permit-all ("+filepath.Join(data, "policies", "base.cedar")+":1)\n" {
		t.Fatalf("test allow: %d %q", code, out)
	}
	code, out, _ = run(t, data, "policy", "test", "--principal", "acme/small", "--tier", "T4", "--capability", "fs/read_file", "--capabilities", caps, "--json")
	var tr policy.TestReport
	if err := json.Unmarshal([]byte(out), &tr); err != nil || code != 1 || tr.Effect != "deny" || tr.Reasons[0].Policy != "no-t4" {
		t.Fatalf("test deny: %d %v %s", code, err, out)
	}
	code, _, errs = run(t, data, "policy", "test", "--principal", "acme/a", "--capability", "fs")
	if code != 2 || !strings.Contains(errs, "--capability: invalid capability") {
		t.Fatalf("usage: %d %q", code, errs)
	}
	// The full form names the skill; the short form is completed when one
	// skill offers it, and refused with the candidates when several do.
	code, out, _ = run(t, data, "policy", "test", "--principal", "acme/a", "--capability", "tools/fs:fs/read_file", "--args", `{"path":"/srv/x"}`, "--capabilities", caps)
	if code != 0 || !strings.HasPrefix(out, "acme/a@T3 tools/fs:fs/read_file → allow\n") {
		t.Fatalf("full form: %d %q", code, out)
	}
	two := filepath.Join(t.TempDir(), "two.json")
	other := `{"skill":"other/fs","trust":"core","tier":1,"invokableBy":["T3"],"state":"enabled",
  "extensionId":"fs","capabilityId":"read_file","enabled":true,"riskLevel":"read","sideEffects":"none","dataEgress":"none"}`
	write(t, filepath.Dir(two), map[string]string{"two.json": strings.Replace(cliCaps, "[\n", "[\n"+other+",\n", 1)})
	code, _, errs = run(t, data, "policy", "test", "--principal", "acme/a", "--capability", "fs/read_file", "--capabilities", two)
	if code != 2 || errs != "Error: --capability: invalid capability: fs/read_file is offered by 2 skills (other/fs:fs/read_file, tools/fs:fs/read_file); name one of them\n" {
		t.Fatalf("short form, two skills: %d %q", code, errs)
	}

	// Grants.
	code, out, _ = run(t, data, "policy", "test", "--principal", "acme/a", "--capability", "fs/delete_file", "--capabilities", caps)
	if code != 1 || !strings.Contains(out, "→ require_approval") ||
		!strings.HasSuffix(out, "  approve one call with: skillgate grant add acme/a tools/fs:fs/delete_file --level destructive --uses 1 --reason '…'\n") {
		t.Fatalf("needs approval: %d %q", code, out)
	}
	// No installed skill offers fs/delete_file (the records above are a
	// file): the short form cannot be bound to a skill.
	code, _, errs = run(t, data, "grant", "add", "acme/*", "fs/delete_file", "--level", "destructive")
	if code != 2 || errs != "Error: invalid grant: no installed skill offers a capability matching fs/delete_file; name the skill: write skill:extensionId/capabilityId (acme/notes:fs/write_file), a pattern naming the skill (acme/notes:fs/*, acme/notes:*), or * for everything\n" {
		t.Fatalf("short form without installs: %d %q", code, errs)
	}
	// A grant names a capability an installed skill offers.
	shipTools(t, data)
	code, out, errs = run(t, data, "grant", "add", "acme/*", "tools/fs:fs/delete_file", "--level", "destructive", "--uses", "1", "--expires", "1h", "--args", `{"path":"/srv/*"}`, "--reason", "tidy /srv", "--by", "tester", "--json")
	var g struct {
		ID   string              `json:"id"`
		Uses int                 `json:"uses"`
		Args map[string][]string `json:"args"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || code != 0 || g.Uses != 1 || g.Args["path"][0] != "/srv/*" {
		t.Fatalf("grant add: %d %q %q", code, out, errs)
	}
	code, out, _ = run(t, data, "policy", "test", "--principal", "acme/a", "--capability", "fs/delete_file", "--args", `{"path":"/srv/t"}`, "--capabilities", caps)
	if code != 0 || !strings.Contains(out, "grant: would use grant "+g.ID+" (use 0 of 1)") {
		t.Fatalf("with grant: %d %q", code, out)
	}
	code, out, _ = run(t, data, "grant", "ls")
	if code != 0 || !strings.Contains(out, g.ID+"  acme/*     tools/fs:fs/delete_file  destructive  0/1") {
		t.Fatalf("ls: %d %q", code, out)
	}
	if code, _, errs = run(t, data, "grant", "add", "acme/a", "tools/fs:fs/x", "--level", "root"); code != 2 || !strings.Contains(errs, `invalid grant: level "root"`) {
		t.Fatalf("bad level: %d %q", code, errs)
	}
	if code, out, _ = run(t, data, "grant", "revoke", g.ID); code != 0 || out != "revoked "+g.ID+"\n" {
		t.Fatalf("revoke: %d %q", code, out)
	}
	if code, _, errs = run(t, data, "grant", "revoke", g.ID); code != 1 || !strings.Contains(errs, "grant not found") {
		t.Fatalf("revoke again: %d %q", code, errs)
	}
	if code, out, _ = run(t, data, "grant", "ls", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("ls after revoke: %d %q", code, out)
	}
	// Adding and revoking are audited, by the operator running the CLI.
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rs, err := audit.NewLog(db).Query(context.Background(), audit.Filter{Action: "grant."})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%s %s %s %v", r.Action, r.Actor, r.Subject, r.Reasons))
	}
	wantAudit := "grant.add operator:tester tools/fs:fs/delete_file [tidy /srv]\ngrant.revoke operator:local tools/fs:fs/delete_file [revoked]"
	if strings.Join(got, "\n") != wantAudit {
		t.Fatalf("audit:\n%s\nwant\n%s", strings.Join(got, "\n"), wantAudit)
	}
}

// TestPendingListsApprovalRequests: calls refused until a human approves
// them are listed for the operator with the command that approves them
// (the agent was only told that a human must approve).
func TestPendingListsApprovalRequests(t *testing.T) {
	data := t.TempDir()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	approve := `{"approve":"skillgate grant add acme/a1 notes:fs/write_file --level destructive --uses 1 --reason '…'"}`
	if _, err := audit.NewLog(db).Append(ctx,
		audit.Record{Time: at, Actor: "agent:acme/a1", Action: "capability.invoke", Subject: "notes:fs/write_file", Decision: capability.RequireApproval, Data: json.RawMessage(approve)},
		audit.Record{Time: at.Add(time.Minute), Actor: "agent:acme/a1", Action: "capability.invoke", Subject: "notes:fs/write_file", Decision: capability.RequireApproval, Data: json.RawMessage(approve)},
		audit.Record{Time: at.Add(2 * time.Minute), Actor: "agent:acme/a2", Action: "capability.invoke", Subject: "notes:fs/read_file", Decision: capability.Allow},
	); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, errs := run(t, data, "pending")
	want := "Calls waiting for a human's approval (last 24h):\n" +
		"  agent:acme/a1 notes:fs/write_file: 2 refused, last " + at.Add(time.Minute).Format(time.RFC3339) + "\n" +
		"    approve one call: skillgate grant add acme/a1 notes:fs/write_file --level destructive --uses 1 --reason '…'\n"
	if code != 0 || out != want {
		t.Fatalf("pending: %d %q\n got %s\nwant %s", code, errs, out, want)
	}
}
