package signature_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/skillgate/skillgate/internal/registry/signature"
)

// writeRoot makes a root with three skills, one of them with a
// manifest.json, one in a category directory.
func writeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeSkill(t, filepath.Join(root, "pdf"), "pdf-tools", map[string]string{"manifest.json": `{"schema":"x"}`, "scripts/run.sh": "echo hi\n"})
	writeSkill(t, root, "notes", nil)
	writeSkill(t, root, "triage", map[string]string{"references/howto.md": "How.\n"})
	return root
}

func signRoot(t *testing.T, root string, k ed25519.PrivateKey, trust string, at time.Time) *signature.SignedIndex {
	t.Helper()
	ix, err := signature.SignRoot(ctx, root, k, signature.IndexOptions{SignOptions: signature.SignOptions{Signer: "release team", Trust: trust, Now: func() time.Time { return at }}})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

var rootSkills = []string{"notes", "pdf/pdf-tools", "triage"}

// TestSignRoot: one index lists every valid skill of the root by its path,
// with the digest a scan computes and the manifest's digest; a skill the
// index vouches for has the provenance its own signature would give,
// naming the index.
func TestSignRoot(t *testing.T) {
	t.Parallel()
	root := writeRoot(t)
	writeSkill(t, root, "broken", nil)
	write(t, filepath.Join(root, "broken"), "SKILL.md", "no frontmatter\n")
	ix := signRoot(t, root, key(1), "", t0)
	if ix.Path != filepath.Join(root, signature.IndexFileName) || ix.Skills != 3 || len(ix.Skipped) != 1 || ix.Skipped[0].Rel != "broken" {
		t.Fatalf("signed %+v", ix)
	}
	id, _ := signature.KeyID(pub(key(1)))
	kr := keyring(t, signature.TrustedKey{Name: "release-2026", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}})
	rc := kr.Root(ctx, root, signature.TrustFirstParty, t0.Add(time.Hour))
	if x, err := rc.Index(); err != nil || x.Len() != 3 || x.KeyName != "release-2026" || !x.Lists("pdf/pdf-tools") || x.Lists("broken") {
		t.Fatalf("index %+v, %v", x, err)
	}
	dir := filepath.Join(root, "pdf", "pdf-tools")
	p, err := rc.Verify(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	digest, _, _ := signature.Digest(ctx, dir)
	want := signature.Provenance{Digest: digest, KeyName: "release-2026", KeyID: id, Index: ix.Path, Predicate: signature.Predicate{
		Skill: "pdf-tools", Signer: "release team", KeyID: id, SignedAt: t0, Trust: signature.TrustFirstParty,
		ManifestDigest: "sha256:" + sha(`{"schema":"x"}`)}}
	got, _ := json.Marshal(p)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Fatalf("provenance\n got %s\nwant %s", got, exp)
	}
	// The index is a dot file: no skill's digest includes it, not even a
	// skill at the root itself.
	if d2, _, _ := signature.Digest(ctx, dir); d2 != digest {
		t.Fatalf("digest changed by signing the root")
	}
}

