package signature_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/registry/signature"
)

var (
	t0  = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ctx = context.Background()
)

// key makes a deterministic key from seed byte b.
func key(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// writeSkill makes a skill directory name under parent with files.
func writeSkill(t *testing.T, parent, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	all := map[string]string{"SKILL.md": "---\nname: " + name + "\ndescription: Test skill " + name + ".\n---\n\n# " + name + "\n"}
	for p, c := range files {
		all[p] = c
	}
	for p, c := range all {
		fp := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func sign(t *testing.T, dir string, k ed25519.PrivateKey, trust string, at time.Time) *signature.Signed {
	t.Helper()
	s, err := signature.Sign(ctx, dir, k, signature.SignOptions{Signer: "release team", Trust: trust, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keyring(t *testing.T, keys ...signature.TrustedKey) *signature.Keyring {
	t.Helper()
	k, err := signature.NewKeyring(keys)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	dir := writeSkill(t, t.TempDir(), "pdf-tools", map[string]string{"scripts/run.sh": "echo hi\n", "manifest.json": `{"schema":"x"}`})
	signed := sign(t, dir, key(1), signature.TrustFirstParty, t0)
	digest, name, err := signature.Digest(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if name != "pdf-tools" || signed.Digest != digest || !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("signed %s for %s, digest now %s", signed.Digest, name, digest)
	}
	// The signature file is not part of the digest it signs.
	if d2, _, _ := signature.Digest(ctx, dir); d2 != digest {
		t.Fatalf("digest changed by signing: %s -> %s", digest, d2)
	}
	fi, err := os.Stat(filepath.Join(dir, signature.FileName))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("signature file: %v %v", fi, err)
	}
	id, _ := signature.KeyID(pub(key(1)))
	kr := keyring(t, signature.TrustedKey{Name: "release-2026", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}})
	p, err := kr.Verify(ctx, dir, signature.TrustFirstParty, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := signature.Provenance{Digest: digest, KeyName: "release-2026", KeyID: id, Predicate: signature.Predicate{
		Skill: "pdf-tools", Signer: "release team", KeyID: id, SignedAt: t0, Trust: signature.TrustFirstParty,
		ManifestDigest: "sha256:" + sha(`{"schema":"x"}`)}}
	got, _ := json.Marshal(p)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Fatalf("provenance\n got %s\nwant %s", got, exp)
	}
	if !strings.HasPrefix(id, "SHA256:") {
		t.Fatalf("key id %q", id)
	}
}

func TestVerifyRefusals(t *testing.T) {
	t.Parallel()
	good := signature.TrustedKey{Name: "release", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}}
	other := writeSkill(t, t.TempDir(), "other-skill", nil)
	sign(t, other, key(1), signature.TrustFirstParty, t0)
	cases := []struct {
		name    string
		keys    []signature.TrustedKey
		tamper  func(t *testing.T, dir string)
		trust   string
		at      time.Time
		wantErr error
		msg     string
	}{
		{name: "valid", keys: []signature.TrustedKey{good}},
		{name: "unsigned", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, dir string) { rm(t, dir, signature.FileName) },
			wantErr: signature.ErrUnsigned, msg: "not signed: no .skillgate.dsse.json; sign it with skillgate sign DIR --key KEY"},
		{name: "modified byte", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, dir string) { write(t, dir, "notes.md", "Notes!\n") },
			wantErr: signature.ErrModified, msg: "modified after signing: signed content sha256:"},
		{name: "added file", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, dir string) { write(t, dir, "extra.md", "x") },
			wantErr: signature.ErrModified},
		{name: "untrusted key", keys: []signature.TrustedKey{{Name: "someone", Public: pub(key(2)), Trust: []string{signature.TrustFirstParty}}},
			wantErr: signature.ErrUntrustedKey, msg: "which is not trusted; add its public key under signing.keys in config.yaml if you trust it"},
		{name: "revoked", keys: []signature.TrustedKey{{Name: "release", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}, Revoked: true, RevokedReason: "laptop stolen"}},
			wantErr: signature.ErrRevoked, msg: ".skillgate.dsse.json: revoked key: signed by key release, which is revoked (laptop stolen); sign the skill again with a current key"},
		{name: "expired", keys: []signature.TrustedKey{{Name: "release", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}, NotAfter: t0.Add(time.Minute)}},
			wantErr: signature.ErrExpired, msg: ".skillgate.dsse.json: key not valid now: key release expired at 2026-11-01T12:01:00Z; sign the skill again with a current key"},
		{name: "not yet valid", keys: []signature.TrustedKey{{Name: "release", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}, NotBefore: t0.Add(48 * time.Hour)}},
			wantErr: signature.ErrExpired, msg: ".skillgate.dsse.json: key not valid now: key release is valid from 2026-11-03T12:00:00Z"},
		{name: "key for another tier", keys: []signature.TrustedKey{{Name: "community", Public: pub(key(1)), Trust: []string{signature.TrustImported}}},
			wantErr: signature.ErrUntrustedKey, msg: ".skillgate.dsse.json: untrusted key: key community is trusted for imported, not for first_party"},
		{name: "signed for another tier", keys: []signature.TrustedKey{{Name: "both", Public: pub(key(1)), Trust: []string{signature.TrustImported, signature.TrustFirstParty}}},
			trust: signature.TrustImported, wantErr: signature.ErrUntrustedKey, msg: "untrusted key: signed for first_party, served as imported"},
		{name: "swapped envelope", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, dir string) {
			b, err := os.ReadFile(filepath.Join(other, signature.FileName))
			if err != nil {
				t.Fatal(err)
			}
			write(t, dir, signature.FileName, string(b))
		}, wantErr: signature.ErrWrongSkill, msg: `.skillgate.dsse.json: signature of another skill: it signs skill "other-skill", this is "pdf-tools"; sign this skill with skillgate sign`},
		{name: "truncated", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, dir string) {
			b := read(t, dir, signature.FileName)
			write(t, dir, signature.FileName, string(b[:len(b)/2]))
		}, wantErr: signature.ErrMalformed, msg: ".skillgate.dsse.json: malformed signature: not a DSSE envelope"},
		{name: "altered payload", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, dir string) {
			var env map[string]any
			if err := json.Unmarshal(read(t, dir, signature.FileName), &env); err != nil {
				t.Fatal(err)
			}
			p, _ := base64.StdEncoding.DecodeString(env["payload"].(string))
			env["payload"] = base64.StdEncoding.EncodeToString(bytes.Replace(p, []byte("release team"), []byte("mallory team"), 1))
			b, _ := json.Marshal(env)
			write(t, dir, signature.FileName, string(b))
		}, wantErr: signature.ErrBadSignature, msg: ".skillgate.dsse.json: invalid signature: the signature by key release does not verify: the envelope was altered or made with another key"},
		{name: "link", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, dir string) {
			rm(t, dir, signature.FileName)
			if err := os.Symlink(filepath.Join(other, signature.FileName), filepath.Join(dir, signature.FileName)); err != nil {
				t.Fatal(err)
			}
		}, wantErr: signature.ErrMalformed, msg: "malformed signature: not a regular file"},
		{name: "too many signatures", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, dir string) {
			var env map[string]any
			_ = json.Unmarshal(read(t, dir, signature.FileName), &env)
			s := env["signatures"].([]any)
			env["signatures"] = []any{s[0], s[0], s[0], s[0], s[0]}
			b, _ := json.Marshal(env)
			write(t, dir, signature.FileName, string(b))
		}, wantErr: signature.ErrMalformed, msg: "5 signatures, at most 4"},
		{name: "unknown field", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, dir string) {
			b := read(t, dir, signature.FileName)
			write(t, dir, signature.FileName, strings.Replace(string(b), `"payloadType"`, `"extra": 1, "payloadType"`, 1))
		}, wantErr: signature.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeSkill(t, t.TempDir(), "pdf-tools", map[string]string{"notes.md": "Notes.\n"})
			sign(t, dir, key(1), signature.TrustFirstParty, t0)
			if tc.tamper != nil {
				tc.tamper(t, dir)
			}
			trust := tc.trust
			if trust == "" {
				trust = signature.TrustFirstParty
			}
			p, err := keyring(t, tc.keys...).Verify(ctx, dir, trust, t0.Add(time.Hour))
			if tc.wantErr == nil {
				if err != nil || p == nil {
					t.Fatalf("Verify = %v, %v", p, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Verify error = %v, want %v", err, tc.wantErr)
			}
			msg := strings.ReplaceAll(err.Error(), dir, "DIR")
			if !strings.Contains(msg, tc.msg) {
				t.Fatalf("Verify error\n %s\nwant it to contain\n %s", msg, tc.msg)
			}
		})
	}
}

