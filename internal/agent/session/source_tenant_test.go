package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestTenantLibraryMount checks that a tenant library's skill mounts for
// its tenant only, and only while it holds the scanned digest.
func TestTenantLibraryMount(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "acme")
	dir := filepath.Join(root, "secreto")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: secreto\ndescription: Secret.\n---\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []skill.File{{Path: "SKILL.md", Size: int64(len(body)), Digest: skill.FileDigest([]byte(body))}}
	digest, err := skill.Digest(ctx, os.DirFS(dir), files)
	if err != nil {
		t.Fatal(err)
	}
	fj, _ := json.Marshal(files)
	v := store.Version{Key: "secreto", Name: "secreto", Root: root, Scope: "tenant", Dir: dir, Digest: digest, Files: fj}
	shared := v
	shared.Scope = "project"

	for _, src := range []session.Source{
		session.LocalSource{Verified: &session.Verified{}},
		&session.BlobSource{Local: session.LocalSource{Verified: &session.Verified{}}},
	} {
		for _, tc := range []struct {
			name   string
			tenant string
			v      store.Version
			wantIs error
		}{
			{"own tenant", "acme", v, nil},
			{"another tenant", "globex", v, session.ErrSkillNotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := src.Mount(ctx, tc.tenant, tc.v)
				if !errors.Is(err, tc.wantIs) || (tc.wantIs == nil) != (err == nil) {
					t.Fatalf("got %v, want %v", err, tc.wantIs)
				}
			})
		}
	}
	if _, _, err := (session.LocalSource{}).Mount(ctx, "globex", shared); err != nil {
		t.Fatalf("a shared skill for any tenant: %v", err)
	}
	// A mounted tree whose file changes afterwards (the next sync, before
	// its scan) does not serve the new bytes.
	mounted, prefix, err := (session.LocalSource{Verified: &session.Verified{}}).Mount(ctx, "acme", v)
	if err != nil {
		t.Fatal(err)
	}
	if b, _, err := blob.ReadAll(ctx, mounted, prefix+"SKILL.md", 0); err != nil || string(b) != body {
		t.Fatalf("read before the change: %q, %v", b, err)
	}
	// The cache changed since the scan (same size): refused.
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(strings.Replace(body, "Secret", "Sekret", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := blob.ReadAll(ctx, mounted, prefix+"SKILL.md", 0); !errors.Is(err, blob.ErrNotFound) || err.Error() != `blob: object not found: "SKILL.md" changed since the scan` {
		t.Fatalf("read after the change: %v", err)
	}
	// A version recorded without per-file digests is checked whole, at
	// mount.
	plain, _ := json.Marshal([]skill.File{{Path: "SKILL.md", Size: int64(len(body))}})
	old := v
	old.Files = plain
	_, _, err = (session.LocalSource{}).Mount(ctx, "acme", old)
	if err == nil || !strings.Contains(err.Error(), "session: secreto changed since it was scanned (digest sha256:") || !strings.HasSuffix(err.Error(), "); rescan") {
		t.Fatalf("changed tree: %v", err)
	}
}
