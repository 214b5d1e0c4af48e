package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// runIn drives the CLI with stdin and extra environment.
func runIn(t *testing.T, data, stdin string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "SKILLGATE_DATA" {
			return data
		}
		return env[k]
	}}
	code := m.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

func TestCredentialCLI(t *testing.T) {
	data := t.TempDir()
	const secret = "ghp_planted_SECRET_4f1c9e"
	steps := []struct {
		name      string
		stdin     string
		args      []string
		code      int
		out, errs string
	}{
		{"set tenant", secret + "\n", []string{"credential", "set", "GITHUB_TOKEN", "--tenant", "acme"}, 0, "set GITHUB_TOKEN for tenant acme\n", ""},
		{"set agent", "agent-" + secret + "\r\n", []string{"credential", "set", "GITHUB_TOKEN", "--tenant", "acme", "--agent", "drafter"}, 0, "set GITHUB_TOKEN for agent acme/drafter\n", ""},
		{"set other tenant", "gl-" + secret, []string{"credential", "set", "GITLAB_TOKEN", "--tenant", "globex"}, 0, "set GITLAB_TOKEN for tenant globex\n", ""},
		{"ls", "", []string{"credential", "ls"}, 0, "NAME          TENANT  AGENT\nGITHUB_TOKEN  acme    *\nGITHUB_TOKEN  acme    drafter\nGITLAB_TOKEN  globex  *\n", ""},
		{"ls tenant", "", []string{"credential", "ls", "--tenant", "globex", "--json"}, 0, "[\n  {\n    \"name\": \"GITLAB_TOKEN\",\n    \"tenant\": \"globex\"\n  }\n]\n", ""},
		{"ls none", "", []string{"credential", "ls", "--tenant", "initech"}, 0, "", "no credentials; add one with 'skillgate credential set NAME --tenant T'\n"},
		{"ls none json", "", []string{"credential", "ls", "--tenant", "initech", "--json"}, 0, "[]\n", ""},
		{"empty value", "\n", []string{"credential", "set", "GITHUB_TOKEN", "--tenant", "acme"}, 2, "",
			"Error: no value on standard input: pipe the secret in, e.g. printf '%s' \"$TOKEN\" | skillgate credential set GITHUB_TOKEN --tenant acme\n"},
		{"newline in name", "x", []string{"credential", "set", "GITHUB_TOKEN\nX", "--tenant", "acme"}, 2, "",
			"Error: invalid credential name: \"GITHUB_TOKEN\\nX\": a name is an upper-case letter followed by upper-case letters, digits and '_', at most 128 bytes (e.g. GITHUB_TOKEN)\n"},
		{"no tenant", "x", []string{"credential", "set", "GITHUB_TOKEN"}, 2, "", "Error: invalid credential scope: a tenant is required (--tenant)\n"},
		{"too long", strings.Repeat("x", 64<<10+1), []string{"credential", "set", "GITHUB_TOKEN", "--tenant", "acme"}, 2, "", "Error: the value on standard input is longer than 65536 bytes\n"},
		{"NUL", "a\x00b", []string{"credential", "set", "GITHUB_TOKEN", "--tenant", "acme"}, 2, "", "Error: invalid credential value: the value contains a NUL byte\n"},
		{"value as argument", "", []string{"credential", "set", "GITHUB_TOKEN", secret, "--tenant", "acme"}, 2, "",
			"Error: skillgate credential set: expected NAME, got 2 arguments; see 'skillgate credential set --help'\n"},
		{"rm", "", []string{"credential", "rm", "GITHUB_TOKEN", "--tenant", "acme", "--agent", "drafter"}, 0, "removed GITHUB_TOKEN for agent acme/drafter\n", ""},
		{"rm absent", "", []string{"credential", "rm", "GITHUB_TOKEN", "--tenant", "acme", "--agent", "drafter"}, 1, "",
			"Error: credential not found: no GITHUB_TOKEN for agent acme/drafter (list them with skillgate credential ls)\n"},
		{"group", "", []string{"credential"}, 2, "", "Error: credential needs a subcommand: set, ls, rm or keygen (see 'skillgate credential --help')\n"},
	}
	var outputs strings.Builder
	for _, s := range steps {
		code, out, errs := runIn(t, data, s.stdin, nil, s.args...)
		if s.name == "value as argument" {
			// cobra words it; what matters is the exit code and that the
			// value is not echoed.
			if code != 2 {
				t.Errorf("%s: code %d", s.name, code)
			}
		} else if code != s.code || out != s.out || errs != s.errs {
			t.Errorf("%s: code %d out %q err %q\nwant %d %q %q", s.name, code, out, errs, s.code, s.out, s.errs)
		}
		outputs.WriteString(out + errs)
	}
	for _, c := range []string{"credential", "credential set", "credential ls", "credential rm"} {
		code, out, _ := runIn(t, data, "", nil, append(strings.Fields(c), "--help")...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%s --help: %d %q", c, code, out)
		}
		outputs.WriteString(out)
	}
	if strings.Contains(outputs.String(), "planted_SECRET") {
		t.Error("a command printed the secret")
	}
	assertNoSecret(t, data, "planted_SECRET")

	// Another key refuses the store and changes nothing.
	before, _ := os.ReadFile(filepath.Join(data, "credentials.age"))
	other, _ := age.GenerateX25519Identity()
	code, _, errs := runIn(t, data, "v", map[string]string{"SKILLGATE_CREDENTIAL_KEY": other.String()}, "credential", "set", "OTHER", "--tenant", "acme")
	if code != 1 || !strings.Contains(errs, "was encrypted with another key than SKILLGATE_CREDENTIAL_KEY") {
		t.Errorf("set with another key: %d %q", code, errs)
	}
	if after, _ := os.ReadFile(filepath.Join(data, "credentials.age")); !bytes.Equal(before, after) {
		t.Error("a set with the wrong key changed the store")
	}
	// A corrupted store is refused by ls and set, and kept.
	bad := bytes.Clone(before)
	bad[len(bad)-3] ^= 0x55
	os.WriteFile(filepath.Join(data, "credentials.age"), bad, 0o600)
	for _, args := range [][]string{{"credential", "ls"}, {"credential", "set", "NEW", "--tenant", "acme"}} {
		code, _, errs := runIn(t, data, "v", nil, args...)
		if code != 1 || !strings.Contains(errs, filepath.Join(data, "credentials.age")+" is corrupted") || !strings.Contains(errs, "will not overwrite it") {
			t.Errorf("%v over a corrupted store: %d %q", args, code, errs)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(data, "credentials.age")); !bytes.Equal(bad, after) {
		t.Error("the corrupted store was overwritten")
	}
	var list []map[string]string
	os.WriteFile(filepath.Join(data, "credentials.age"), before, 0o600)
	_, out, _ := runIn(t, data, "", nil, "credential", "ls", "--json")
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 {
		t.Errorf("ls after restoring: %q %v", out, err)
	}
}

// assertNoSecret fails when any file under dir holds needle in clear (the
// encrypted store included, which must not hold it in clear either).
func assertNoSecret(t *testing.T, dir, needle string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if bytes.Contains(b, []byte(needle)) {
			t.Errorf("%s holds the secret in clear", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no file under %s", dir)
	}
}
