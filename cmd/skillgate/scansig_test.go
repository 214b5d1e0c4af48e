package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trustedKey makes the key release in data/keys and returns the signing
// section of a config.yaml trusting it for first_party skills.
func trustedKey(t *testing.T, data string) string {
	t.Helper()
	keys := filepath.Join(data, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(keys, "release.key")); err != nil {
		if code, _, errs := run(t, data, "key", "gen", "release", "--dir", keys); code != 0 {
			t.Fatalf("key gen: %s", errs)
		}
	}
	return "signing:\n  keys:\n    - name: release\n      public_key: " + filepath.Join(keys, "release.pub") + "\n      trust: [first_party]\n"
}

// signSkill signs dir with the key trustedKey made in data.
func signSkill(t *testing.T, data, dir string) {
	t.Helper()
	if code, out, errs := run(t, data, "sign", dir, "--key", filepath.Join(data, "keys", "release.key")); code != 0 {
		t.Fatalf("sign %s: %s %s", dir, out, errs)
	}
}

// TestFirstPartySignatures: a first_party root takes only skills signed
// by a key trusted for first_party; every other is rejected at scan with
// the reason, and a rescan sees a signature added, a file changed and a
// key revoked, although no skill file changed for the first and last.
func TestFirstPartySignatures(t *testing.T) {
	t.Parallel()
	root, data := t.TempDir(), t.TempDir()
	skills := map[string]string{}
	for _, n := range []string{"signed", "unsigned", "modified", "stranger"} {
		skills[n+"/SKILL.md"] = "---\nname: " + n + "\ndescription: The " + n + " skill.\n---\n"
	}
	write(t, root, skills)
	signing := trustedKey(t, data)
	signSkill(t, data, filepath.Join(root, "signed"))
	signSkill(t, data, filepath.Join(root, "modified"))
	write(t, root, map[string]string{"modified/notes.md": "added after signing\n"})
	other := t.TempDir()
	if code, _, errs := run(t, other, "key", "gen", "stranger", "--dir", other); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := run(t, other, "sign", filepath.Join(root, "stranger"), "--key", filepath.Join(other, "stranger.key")); code != 0 {
		t.Fatal(errs)
	}
	config := func(extra string) {
		t.Helper()
		c := "roots:\n  - path: " + root + "\n    trust: first_party\n" + signing + extra
		if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config("")
	code, out, errs := run(t, data, "scan")
	if code != 0 {
		t.Fatalf("scan: %d %s %s", code, out, errs)
	}
	for _, want := range []string{
		"4 skills (1 valid, 3 rejected)",
		"rejected: " + filepath.Join(root, "unsigned") + "\n  - signature: not signed: no .skillgate.dsse.json; sign the skill with skillgate sign DIR --key KEY, or the root with skillgate sign --root " + root + " --key KEY\n",
		"rejected: " + filepath.Join(root, "modified") + "\n  - signature: .skillgate.dsse.json: modified after signing: signed content sha256:",
		"rejected: " + filepath.Join(root, "stranger") + "\n  - signature: .skillgate.dsse.json: untrusted key: signed by key SHA256:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scan output lacks %q:\n%s", want, out)
		}
	}
	// Signing the unsigned skill changes none of its files: the rescan
	// still sees it.
	signSkill(t, data, filepath.Join(root, "unsigned"))
	if _, out, _ = run(t, data, "scan"); !strings.Contains(out, "4 skills (2 valid, 2 rejected)") {
		t.Fatalf("after signing a skill:\n%s", out)
	}
	// Revoking the key rejects what it signed at the next scan.
	config("      revoked: true\n      revoked_reason: lost\n")
	if _, out, _ = run(t, data, "scan"); !strings.Contains(out, "4 skills (0 valid, 4 rejected)") ||
		!strings.Contains(out, "signature: .skillgate.dsse.json: revoked key: signed by key release, which is revoked (lost)") {
		t.Fatalf("after revoking the key:\n%s", out)
	}
	// Without trusted keys, a first_party root takes nothing.
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte("roots:\n  - path: "+root+"\n    trust: first_party\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, out, _ = run(t, data, "scan"); !strings.Contains(out, "signature: .skillgate.dsse.json: untrusted key") {
		t.Fatalf("without keys:\n%s", out)
	}
}