// TestRootIndexRefusals: what the index vouches for, skill by skill, when
// the root or the index changed after signing, or the key may not sign.
func TestRootIndexRefusals(t *testing.T) {
	t.Parallel()
	good := signature.TrustedKey{Name: "release", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}}
	otherRoot := t.TempDir()
	writeSkill(t, otherRoot, "notes", map[string]string{"other.md": "Another root's notes.\n"})
	writeSkill(t, otherRoot, "elsewhere", nil)
	signRoot(t, otherRoot, key(1), "", t0)
	type verdict struct {
		err error
		msg string // with ROOT for the root
	}
	valid := verdict{}
	id, _ := signature.KeyID(pub(key(1)))
	untrusted := func(rel string) verdict {
		return verdict{signature.ErrUntrustedKey, "ROOT/.skillgate-index.dsse.json: untrusted key: signed by key " + id + ", which is not trusted; add its public key under signing.keys in config.yaml if you trust it; " + rel + " has no .skillgate.dsse.json of its own"}
	}
	cases := []struct {
		name   string
		keys   []signature.TrustedKey
		tamper func(t *testing.T, root string)
		trust  string
		want   map[string]verdict // by skill; unnamed ones are valid
	}{
		{name: "valid", keys: []signature.TrustedKey{good}},
		{name: "one byte modified", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, root string) {
			f, err := os.OpenFile(filepath.Join(root, "triage", "references", "howto.md"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("!"))
			f.Close()
		}, want: map[string]verdict{"triage": {signature.ErrModified, "ROOT/.skillgate-index.dsse.json: modified after signing: triage is now sha256:"}}},
		{name: "untrusted key", keys: []signature.TrustedKey{{Name: "someone", Public: pub(key(2)), Trust: []string{signature.TrustFirstParty}}},
			want: map[string]verdict{"notes": untrusted("notes"), "pdf/pdf-tools": untrusted("pdf/pdf-tools"), "triage": untrusted("triage")}},
		{name: "revoked key", keys: []signature.TrustedKey{{Name: "release", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}, Revoked: true, RevokedReason: "laptop stolen"}},
			want: map[string]verdict{"notes": {signature.ErrRevoked, "ROOT/.skillgate-index.dsse.json: revoked key: signed by key release, which is revoked (laptop stolen); sign the root again with a current key; notes has no .skillgate.dsse.json of its own"},
				"pdf/pdf-tools": {signature.ErrRevoked, "revoked (laptop stolen)"}, "triage": {signature.ErrRevoked, "revoked (laptop stolen)"}}},
		{name: "expired key", keys: []signature.TrustedKey{{Name: "release", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}, NotAfter: t0.Add(time.Minute)}},
			want: map[string]verdict{"notes": {signature.ErrExpired, "ROOT/.skillgate-index.dsse.json: key not valid now: key release expired at 2026-11-01T12:01:00Z; sign the root again with a current key; notes has no .skillgate.dsse.json of its own"},
				"pdf/pdf-tools": {signature.ErrExpired, "expired"}, "triage": {signature.ErrExpired, "expired"}}},
		{name: "signed for another tier", keys: []signature.TrustedKey{{Name: "both", Public: pub(key(1)), Trust: []string{signature.TrustImported, signature.TrustFirstParty}}},
			trust: signature.TrustImported, want: map[string]verdict{
				"notes":         {signature.ErrUntrustedKey, "ROOT/.skillgate-index.dsse.json: untrusted key: signed for first_party, served as imported; sign the root again with skillgate sign --root ROOT --key KEY; notes has no .skillgate.dsse.json of its own"},
				"pdf/pdf-tools": {signature.ErrUntrustedKey, "served as imported"}, "triage": {signature.ErrUntrustedKey, "served as imported"}}},
		{name: "swapped envelope from another root", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, root string) {
			write(t, root, signature.IndexFileName, string(read(t, otherRoot, signature.IndexFileName)))
		}, want: map[string]verdict{
			"notes":         {signature.ErrModified, "ROOT/.skillgate-index.dsse.json: modified after signing: notes is now sha256:"},
			"pdf/pdf-tools": {signature.ErrUnsigned, "not signed: pdf/pdf-tools is not in the signed index ROOT/.skillgate-index.dsse.json and has no .skillgate.dsse.json of its own; sign the root again (skillgate sign --root ROOT --key KEY) or the skill (skillgate sign DIR --key KEY)"},
			"triage":        {signature.ErrUnsigned, "not signed: triage is not in the signed index"}}},
		{name: "truncated envelope", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, root string) {
			b := read(t, root, signature.IndexFileName)
			write(t, root, signature.IndexFileName, string(b[:len(b)/2]))
		}, want: map[string]verdict{
			"notes":         {signature.ErrMalformed, "ROOT/.skillgate-index.dsse.json: malformed signature: not a DSSE envelope (not valid JSON at byte "},
			"pdf/pdf-tools": {signature.ErrMalformed, "sign the root again with skillgate sign --root ROOT --key KEY; pdf/pdf-tools has no .skillgate.dsse.json of its own"},
			"triage":        {signature.ErrMalformed, "not a DSSE envelope"}}},
		{name: "index is a link", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, root string) {
			rm(t, root, signature.IndexFileName)
			if err := os.Symlink(filepath.Join(otherRoot, signature.IndexFileName), filepath.Join(root, signature.IndexFileName)); err != nil {
				t.Fatal(err)
			}
		}, want: map[string]verdict{"notes": {signature.ErrMalformed, "ROOT/.skillgate-index.dsse.json: malformed signature: a symbolic link, not a regular file; sign the root again with skillgate sign --root ROOT --key KEY; notes has no .skillgate.dsse.json of its own"},
			"pdf/pdf-tools": {signature.ErrMalformed, "symbolic link"}, "triage": {signature.ErrMalformed, "symbolic link"}}},
		{name: "skill added with its own signature", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, root string) {
			sign(t, writeSkill(t, root, "added", nil), key(1), signature.TrustFirstParty, t0)
		}, want: map[string]verdict{"added": valid}},
		{name: "skill added unsigned", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, root string) {
			writeSkill(t, root, "added", nil)
		}, want: map[string]verdict{"added": {signature.ErrUnsigned, "not signed: added is not in the signed index ROOT/.skillgate-index.dsse.json and has no .skillgate.dsse.json of its own"}}},
		{name: "own signature beside a bad index", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, root string) {
			sign(t, filepath.Join(root, "notes"), key(1), signature.TrustFirstParty, t0)
			write(t, root, signature.IndexFileName, "{}")
		}, want: map[string]verdict{"notes": valid,
			"triage":        {signature.ErrMalformed, "ROOT/.skillgate-index.dsse.json: malformed signature: payload type \"\", expected \"application/vnd.in-toto+json\"; sign the root again with skillgate sign --root ROOT --key KEY; triage has no .skillgate.dsse.json of its own"},
			"pdf/pdf-tools": {signature.ErrMalformed, "payload type"}}},
		{name: "the index decides for what it lists", keys: []signature.TrustedKey{good}, tamper: func(t *testing.T, root string) {
			write(t, filepath.Join(root, "notes"), "later.md", "Changed after the root was signed.\n")
			sign(t, filepath.Join(root, "notes"), key(1), signature.TrustFirstParty, t0)
		}, want: map[string]verdict{"notes": {signature.ErrModified, "ROOT/.skillgate-index.dsse.json: modified after signing: notes is now sha256:"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := writeRoot(t)
			signRoot(t, root, key(1), signature.TrustFirstParty, t0)
			skills := append([]string(nil), rootSkills...)
			if tc.tamper != nil {
				tc.tamper(t, root)
			}
			if _, err := os.Stat(filepath.Join(root, "added")); err == nil {
				skills = append(skills, "added")
			}
			trust := tc.trust
			if trust == "" {
				trust = signature.TrustFirstParty
			}
			rc := keyring(t, tc.keys...).Root(ctx, root, trust, t0.Add(time.Hour))
			for _, rel := range skills {
				w := tc.want[rel]
				p, err := rc.Verify(ctx, filepath.Join(root, filepath.FromSlash(rel)))
				if w.err == nil {
					if err != nil || p == nil {
						t.Errorf("%s: Verify = %v, %v", rel, p, err)
					}
					continue
				}
				if !errors.Is(err, w.err) {
					t.Errorf("%s: Verify error = %v, want %v", rel, err, w.err)
					continue
				}
				msg := strings.ReplaceAll(err.Error(), root, "ROOT")
				if !strings.Contains(msg, w.msg) {
					t.Errorf("%s: Verify error\n %s\nwant it to contain\n %s", rel, msg, w.msg)
				}
			}
		})
	}
}

