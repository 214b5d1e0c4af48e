package install_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/registry/signature"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestSignedImports: an imported skill's own signature is checked at
// install. A valid one by a key trusted for imported skills is recorded as
// provenance; one by a key not trusted here is recorded as unverified; an
// invalid one refuses the install, and the refusal is audited.
func TestSignedImports(t *testing.T) {
	t.Parallel()
	seed := func(b byte) ed25519.PrivateKey { return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, 32)) }
	trusted, stranger := seed(7), seed(8)
	kr, err := signature.NewKeyring([]signature.TrustedKey{{Name: "vendor", Public: trusted.Public().(ed25519.PublicKey), Trust: []string{signature.TrustImported}}})
	if err != nil {
		t.Fatal(err)
	}
	signedAt := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	signed := func(t *testing.T, name string, key ed25519.PrivateKey) string {
		t.Helper()
		dir := writeSkill(t, t.TempDir(), name, "---\n# "+name+"\n", nil)
		if _, err := signature.Sign(context.Background(), dir, key, signature.SignOptions{Signer: "Vendor Inc", Trust: signature.TrustImported, Now: func() time.Time { return signedAt }}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	t.Run("verified", func(t *testing.T) {
		e := newEnv(t, install.Options{Keyring: kr})
		r, err := e.svc.Install(context.Background(), signed(t, "vendor-notes", trusted), "operator")
		if err != nil {
			t.Fatal(err)
		}
		sig := r.Provenance.Signature
		if sig == nil || sig.Status != "verified" || sig.Signer != "Vendor Inc" || sig.KeyName != "vendor" || !sig.SignedAt.Equal(signedAt) {
			t.Fatalf("signature record %+v", sig)
		}
		if !strings.Contains(r.Text(), "; signed by Vendor Inc with key vendor (SHA256:") {
			t.Fatalf("review text:\n%s", r.Text())
		}
	})
	t.Run("unverified", func(t *testing.T) {
		e := newEnv(t, install.Options{Keyring: kr})
		r, err := e.svc.Install(context.Background(), signed(t, "stranger-notes", stranger), "operator")
		if err != nil {
			t.Fatal(err)
		}
		if sig := r.Provenance.Signature; sig == nil || sig.Status != "unverified" || !strings.Contains(sig.Reason, "which is not trusted") {
			t.Fatalf("signature record %+v", sig)
		}
	})
	other := signed(t, "other-notes", trusted)
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		msg    string
	}{
		{"modified after signing", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "notes.md"), []byte("added later\n"), 0o644)
		}, "modified after signing"},
		{"swapped envelope", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(other, signature.FileName))
			os.WriteFile(filepath.Join(dir, signature.FileName), b, 0o644)
		}, `signature of another skill: it signs skill "other-notes", this is "vendor-notes"`},
		{"truncated envelope", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, signature.FileName))
			os.WriteFile(filepath.Join(dir, signature.FileName), b[:40], 0o644)
		}, "malformed signature: not a DSSE envelope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e2 := newEnv(t, install.Options{Keyring: kr})
			dir := signed(t, "vendor-notes", trusted)
			tc.tamper(t, dir)
			svc, err := install.New(install.Options{Store: e2.db, Root: filepath.Join(e2.data, "imported2"), Keyring: kr, Audit: e2.db})
			if err != nil {
				t.Fatal(err)
			}
			_, err = svc.Install(context.Background(), dir, "operator:alice")
			if !errors.Is(err, install.ErrInvalidSkill) || !strings.Contains(err.Error(), tc.msg) || !strings.HasSuffix(err.Error(), "; the install was refused") {
				t.Fatalf("install error = %v, want %q", err, tc.msg)
			}
			recs, err := e2.db.AuditRecords(context.Background(), store.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].Action != "install.refused" || recs[0].Subject != "vendor-notes" || recs[0].Actor != "operator:alice" ||
				!strings.Contains(recs[0].Reasons[0], tc.msg) {
				t.Fatalf("audit records %+v", recs)
			}
			if ins, _ := e2.db.Installs(context.Background(), store.InstallFilter{}); len(ins) != 0 {
				t.Fatalf("a refused install was recorded: %+v", ins)
			}
		})
	}
}