// TestFirstPartyIndex: a first_party root signed by one index (sign
// --root) takes its skills with one verification; a skill changed after
// signing is rejected naming the skill, the index and the fix, the others
// stay valid; a skill added later with its own signature is taken; signing
// the root again (the index changed, no skill file did) is seen by the
// rescan; the lock records the index's signer; revoking the key rejects
// every skill, whether it depends on the index or on its own signature.
// show names the signer and the index that vouched for a skill.
func TestFirstPartyIndex(t *testing.T) {
	t.Parallel()
	root, data := t.TempDir(), t.TempDir()
	skills := map[string]string{}
	for _, n := range []string{"alpha", "beta", "tools/gamma"} {
		skills[n+"/SKILL.md"] = "---\nname: " + filepath.Base(n) + "\ndescription: The " + n + " skill.\n---\n"
	}
	write(t, root, skills)
	signing := trustedKey(t, data)
	index := filepath.Join(root, ".skillgate-index.dsse.json")
	signRoot := func() {
		t.Helper()
		code, out, errs := run(t, data, "sign", "--root", root, "--key", filepath.Join(data, "keys", "release.key"))
		if code != 0 || !strings.HasPrefix(out, "signed ") || !strings.HasSuffix(out, " for first_party by release (key SHA256:"+out[strings.Index(out, "SHA256:")+7:strings.Index(out, "): ")]+"): "+index+"\n") {
			t.Fatalf("sign --root: %d %q %s", code, out, errs)
		}
	}
	signRoot()
	config := func(extra string) {
		t.Helper()
		c := "roots:\n  - path: " + root + "\n    trust: first_party\n" + signing + extra
		if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config("")
	scan := func(want ...string) {
		t.Helper()
		code, out, errs := run(t, data, "scan")
		if code != 0 {
			t.Fatalf("scan: %d %s %s", code, out, errs)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("scan output lacks %q:\n%s", w, out)
			}
		}
	}
	scan("3 skills (3 valid, 0 rejected)")

	// One byte changed after signing: that skill only is rejected.
	write(t, root, map[string]string{"beta/SKILL.md": skills["beta/SKILL.md"] + "!"})
	scan("3 skills (2 valid, 1 rejected)",
		"rejected: "+filepath.Join(root, "beta")+"\n  - signature: "+index+": modified after signing: beta is now sha256:",
		"; review the change and sign the root again with skillgate sign --root "+root+" --key KEY\n")
	code, _, errs := run(t, data, "verify-signature", root)
	if code != 1 || !strings.Contains(errs, "beta: "+index+": modified after signing: beta is now sha256:") ||
		!strings.Contains(errs, "1 of the 3 skills "+index+" lists are not what it signed") {
		t.Fatalf("verify-signature ROOT: %d %s", code, errs)
	}
	code, out, errs := run(t, data, "verify-signature", filepath.Join(root, "tools", "gamma"), "--root", root)
	if code != 0 || !strings.HasPrefix(out, "valid: gamma sha256:") || !strings.HasSuffix(out, " (index "+index+")\n") {
		t.Fatalf("verify-signature DIR --root: %d %q %s", code, out, errs)
	}

	// A skill added after the index, with a signature of its own.
	write(t, root, map[string]string{"delta/SKILL.md": "---\nname: delta\ndescription: Added later.\n---\n"})
	signSkill(t, data, filepath.Join(root, "delta"))
	scan("4 skills (3 valid, 1 rejected)")
	// show says who signed, and whether the index vouched for the skill.
	showSigned := func(name, want string) {
		t.Helper()
		code, out, errs := run(t, data, "show", name)
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "signed:") {
				line = l
			}
		}
		if code != 0 || !strings.HasPrefix(line, "signed:       by release with key release (SHA256:") || !strings.HasSuffix(line, want) {
			t.Fatalf("show %s: %d signed line %q, want it to end with %q\n%s%s", name, code, line, want, out, errs)
		}
	}
	showSigned("delta", "Z")
	showSigned("alpha", "Z (index "+index+")")

	// Signing the root again changes no skill file: the rescan checks
	// every skill against the new index.
	signRoot()
	scan("4 skills (4 valid, 0 rejected)")
	lock := filepath.Join(data, "skillgate.lock")
	if code, out, errs := run(t, data, "lock", "--out", lock); code != 0 {
		t.Fatalf("lock: %s %s", out, errs)
	}
	if b, err := os.ReadFile(lock); err != nil || strings.Count(string(b), `"signer": "release"`) != 4 {
		t.Fatalf("lock: every skill's signer is the index's:\n%s %v", b, err)
	}

	// Revoking the key rejects every skill at the next scan.
	config("      revoked: true\n      revoked_reason: lost\n")
	scan("4 skills (0 valid, 4 rejected)",
		"rejected: "+filepath.Join(root, "alpha")+"\n  - signature: "+index+": revoked key: signed by key release, which is revoked (lost); sign the root again with a current key; alpha has no .skillgate.dsse.json of its own\n",
		"rejected: "+filepath.Join(root, "delta")+"\n  - signature: .skillgate.dsse.json: revoked key: signed by key release, which is revoked (lost); sign the skill again with a current key\n")
}
