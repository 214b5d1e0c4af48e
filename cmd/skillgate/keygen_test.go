package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"filippo.io/age"
)

// TestNewDataDirIsIgnoredByGit: a data directory skillgate creates (by
// scan, install, token add or credential keygen) holds a .gitignore
// ignoring everything in it, so that credentials.key and tokens.json made
// inside a project are never committed; a directory that already exists
// is the user's and gets none.
func TestNewDataDirIsIgnoredByGit(t *testing.T) {
	skills := t.TempDir()
	write(t, skills, map[string]string{"good/SKILL.md": "---\nname: good\ndescription: Good.\n---\n"})
	creates := [][]string{
		{"scan", "--root", skills},
		{"install", filepath.Join(skills, "good")},
		{"token", "add", "--agent", "a", "--tier", "T3", "--tenant", "acme"},
		{"credential", "keygen"},
	}
	for _, args := range creates {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "project", ".skillgate")
			if code, _, errs := run(t, data, args...); code != 0 {
				t.Fatalf("%v: %d %s", args, code, errs)
			}
			b, err := os.ReadFile(filepath.Join(data, ".gitignore"))
			if err != nil || string(b) != "# Made by skillgate: nothing in its data directory belongs in version control.\n*\n" {
				t.Errorf("%v: .gitignore %q %v", args, b, err)
			}
			if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("%v: data directory mode %v %v", args, fi.Mode(), err)
			}
			// An existing directory is left as it is.
			mine := t.TempDir()
			if code, _, errs := run(t, mine, args...); code != 0 {
				t.Fatalf("%v in an existing directory: %d %s", args, code, errs)
			}
			if _, err := os.Stat(filepath.Join(mine, ".gitignore")); !os.IsNotExist(err) {
				t.Errorf("%v wrote a .gitignore in an existing directory: %v", args, err)
			}
		})
	}
}

// TestCredentialKeygen: credential keygen makes the store's key (what
// docs/deploy.md needs, without age-keygen): a file of mode 0600 holding
// one age identity, which the store then uses and SKILLGATE_CREDENTIAL_KEY
// accepts; it never replaces an existing file.
func TestCredentialKeygen(t *testing.T) {
	data := t.TempDir()
	code, out, errs := run(t, data, "credential", "keygen")
	key := filepath.Join(data, "credentials.key")
	m := regexp.MustCompile(`^created (.+) \(mode 0600; public key (age1[0-9a-z]+)\)\n$`).FindStringSubmatch(out)
	if code != 0 || errs != "" || m == nil || m[1] != key {
		t.Fatalf("keygen: %d %q %q", code, out, errs)
	}
	b, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	id, err := age.ParseX25519Identity(strings.TrimSpace(string(b)))
	if err != nil || id.Recipient().String() != m[2] || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("key file %q: %v", b, err)
	}
	if fi, _ := os.Stat(key); fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", fi.Mode())
	}
	// The store uses it.
	if code, _, errs := runIn(t, data, "s3cret", nil, "credential", "set", "GITHUB_TOKEN", "--tenant", "acme"); code != 0 {
		t.Fatalf("set: %s", errs)
	}
	if b2, _ := os.ReadFile(key); string(b2) != string(b) {
		t.Fatal("credential set replaced the key")
	}
	// Never replaced.
	code, out, errs = run(t, data, "credential", "keygen")
	if code != 1 || out != "" || errs != "Error: credential key: "+key+" already exists: it may be the key of a credential store, and replacing it loses every credential it encrypts; move it away first if it is not\n" {
		t.Errorf("keygen again: %d %q %q", code, out, errs)
	}
	// --out writes elsewhere; the variable takes the file's content.
	other := filepath.Join(t.TempDir(), "replicas.key")
	if code, out, errs := run(t, data, "credential", "keygen", "--out", other); code != 0 || !strings.HasPrefix(out, "created "+other+" (mode 0600; public key age1") {
		t.Fatalf("keygen --out: %d %q %q", code, out, errs)
	}
	shared, _ := os.ReadFile(other)
	fresh := t.TempDir()
	env := map[string]string{"SKILLGATE_CREDENTIAL_KEY": strings.TrimSpace(string(shared))}
	if code, _, errs := runIn(t, fresh, "v", env, "token", "add", "--agent", "a", "--tier", "T3", "--tenant", "acme"); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := runIn(t, fresh, "v", env, "credential", "set", "X_TOKEN", "--tenant", "acme"); code != 0 {
		t.Fatalf("set with the variable: %s", errs)
	}
	if _, err := os.Stat(filepath.Join(fresh, "credentials.key")); !os.IsNotExist(err) {
		t.Errorf("a key file was made although SKILLGATE_CREDENTIAL_KEY is set: %v", err)
	}
}