// TestRootIndexRotation: the root is signed again with the new key before
// the old one expires; after the old key's not_after only the new index
// verifies.
func TestRootIndexRotation(t *testing.T) {
	t.Parallel()
	expiry := t0.Add(30 * 24 * time.Hour)
	kr := keyring(t,
		signature.TrustedKey{Name: "release-2026", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}, NotAfter: expiry},
		signature.TrustedKey{Name: "release-2027", Public: pub(key(2)), Trust: []string{signature.TrustFirstParty}, NotBefore: t0.Add(24 * time.Hour)},
	)
	oldRoot, newRoot := writeRoot(t), writeRoot(t)
	signRoot(t, oldRoot, key(1), "", t0)
	signRoot(t, newRoot, key(1), "", t0)
	if _, err := kr.Root(ctx, newRoot, signature.TrustFirstParty, t0.Add(2*24*time.Hour)).Index(); err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	signRoot(t, newRoot, key(2), "", t0.Add(2*24*time.Hour))
	after := expiry.Add(time.Second)
	rc := kr.Root(ctx, newRoot, signature.TrustFirstParty, after)
	for _, rel := range rootSkills {
		if p, err := rc.Verify(ctx, filepath.Join(newRoot, filepath.FromSlash(rel))); err != nil || p.KeyName != "release-2027" {
			t.Fatalf("%s after rotation: %v %v", rel, p, err)
		}
	}
	if _, err := kr.Root(ctx, oldRoot, signature.TrustFirstParty, after).Index(); !errors.Is(err, signature.ErrExpired) {
		t.Fatalf("old index after rotation: %v, want %v", err, signature.ErrExpired)
	}
}

