package install_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestUpdate: update fetches the recorded git source again; the same
// content is up to date; a change of files only says so; a changed tool
// list goes through the analysis and its review shows the comparison with
// the approved version, which keeps serving until the update is approved,
// and the approval records consent to that comparison.
func TestUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newGitRepo(t)
	skillDir := filepath.Join(repo.dir, "echoer")
	writeSkill(t, repo.dir, "echoer", "---\nEchoes.\n", map[string]any{"notes": testServerDecl("normal", nil)})
	repo.commit(nil, nil)
	e := newEnv(t, install.Options{})
	if _, err := e.svc.InstallFrom(ctx, install.Source{Location: "file://" + repo.dir, Ref: "main", Path: "echoer"}, "operator:ana", install.Introspection{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Approve(ctx, "echoer", []string{"notes/echo"}, "operator:ana"); err != nil {
		t.Fatal(err)
	}
	v1, err := e.svc.Enable(ctx, "echoer", "operator:ana")
	if err != nil {
		t.Fatal(err)
	}

	r, err := e.svc.Update(ctx, "echoer", install.UpdateOptions{}, "operator:ana", install.Introspection{})
	if !errors.Is(err, install.ErrUpToDate) || r.Digest != v1.Digest || !strings.Contains(err.Error(), "up to date: echoer "+v1.Digest+" is what file://"+repo.dir+" holds") {
		t.Fatalf("update of an unchanged source: %v", err)
	}

	// Only a file changes.
	repo.commit(map[string]string{"echoer/references/usage.md": "How to echo.\n"}, nil)
	r, err = e.svc.Update(ctx, "echoer", install.UpdateOptions{}, "operator:ana", install.Introspection{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Previous == nil || !r.Previous.FilesOnly || r.Previous.Digest != v1.Digest || !strings.Contains(r.Text(), "only files changed: the capabilities, their risk, servers, credentials and signer are the same; approving still takes a human") {
		t.Fatalf("files-only update review:\n%s", r.Text())
	}
	if _, err := e.svc.Reject(ctx, "echoer@"+strings.TrimPrefix(r.Digest, "sha256:")[:12], "not needed right now", "operator:ana"); err != nil {
		t.Fatal(err)
	}

	// The tool list changes: a second server.
	mcp := map[string]any{"mcpServers": map[string]any{"notes": testServerDecl("normal", nil), "files": testServerDecl("files", nil)}}
	b, _ := json.Marshal(mcp)
	if err := os.WriteFile(filepath.Join(skillDir, "mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	repo.commit(nil, nil)
	r, err = e.svc.Update(ctx, "echoer", install.UpdateOptions{}, "operator:ana", install.Introspection{})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Previous
	if p == nil || p.FilesOnly || strings.Join(p.ServersAdded, ",") != "files" || !strings.Contains(strings.Join(p.Added, ","), "files/read_file") ||
		!strings.HasPrefix(p.DiffDigest, "sha256:") {
		t.Fatalf("update review previous: %+v", p)
	}
	if !strings.Contains(r.Text(), "  servers added [files], removed []\n") {
		t.Fatalf("update review text:\n%s", r.Text())
	}
	// The approved version still serves.
	if en, err := e.svc.Enabled(ctx); err != nil || len(en) != 1 || en[0].Digest != v1.Digest {
		t.Fatalf("enabled during the update: %+v %v", en, err)
	}
	up, err := e.svc.Approve(ctx, "echoer@"+strings.TrimPrefix(r.Digest, "sha256:")[:12], []string{"notes/echo"}, "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := e.db.AuditRecords(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	var data struct {
		Consent struct {
			Previous, DiffDigest string
			FilesOnly            bool
		}
	}
	if err := json.Unmarshal(last.Data, &data); err != nil || last.Action != "install.installed" && last.Action != "install.approve" ||
		data.Consent.Previous != v1.Digest || data.Consent.DiffDigest != p.DiffDigest || !strings.Contains(last.Reasons[0], "consenting to the changes since "+v1.Digest) {
		t.Fatalf("approval record %s %s %+v (%v)", last.Action, last.Data, last.Reasons, err)
	}
	if up.State != store.StateInstalled {
		t.Fatalf("approved update state %s", up.State)
	}
}
