package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/signature"
)

// TestSignCLI walks the documented flow: make a key, sign a skill, trust
// the key in config.yaml, verify; then each refusal with its reason code.
func TestSignCLI(t *testing.T) {
	t.Parallel()
	work, data := t.TempDir(), t.TempDir()
	keys := filepath.Join(work, "keys")
	if err := os.Mkdir(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, data, "key", "gen", "release-2026", "--dir", keys, "--json")
	if code != 0 {
		t.Fatalf("key gen: %d %s", code, errs)
	}
	var gen struct {
		KeyID, PrivateKeyFile, PublicKeyFile, PublicKey string
	}
	if err := json.Unmarshal([]byte(out), &gen); err != nil || !strings.HasPrefix(gen.KeyID, "SHA256:") || !strings.HasPrefix(gen.PublicKey, "-----BEGIN PUBLIC KEY-----\n") {
		t.Fatalf("key gen --json: %v %s", err, out)
	}
	for f, mode := range map[string]os.FileMode{gen.PrivateKeyFile: 0o600, gen.PublicKeyFile: 0o644} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != mode {
			t.Fatalf("%s: %v %v, want mode %v", f, fi, err, mode)
		}
	}
	if code, _, errs := run(t, data, "key", "gen", "release-2026", "--dir", keys); code != 1 || errs != "Error: "+gen.PrivateKeyFile+" exists: choose another name or remove it (a key is never overwritten)\n" {
		t.Fatalf("key gen again: %d %q", code, errs)
	}
	if code, _, errs := run(t, data, "key", "gen", "Bad Name"); code != 2 || !strings.Contains(errs, `key name "Bad Name": use lower-case letters`) {
		t.Fatalf("key gen bad name: %d %q", code, errs)
	}

	root := filepath.Join(work, "skills")
	write(t, root, map[string]string{
		"pdf/pdf-tools/SKILL.md":            "---\nname: pdf-tools\ndescription: Works with PDFs.\n---\n\nRead references/forms.md.\n",
		"pdf/pdf-tools/references/forms.md": "Forms.\n",
	})
	skillDir := filepath.Join(root, "pdf", "pdf-tools")
	code, out, errs = run(t, data, "sign", skillDir, "--key", gen.PrivateKeyFile, "--signer", "Release team", "--json")
	if code != 0 {
		t.Fatalf("sign: %d %s", code, errs)
	}
	var signed signature.Signed
	if err := json.Unmarshal([]byte(out), &signed); err != nil {
		t.Fatal(err)
	}
	// The digest signed is the one a scan records.
	if code, _, errs := run(t, data, "scan", "--root", root); code != 0 {
		t.Fatalf("scan: %s", errs)
	}
	_, out, _ = run(t, data, "show", "pdf-tools", "--json")
	if !strings.Contains(out, `"digest": "`+signed.Digest+`"`) {
		t.Fatalf("scan digest differs from the signed %s:\n%s", signed.Digest, out)
	}

	config := filepath.Join(work, "config.yaml")
	writeConfig := func(extra string) {
		t.Helper()
		c := "signing:\n  keys:\n    - name: release-2026\n      public_key: keys/release-2026.pub\n      trust: [first_party]\n" + extra
		if err := os.WriteFile(config, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig("")
	code, out, errs = run(t, data, "--config", config, "verify-signature", skillDir)
	if code != 0 || !strings.HasPrefix(out, "valid: pdf-tools "+signed.Digest+" signed for first_party by Release team with key release-2026 ("+gen.KeyID+") at ") {
		t.Fatalf("verify-signature: %d %q %q", code, out, errs)
	}
	verdict := func(args ...string) (int, string, string) {
		t.Helper()
		code, out, _ := run(t, data, append([]string{"--config", config, "verify-signature", skillDir, "--json"}, args...)...)
		var v struct {
			Valid  bool
			Reason string
			Error  string
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("verify-signature --json: %v %q", err, out)
		}
		return code, v.Reason, v.Error
	}
	if code, reason, msg := verdict("--trust", "imported"); code != 1 || reason != "untrusted_key" || msg != filepath.Join(skillDir, signature.FileName)+": untrusted key: key release-2026 is trusted for first_party, not for imported" {
		t.Fatalf("imported: %d %s %s", code, reason, msg)
	}
	writeConfig("      revoked: true\n      revoked_reason: key leaked\n")
	if code, reason, _ := verdict(); code != 1 || reason != "revoked" {
		t.Fatalf("revoked: %d %s", code, reason)
	}
	writeConfig("      not_after: 2020-01-01T00:00:00Z\n")
	if code, reason, _ := verdict(); code != 1 || reason != "expired" {
		t.Fatalf("expired: %d %s", code, reason)
	}
	writeConfig("      not_after: next year\n")
	if code, _, errs := run(t, data, "--config", config, "verify-signature", skillDir); code != 2 || errs != "Error: config "+config+`: signing.keys[0] (release-2026): not_after "next year": use an RFC 3339 time such as 2027-01-01T00:00:00Z`+"\n" {
		t.Fatalf("bad config: %d %q", code, errs)
	}
	writeConfig("      trusted: yes\n")
	if code, _, errs := run(t, data, "--config", config, "verify-signature", skillDir); code != 2 || !strings.Contains(errs, "unknown key signing.keys[0].trusted (did you mean trust?)") {
		t.Fatalf("unknown config key: %d %q", code, errs)
	}
	writeConfig("")
	if err := os.WriteFile(filepath.Join(skillDir, "references", "forms.md"), []byte("Forms!\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, reason, msg := verdict(); code != 1 || reason != "modified" || !strings.Contains(msg, "modified after signing: signed content "+signed.Digest+", the skill is now sha256:") {
		t.Fatalf("modified: %d %s %s", code, reason, msg)
	}
	if code, _, errs := run(t, data, "sign", skillDir); code != 2 || errs != "Error: sign needs --key FILE (a private key from 'skillgate key gen')\n" {
		t.Fatalf("sign without key: %d %q", code, errs)
	}
	if code, _, errs := run(t, data, "sign", skillDir, "--key", gen.PublicKeyFile); code != 2 || !strings.Contains(errs, `unusable key: a "PUBLIC KEY" PEM block, expected "PRIVATE KEY"`) {
		t.Fatalf("sign with the public key: %d %q", code, errs)
	}
}