// signedIndex wraps payload in an envelope signed by k, as SignRoot would:
// hostile statements with a valid signature reach the statement's reader.
func signedIndex(t testing.TB, k ed25519.PrivateKey, payload string) []byte {
	t.Helper()
	id, _ := signature.KeyID(pub(k))
	sig := ed25519.Sign(k, dsse.PAE(signature.PayloadType, []byte(payload)))
	b, err := json.Marshal(map[string]any{"payloadType": signature.PayloadType, "payload": base64.StdEncoding.EncodeToString([]byte(payload)),
		"signatures": []map[string]string{{"keyid": id, "sig": base64.StdEncoding.EncodeToString(sig)}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// statement is an index statement with subjects and extra predicate
// members.
func statement(t testing.TB, subjects, predicate string) string {
	t.Helper()
	id, _ := signature.KeyID(pub(key(1)))
	return `{"_type":"https://in-toto.io/Statement/v1","subject":[` + subjects + `],"predicateType":"` + signature.IndexPredicateType +
		`","predicate":{"signer":"release team","keyId":"` + id + `","signedAt":"2026-11-01T12:00:00Z","trust":"first_party"` + predicate + `}}`
}

func subject(name string, n int) string {
	return fmt.Sprintf(`{"name":%q,"digest":{"sha256":"%064x"}}`, name, n)
}

// TestVerifyIndexRefusals: an index is outside input; what a valid
// signature covers is read as strictly as the envelope, and each refusal
// names the field and the fix.
func TestVerifyIndexRefusals(t *testing.T) {
	t.Parallel()
	kr := keyring(t, signature.TrustedKey{Name: "release", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}})
	const fix = "; sign the root again with skillgate sign --root ROOT --key KEY"
	cases := []struct {
		name string
		data []byte
		msg  string
	}{
		{"valid", signedIndex(t, key(1), statement(t, subject("a", 1)+","+subject("b/c", 2), `,"manifests":{"b/c":"sha256:`+strings.Repeat("0", 64)+`"}`)), ""},
		{"duplicate subject", signedIndex(t, key(1), statement(t, subject("a", 1)+","+subject("a", 2), "")),
			"malformed signature: subject[1].name a: listed twice" + fix},
		{"path leaving the root", signedIndex(t, key(1), statement(t, subject("../escape", 1), "")),
			`malformed signature: subject[0].name "../escape": a path that leaves the root` + fix},
		{"absolute path", signedIndex(t, key(1), statement(t, subject("/etc/skills", 1), "")),
			`malformed signature: subject[0].name "/etc/skills": an absolute path; name skills by their path relative to the root` + fix},
		{"non-canonical path", signedIndex(t, key(1), statement(t, subject("a//b", 1), "")),
			`malformed signature: subject[0].name "a//b": not a clean relative path (no empty, '.' or '..' elements, no trailing '/')` + fix},
		{"hidden directory", signedIndex(t, key(1), statement(t, subject("a/.git", 1), "")),
			`malformed signature: subject[0].name "a/.git": element ".git" is a directory a scan never reads` + fix},
		{"control character", signedIndex(t, key(1), statement(t, subject("a\nb", 1), "")),
			`malformed signature: subject[0].name "a\nb": a control character or a backslash` + fix},
		{"unknown statement field", signedIndex(t, key(1), strings.Replace(statement(t, subject("a", 1), ""), `"_type"`, `"extra":1,"_type"`, 1)),
			`malformed signature: not an in-toto statement (statement: unknown field "extra")` + fix},
		{"unknown subject field", signedIndex(t, key(1), statement(t, `{"name":"a","uri":"x","digest":{"sha256":"`+strings.Repeat("0", 64)+`"}}`, "")),
			`malformed signature: subject[0]: unknown field "uri"` + fix},
		{"unknown predicate field", signedIndex(t, key(1), statement(t, subject("a", 1), `,"Signer":"mallory"`)),
			`malformed signature: not an in-toto statement (predicate: unknown field "Signer")` + fix},
		{"repeated predicate field", signedIndex(t, key(1), statement(t, subject("a", 1), `,"trust":"first_party"`)),
			`malformed signature: not an in-toto statement (predicate: duplicate key "trust")` + fix},
		{"other digest algorithm", signedIndex(t, key(1), statement(t, `{"name":"a","digest":{"sha512":"00"}}`, "")),
			`malformed signature: subject[0].digest: only one sha256 digest is allowed, found "sha512"` + fix},
		{"short digest", signedIndex(t, key(1), statement(t, `{"name":"a","digest":{"sha256":"abc"}}`, "")),
			`malformed signature: subject[0].digest.sha256 of a: not 64 lower-case hexadecimal digits` + fix},
		{"manifest of no subject", signedIndex(t, key(1), statement(t, subject("a", 1), `,"manifests":{"b":"sha256:`+strings.Repeat("0", 64)+`"}`)),
			`malformed signature: predicate.manifests: "b" is not a subject` + fix},
		{"no subject", signedIndex(t, key(1), statement(t, "", "")), "malformed signature: no subject" + fix},
		{"a skill's statement", signedIndex(t, key(1), strings.Replace(statement(t, subject("a", 1), ""), signature.IndexPredicateType, signature.PredicateType, 1)),
			`malformed signature: predicateType "https://skillgate.dev/attestation/skill-signature/v1", expected "https://skillgate.dev/attestation/skill-index/v1"` + fix},
		{"trailing data", signedIndex(t, key(1), statement(t, subject("a", 1), "")+"{}"),
			"malformed signature: not an in-toto statement (trailing data after the JSON object)" + fix},
		{"duplicate envelope key", []byte(`{"payloadType":"x","payloadType":"y"}`),
			`malformed signature: not a DSSE envelope (envelope: duplicate key "payloadType")` + fix},
		{"too large", make([]byte, signature.MaxIndexBytes+1), "malformed signature: larger than 67108864 bytes" + fix},
		{"signed by another key", signedIndex(t, key(2), statement(t, subject("a", 1), "")),
			"untrusted key: signed by key SHA256:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ix, err := kr.VerifyIndex(ctx, tc.data, signature.TrustFirstParty, t0)
			if tc.msg == "" {
				if err != nil || ix.Len() != 2 {
					t.Fatalf("VerifyIndex = %v, %v", ix, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("VerifyIndex accepted it")
			}
			if !strings.HasPrefix(err.Error(), tc.msg) {
				t.Fatalf("VerifyIndex error\n %s\nwant\n %s", err, tc.msg)
			}
		})
	}
}

// TestRootVerifyPaths: a skill is checked against its root's index only by
// the path a scan reaches it by: never through a link, never outside the
// root.
func TestRootVerifyPaths(t *testing.T) {
	t.Parallel()
	root := writeRoot(t)
	signRoot(t, root, key(1), "", t0)
	elsewhere := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "pdf"), filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	kr := keyring(t, signature.TrustedKey{Name: "release", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}})
	rc := kr.Root(ctx, root, signature.TrustFirstParty, t0.Add(time.Hour))
	for _, tc := range []struct{ dir, msg string }{
		{filepath.Join(root, "linked", "pdf-tools"), "ROOT/linked/pdf-tools is reached through a symbolic link under ROOT: a scan never follows one"},
		{elsewhere, "ELSEWHERE is not under the root ROOT"},
		{root + string(filepath.Separator) + "..", "ROOT/.. is not under the root ROOT"},
	} {
		_, err := rc.Verify(ctx, tc.dir)
		if err == nil {
			t.Fatalf("%s: verified", tc.dir)
		}
		msg := strings.ReplaceAll(strings.ReplaceAll(err.Error(), elsewhere, "ELSEWHERE"), root, "ROOT")
		if msg != tc.msg {
			t.Errorf("Verify(%s) error\n %s\nwant\n %s", tc.dir, msg, tc.msg)
		}
	}
}
