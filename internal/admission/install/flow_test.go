package install_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestFlow walks one skill through every state with the project's test
// server: blocked on missing metadata, completed by an operator, approved,
// enabled, disabled, removed; artefacts and audit records checked at each
// step.
func TestFlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, install.Options{})
	src := writeSkill(t, t.TempDir(), "notes", "---\nUse the tools.\n", map[string]any{"notes": testServerDecl("normal", nil)})

	r, err := e.svc.Install(ctx, src, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != store.StateBlocked {
		t.Fatalf("state %s; want blocked (%s)", r.State, r.Reason)
	}
	wantCaps := "notes/add_note notes/bare notes/delete_notes notes/echo notes/read_env notes/send_email notes/titled notes/web_search"
	if got := capNames(r); got != wantCaps {
		t.Errorf("capabilities %q", got)
	}
	for name, want := range map[string]string{
		"notes/echo":         "read/none/none (annotations,annotations,annotations)",
		"notes/add_note":     "write/internal/none (annotations,annotations,annotations)",
		"notes/delete_notes": "destructive/internal/none (annotations,annotations,annotations)",
		"notes/web_search":   "read/none/network (annotations,annotations,annotations)",
		"notes/send_email":   "write/external/network (server_meta,server_meta,server_meta)",
		"notes/bare":         "// (,,)",
		"notes/titled":       "// (,,)",
	} {
		if got := riskOf(r, name); got != want {
			t.Errorf("%s risk %s; want %s", name, got, want)
		}
	}
	wantMissing := `[{"capability":"notes/bare","fields":["riskLevel","sideEffects","dataEgress"]},{"capability":"notes/titled","fields":["riskLevel","sideEffects","dataEgress"]}]`
	if got := mustJSON(t, r.Missing); got != wantMissing {
		t.Errorf("missing %s", got)
	}
	wantReason := `blocked: 2 capabilities lack risk metadata (notes/bare, notes/titled); run skillgate complete notes CAPABILITY --risk … --side-effects … --egress … --why "…"`
	if r.Reason != wantReason {
		t.Errorf("reason\n got %s\nwant %s", r.Reason, wantReason)
	}
	dir := e.svc.Storage().VersionDir(r.Digest)
	for _, f := range []string{"skill/SKILL.md", "skill/mcp.json", manifest.FileProposed, manifest.FileReport} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("artefact: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, manifest.FileApproved)); !os.IsNotExist(err) {
		t.Errorf("manifest.json exists before approval: %v", err)
	}
	checkSchemas(t, dir)

	// Approving a blocked skill says what to do.
	if _, err := e.svc.Approve(ctx, "notes", nil, "operator:ana"); !errors.Is(err, install.ErrBlocked) || !strings.Contains(err.Error(), "run skillgate complete notes") {
		t.Errorf("approve blocked: %v", err)
	}

	// Completion errors.
	for _, tc := range []struct {
		c    install.Completion
		want string
	}{
		{install.Completion{Capability: "notes/bare", RiskLevel: "read", Why: "short"},
			"invalid request: --why must explain the decision in at least 15 characters (got 5): it is kept in the install report and the audit log for whoever reviews this later"},
		{install.Completion{Capability: "notes/nope", RiskLevel: "read", Why: "a long enough reason"},
			`invalid request: notes has no capability "notes/nope" (write it as serverId/tool); it has: notes/add_note, notes/bare, notes/delete_notes, notes/echo, notes/read_env, notes/send_email, notes/titled, notes/web_search`},
		{install.Completion{Capability: "notes/bare", RiskLevel: "severe", Why: "a long enough reason"},
			`invalid request: --risk "severe": use read, write or destructive`},
		{install.Completion{Capability: "notes/delete_notes", RiskLevel: "read", Why: "it only deletes test data"},
			"invalid request: notes/delete_notes riskLevel=read is below what the server declared (destructive, from annotations); pass --force if you are sure, and the report will flag it"},
	} {
		if _, err := e.svc.Complete(ctx, "notes", tc.c, "operator:ana"); err == nil || err.Error() != tc.want {
			t.Errorf("complete %+v:\n got %v\nwant %s", tc.c, err, tc.want)
		}
	}

	// Complete both; the second makes it ready.
	r, err = e.svc.Complete(ctx, "notes", install.Completion{Capability: "notes/bare", RiskLevel: "read", SideEffects: "none", DataEgress: "none",
		Why: "bare only returns ok; read its source"}, "operator:ana")
	if err != nil || r.State != store.StateBlocked {
		t.Fatalf("complete bare: %v %v", err, r)
	}
	if got := riskOf(r, "notes/bare"); got != "read/none/none (operator,operator,operator)" {
		t.Errorf("bare after completion: %s", got)
	}
	r, err = e.svc.Complete(ctx, "notes", install.Completion{Capability: "notes/titled", RiskLevel: "write", SideEffects: "internal", DataEgress: "none",
		Why: "titled writes to the local notes store"}, "operator:ana")
	if err != nil || r.State != store.StateAwaitingApproval {
		t.Fatalf("complete titled: %v %+v", err, r)
	}
	// A forced override below the server's value is flagged.
	r, err = e.svc.Complete(ctx, "notes", install.Completion{Capability: "notes/delete_notes", RiskLevel: "write", Force: true,
		Why: "deletes only notes this skill created"}, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if o := r.Overrides[len(r.Overrides)-1]; !o.Forced || o.ServerValue != "destructive" || o.By != "operator:ana" {
		t.Errorf("forced override %+v", o)
	}
	if got := riskOf(r, "notes/delete_notes"); got != "write/internal/none (operator,annotations,annotations)" {
		t.Errorf("delete_notes: %s", got)
	}

	// Approve a subset, then enable.
	r, err = e.svc.Approve(ctx, "notes", []string{"notes/echo", "notes/bare", "notes/send_email"}, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != store.StateInstalled || len(r.Approved.Capabilities) != 3 || r.Approved.Approval.By != "operator:ana" {
		t.Fatalf("approved %+v", r.Approved)
	}
	if _, err := os.Stat(filepath.Join(dir, manifest.FileApproved)); err != nil {
		t.Error(err)
	}
	checkSchemas(t, dir)
	if en, err := e.svc.Enabled(ctx); err != nil || len(en) != 0 {
		t.Errorf("enabled before enable: %v %v", en, err)
	}
	if r, err = e.svc.Enable(ctx, "notes", "operator:ana"); err != nil || r.State != store.StateEnabled {
		t.Fatalf("enable: %v", err)
	}
	en, err := e.svc.Enabled(ctx)
	if err != nil || len(en) != 1 {
		t.Fatalf("enabled: %v %v", en, err)
	}
	if got := strings.Join(en[0].Pins["notes"].Names(), ","); got != "bare,echo,send_email" {
		t.Errorf("pins %s", got)
	}
	if en[0].Config == nil || len(en[0].Config.Servers) != 1 || en[0].Manifest.Providers[0].PinDigest != en[0].Pins["notes"].Digest() {
		t.Errorf("enabled entry %+v", en[0])
	}
	g1, _ := e.svc.Generation(ctx)
	if r, err = e.svc.Disable(ctx, "notes", "operator:ana"); err != nil || r.State != store.StateDisabled {
		t.Fatalf("disable: %v", err)
	}
	if g2, _ := e.svc.Generation(ctx); g2 <= g1 {
		t.Errorf("generation did not move: %d → %d", g1, g2)
	}
	if r, err = e.svc.Remove(ctx, "notes", "operator:ana"); err != nil || r.State != store.StateRemoved {
		t.Fatalf("remove: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("files left after remove: %v", err)
	}

	// The audit log holds one record per transition, chained.
	recs, err := audit.NewLog(e.db).Query(ctx, audit.Filter{Subject: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, rec := range recs {
		actions = append(actions, rec.Action)
		if rec.Actor == "" || len(rec.Reasons) != 1 || rec.Reasons[0] == "" {
			t.Errorf("record %+v", rec)
		}
	}
	want := "install.pending_install install.analyzing install.blocked install.complete install.complete install.complete install.installed install.enabled install.disabled install.removed"
	if got := strings.Join(actions, " "); got != want {
		t.Errorf("audit actions\n got %s\nwant %s", got, want)
	}
	if _, err := audit.Verify(ctx, audit.NewLog(e.db), audit.Head{}); err != nil {
		t.Errorf("audit chain: %v", err)
	}
	// The records say exactly what they said when the store wrote their
	// content (testdata/flow-audit.golden was written then).
	all, err := audit.NewLog(e.db).Query(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/flow-audit.golden")
	if err != nil {
		t.Fatal(err)
	}
	if got := auditDump(t, all, e.data, src); got != string(golden) {
		t.Errorf("audit records\n got %s\nwant %s", got, golden)
	}
}

// auditDump renders every record of the log as one line per record, the
// temporary directories of the test written as DATA and SRC and content
// digests (which the test server's path changes) as DIGEST: what an
// install's audit records say, byte for byte, so that a change of their
// content (and so of the hash chain) shows.
var digestRE = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

func auditDump(t *testing.T, recs []audit.Record, data, src string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line := fmt.Sprintf("%d %s %s %s %s %q %s\n", r.Seq, r.Time.Format(time.RFC3339Nano), r.Actor, r.Action, r.Subject, r.Reasons, r.Data)
		line = strings.ReplaceAll(line, src, "SRC")
		line = strings.ReplaceAll(line, data, "DATA")
		b.WriteString(digestRE.ReplaceAllString(line, "DIGEST"))
	}
	return b.String()
}
