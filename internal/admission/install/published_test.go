package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// publishingSkill installs a skill whose one server (the project's test
// server in its skills mode) publishes two skills through the MCP Skills
// extension; the returned file switches the server's lies.
func publishingSkill(t *testing.T, e *env, env map[string]string) (tamper string, r *install.Review) {
	t.Helper()
	tamper = filepath.Join(t.TempDir(), "tamper")
	if err := os.WriteFile(tamper, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"SKILLGATE_TESTSERVER_SKILLS_TAMPER": tamper}
	for k, v := range env {
		all[k] = v
	}
	src := writeSkill(t, t.TempDir(), "docs-helper", "---\nUses the docs server.\n",
		map[string]any{"docs": testServerDecl("skills", all)})
	r, err := e.svc.Install(context.Background(), src, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	return tamper, r
}

// TestPublishedSkillsReview: introspection lists both skills, verified,
// with their resource sets; review shows them (text and JSON), says that
// allowed-tools is ignored, and approval binds them and records it.
func TestPublishedSkillsReview(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, install.Options{})
	_, r := publishingSkill(t, e, nil)
	if r.State != store.StateAwaitingApproval {
		t.Fatalf("state %s: %s", r.State, r.Reason)
	}
	var got []string
	for _, p := range r.PublishedSkills {
		got = append(got, p.Ref+" "+p.Status+" "+p.Name)
	}
	want := "docs/skill://git-workflow/SKILL.md ready git-workflow|docs/skill://acme/refunds/SKILL.md ready refunds"
	if strings.Join(got, "|") != want {
		t.Fatalf("published skills\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	if len(r.Servers) != 1 || !r.Servers[0].SkillsExtension {
		t.Errorf("servers: %s", mustJSON(t, r.Servers))
	}
	txt := r.Text()
	for _, w := range []string{
		"published skills (MCP Skills extension):\n    docs/skill://git-workflow/SKILL.md       ready   2 files sha256:",
		"its frontmatter asks for allowed-tools Bash(git:*): ignored (an MCP-served skill grants no tools) unless you approve with --allow-tools docs/skill://git-workflow/SKILL.md",
	} {
		if !strings.Contains(txt, w) {
			t.Errorf("review text lacks %q:\n%s", w, txt)
		}
	}

	r, err := e.svc.ApproveWith(ctx, "docs-helper", install.ApproveOptions{AllowTools: []string{"skill://git-workflow/SKILL.md"}}, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, p := range r.PublishedSkills {
		got = append(got, p.Path)
		if !p.Approved {
			t.Errorf("%s not approved", p.Ref)
		}
	}
	if strings.Join(got, " ") != "mcp~docs-helper/docs/git-workflow mcp~docs-helper/docs/acme/refunds" {
		t.Errorf("paths %v", got)
	}
	if !r.PublishedSkills[0].ToolsApproved || r.PublishedSkills[1].ToolsApproved {
		t.Errorf("tools approved: %s", mustJSON(t, r.PublishedSkills))
	}
	if len(r.Approved.PublishedSkills) != 2 || r.Approved.PublishedSkills[0].SetDigest == "" {
		t.Errorf("manifest: %s", mustJSON(t, r.Approved.PublishedSkills))
	}
	checkSchemas(t, e.svc.Storage().VersionDir(r.Digest))
	if _, err := e.svc.Enable(ctx, "docs-helper", "operator:ana"); err != nil {
		t.Fatal(err)
	}
	locked, err := e.svc.LockEntries(ctx)
	if err != nil || len(locked) != 1 || len(locked[0].PublishedSkills) != 2 ||
		locked[0].PublishedSkills["docs/skill://acme/refunds/SKILL.md"] != r.Approved.PublishedSkills[1].SetDigest {
		t.Errorf("lock entries %+v %v", locked, err)
	}
	recs, err := audit.NewLog(e.db).Query(ctx, audit.Filter{Subject: "docs-helper"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range recs {
		if strings.Join(rec.Reasons, ";") == "approved 1 capability and 2 published skills" {
			found = true
			if !strings.Contains(string(rec.Data), `"toolsApproved":["Bash(git:*)"]`) || !strings.Contains(string(rec.Data), `"setDigest":"`+r.Approved.PublishedSkills[0].SetDigest+`"`) {
				t.Errorf("audit data: %s", rec.Data)
			}
		}
	}
	if !found {
		t.Errorf("no audit record of the approval: %+v", recs)
	}
}

// TestPublishedSkillDrift: after approval the server changes a file, adds
// one, lies about a size, or serves frontmatter that differs from its
// SKILL.md: recheck blocks the skill, records and audits the drift, and
// re-approval binds the new set.
func TestPublishedSkillDrift(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tamper, skill, reason string
	}{
		{"digest", "docs/skill://git-workflow/SKILL.md",
			"drift: its files changed: skill://git-workflow/references/branching.md digest sha256:"},
		{"unlisted", "docs/skill://git-workflow/SKILL.md",
			"drift: its files changed: added skill://git-workflow/references/extra.md"},
		{"size", "docs/skill://acme/refunds/SKILL.md",
			"drift: it fails verification now: skill verification failed: skill://acme/refunds/examples/email.md is 43 bytes, the entry lists 50"},
		{"frontmatter", "docs/skill://acme/refunds/SKILL.md",
			`drift: it fails verification now: skill verification failed: skill://acme/refunds/SKILL.md: frontmatter field "description" differs between the entry and SKILL.md`},
	} {
		t.Run(tc.tamper, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t, install.Options{})
			tamper, _ := publishingSkill(t, e, nil)
			if _, err := e.svc.Approve(ctx, "docs-helper", nil, "operator:ana"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Enable(ctx, "docs-helper", "operator:ana"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tamper, []byte(tc.tamper), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := e.svc.Recheck(ctx, "docs-helper", "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Blocked) != 1 || r.Blocked[0].Capability != tc.skill || !strings.HasPrefix(r.Blocked[0].Reason, tc.reason) {
				t.Fatalf("blocked %s\nwant %s: %s…", mustJSON(t, r.Blocked), tc.skill, tc.reason)
			}
			if len(r.Drift) != 1 || len(r.Drift[0].Skills) != 1 || !r.Drift[0].Drift.Empty() {
				t.Errorf("drift %s", mustJSON(t, r.Drift))
			}
			if !strings.Contains(r.Text(), "  published skill "+tc.skill+": ") {
				t.Errorf("review text:\n%s", r.Text())
			}
			recs, err := audit.NewLog(e.db).Query(ctx, audit.Filter{Subject: "docs-helper", Action: "install.drift"})
			if err != nil || len(recs) != 1 || !strings.Contains(string(recs[0].Data), tc.skill) {
				t.Fatalf("audit %v %v", recs, err)
			}
			en, err := e.svc.Enabled(ctx)
			if err != nil || len(en) != 1 || len(en[0].Blocked) != 1 {
				t.Fatalf("enabled %+v %v", en, err)
			}
			checkSchemas(t, e.svc.Storage().VersionDir(r.Digest))

			// A skill that fails verification cannot be approved; a
			// changed set can, and the approval binds the new one.
			r, err = e.svc.Approve(ctx, "docs-helper", nil, "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Blocked) != 0 {
				t.Errorf("after re-approval: %s", mustJSON(t, r.Blocked))
			}
			approved := map[string]bool{}
			for _, p := range r.Approved.PublishedSkills {
				approved[p.Ref()] = true
			}
			blocked := tc.tamper == "size" || tc.tamper == "frontmatter"
			if approved[tc.skill] == blocked {
				t.Errorf("re-approved %v; the skill fails verification: %v", approved, blocked)
			}
		})
	}
}

// TestPublishedDynamic: a "dynamic" skill is refused unless the operator
// allows it by name, and the allowance is recorded.
func TestPublishedDynamic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, install.Options{})
	_, r := publishingSkill(t, e, map[string]string{"SKILLGATE_TESTSERVER_SKILLS_DYNAMIC": "1"})
	if len(r.PublishedSkills) != 3 || r.PublishedSkills[2].Status != "dynamic" {
		t.Fatalf("published %s", mustJSON(t, r.PublishedSkills))
	}
	if want := `its resources are "dynamic": no digests, so nothing can be verified or bound; refused unless you approve with --allow-dynamic docs/skill://reports/daily/SKILL.md`; !strings.Contains(r.Text(), want) {
		t.Errorf("review lacks %q:\n%s", want, r.Text())
	}
	for _, tc := range []struct {
		name string
		opts install.ApproveOptions
		want string
	}{
		{"not dynamic", install.ApproveOptions{AllowDynamic: []string{"skill://acme/refunds/SKILL.md"}},
			"invalid request: --allow-dynamic skill://acme/refunds/SKILL.md: the skill is ready, not dynamic"},
		{"unknown", install.ApproveOptions{AllowDynamic: []string{"skill://nope/SKILL.md"}},
			"invalid request: --allow-dynamic skill://nope/SKILL.md: docs-helper publishes no such skill (write it as serverId/uri); it publishes: docs/skill://git-workflow/SKILL.md, docs/skill://acme/refunds/SKILL.md, docs/skill://reports/daily/SKILL.md"},
		{"no allowed-tools", install.ApproveOptions{AllowTools: []string{"docs/skill://acme/refunds/SKILL.md"}},
			"invalid request: --allow-tools docs/skill://acme/refunds/SKILL.md: its frontmatter asks for no allowed-tools"},
	} {
		_, err := e.svc.ApproveWith(ctx, "docs-helper", tc.opts, "operator:ana")
		if err == nil || err.Error() != tc.want || !errors.Is(err, install.ErrUsage) {
			t.Errorf("%s: %v\nwant %s", tc.name, err, tc.want)
		}
	}
	r, err := e.svc.Approve(ctx, "docs-helper", nil, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Approved.PublishedSkills); n != 2 {
		t.Errorf("approved %d published skills without --allow-dynamic; want 2", n)
	}

	e2 := newEnv(t, install.Options{})
	publishingSkill(t, e2, map[string]string{"SKILLGATE_TESTSERVER_SKILLS_DYNAMIC": "1"})
	r, err = e2.svc.ApproveWith(ctx, "docs-helper", install.ApproveOptions{AllowDynamic: []string{"skill://reports/daily/SKILL.md"}}, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Approved.PublishedSkills); n != 3 || !r.Approved.PublishedSkills[2].DynamicAllowed {
		t.Errorf("approved %s", mustJSON(t, r.Approved.PublishedSkills))
	}
}