// TestRotation: a new key is added beside the old one before the old one
// expires; skills are signed again with the new key; after the old key's
// not_after only the new signatures verify.
func TestRotation(t *testing.T) {
	t.Parallel()
	expiry := t0.Add(30 * 24 * time.Hour)
	kr := keyring(t,
		signature.TrustedKey{Name: "release-2026", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}, NotAfter: expiry},
		signature.TrustedKey{Name: "release-2027", Public: pub(key(2)), Trust: []string{signature.TrustFirstParty}, NotBefore: t0.Add(24 * time.Hour)},
	)
	root := t.TempDir()
	oldSigned := writeSkill(t, root, "alpha", nil)
	reSigned := writeSkill(t, root, "beta", nil)
	sign(t, oldSigned, key(1), signature.TrustFirstParty, t0)
	sign(t, reSigned, key(1), signature.TrustFirstParty, t0)
	if _, err := kr.Verify(ctx, reSigned, signature.TrustFirstParty, t0.Add(2*24*time.Hour)); err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	sign(t, reSigned, key(2), signature.TrustFirstParty, t0.Add(2*24*time.Hour))
	after := expiry.Add(time.Second)
	if p, err := kr.Verify(ctx, reSigned, signature.TrustFirstParty, after); err != nil || p.KeyName != "release-2027" {
		t.Fatalf("re-signed skill after rotation: %v %v", p, err)
	}
	if _, err := kr.Verify(ctx, oldSigned, signature.TrustFirstParty, after); !errors.Is(err, signature.ErrExpired) {
		t.Fatalf("old signature after rotation: %v, want %v", err, signature.ErrExpired)
	}
}

func TestNewKeyringRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		keys []signature.TrustedKey
		msg  string
	}{
		{[]signature.TrustedKey{{Public: pub(key(1)), Trust: []string{"first_party"}}}, "signing key 1: a name is required"},
		{[]signature.TrustedKey{{Name: "a", Public: pub(key(1)), Trust: []string{"first_party"}}, {Name: "a", Public: pub(key(2)), Trust: []string{"first_party"}}}, "signing key 2 (a): the name is used twice"},
		{[]signature.TrustedKey{{Name: "a", Public: pub(key(1)), Trust: []string{"first_party"}}, {Name: "b", Public: pub(key(1)), Trust: []string{"first_party"}}}, "signing key 2 (b): the same key as a"},
		{[]signature.TrustedKey{{Name: "a", Public: pub(key(1))}}, "signing key 1 (a): list the tiers it may sign for (first_party, imported)"},
		{[]signature.TrustedKey{{Name: "a", Public: pub(key(1)), Trust: []string{"core"}}}, `signing key 1 (a): trust "core": use first_party or imported`},
		{[]signature.TrustedKey{{Name: "a", Public: []byte("short"), Trust: []string{"imported"}}}, "signing key 1 (a): unusable key: not an Ed25519 public key"},
		{[]signature.TrustedKey{{Name: "a", Public: pub(key(1)), Trust: []string{"imported"}, NotBefore: t0, NotAfter: t0}}, "signing key 1 (a): not_before must be before not_after"},
	}
	for _, tc := range cases {
		if _, err := signature.NewKeyring(tc.keys); err == nil || err.Error() != tc.msg {
			t.Errorf("NewKeyring error = %v, want %q", err, tc.msg)
		}
	}
}

func TestKeyFiles(t *testing.T) {
	t.Parallel()
	priv, err := signature.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pemPriv, err := signature.MarshalPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pemPub, err := signature.MarshalPublicKey(pub(priv))
	if err != nil {
		t.Fatal(err)
	}
	back, err := signature.ParsePrivateKey(pemPriv)
	if err != nil || !back.Equal(priv) {
		t.Fatalf("private key round trip: %v", err)
	}
	backPub, err := signature.ParsePublicKey(pemPub)
	if err != nil || !backPub.Equal(pub(priv)) {
		t.Fatalf("public key round trip: %v", err)
	}
	bad := []struct {
		data []byte
		priv bool
		msg  string
	}{
		{[]byte("hello"), true, `unusable key: no PEM block (expected "-----BEGIN PRIVATE KEY-----")`},
		{pemPub, true, `unusable key: a "PUBLIC KEY" PEM block, expected "PRIVATE KEY"`},
		{pemPriv, false, `unusable key: a "PRIVATE KEY" PEM block, expected "PUBLIC KEY"`},
		{append(append([]byte{}, pemPub...), "junk"...), false, "unusable key: data after the PEM block"},
		{bytes.Repeat([]byte("a"), signature.MaxKeyFileBytes+1), false, "unusable key: larger than 16384 bytes"},
	}
	for _, b := range bad {
		var err error
		if b.priv {
			_, err = signature.ParsePrivateKey(b.data)
		} else {
			_, err = signature.ParsePublicKey(b.data)
		}
		if err == nil || err.Error() != b.msg || !errors.Is(err, signature.ErrKey) {
			t.Errorf("parse error = %v, want %q", err, b.msg)
		}
	}
}

func TestSignRefusals(t *testing.T) {
	t.Parallel()
	dir := writeSkill(t, t.TempDir(), "tool", nil)
	for _, tc := range []struct {
		opts signature.SignOptions
		msg  string
	}{
		{signature.SignOptions{}, "sign: the signer must be a name of one line, at most 256 bytes"},
		{signature.SignOptions{Signer: "a\nb"}, "sign: the signer must be a name of one line, at most 256 bytes"},
		{signature.SignOptions{Signer: "a", Trust: "core"}, `sign: trust "core": use first_party or imported`},
	} {
		if _, err := signature.Sign(ctx, dir, key(1), tc.opts); err == nil || err.Error() != tc.msg {
			t.Errorf("Sign error = %v, want %q", err, tc.msg)
		}
	}
	empty := t.TempDir()
	if _, err := signature.Sign(ctx, empty, key(1), signature.SignOptions{Signer: "a"}); err == nil || !strings.Contains(err.Error(), "holds no SKILL.md: give the directory of one skill") {
		t.Errorf("Sign of a directory without SKILL.md: %v", err)
	}
	if _, err := os.Stat(filepath.Join(empty, signature.FileName)); !os.IsNotExist(err) {
		t.Errorf("a refused sign left a file: %v", err)
	}
}

func rm(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
