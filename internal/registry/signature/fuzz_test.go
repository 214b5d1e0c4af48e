package signature_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/registry/signature"
)

// FuzzVerifyEnvelope feeds arbitrary signature files to the verifier: it
// must refuse them with one of its reasons, never panic, and never accept
// one that is not the real signature.
func FuzzVerifyEnvelope(f *testing.F) {
	dir := filepath.Join(f.TempDir(), "pdf-tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: pdf-tools\ndescription: PDFs.\n---\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	s, err := signature.Sign(ctx, dir, key(1), signature.SignOptions{Signer: "fuzz", Now: func() time.Time { return t0 }})
	if err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(s.Path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"keyid":"","sig":""}]}`))
	f.Add([]byte(`{}`))
	kr, err := signature.NewKeyring([]signature.TrustedKey{{Name: "k", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}}})
	if err != nil {
		f.Fatal(err)
	}
	want := signature.Subject{Name: "pdf-tools", Digest: s.Digest}
	reasons := []error{signature.ErrMalformed, signature.ErrUntrustedKey, signature.ErrBadSignature, signature.ErrModified, signature.ErrWrongSkill}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := kr.VerifyEnvelope(ctx, data, want, signature.TrustFirstParty, t0)
		if err == nil {
			if p.Digest != s.Digest || p.Skill != "pdf-tools" || p.KeyName != "k" {
				t.Fatalf("accepted %+v", p)
			}
			return
		}
		for _, r := range reasons {
			if errors.Is(err, r) {
				return
			}
		}
		t.Fatalf("error without a reason: %v", err)
	})
}

// FuzzParsePublicKey: key files from configuration never panic the parser.
func FuzzParsePublicKey(f *testing.F) {
	b, err := signature.MarshalPublicKey(pub(key(1)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if k, err := signature.ParsePublicKey(data); err == nil && len(k) != 32 {
			t.Fatalf("key of %d bytes", len(k))
		}
	})
}
