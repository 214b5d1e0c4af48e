package main

import (
	"encoding/json"
	"io"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitServer serves the bare repositories under root over git's own smart
// HTTP backend (git http-backend, as CGI) on loopback, and returns its
// base URL.
func gitServer(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git http-backend: %v", err)
	}
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard})
	t.Cleanup(srv.Close)
	return srv.URL
}

// git runs git in dir with no user configuration, failing the test on an
// error, and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// skillRepo makes the bare repository root/NAME.git from the commits
// given, each a set of files, tagging the i-th commit v(i+1); it returns
// the commits.
func skillRepo(t *testing.T, root, name string, commits ...map[string]string) []string {
	t.Helper()
	work := t.TempDir()
	git(t, work, "init", "-q")
	var shas []string
	for i, files := range commits {
		write(t, work, files)
		git(t, work, "add", "-A")
		git(t, work, "commit", "-q", "-m", "commit")
		git(t, work, "tag", "v"+string(rune('1'+i)))
		shas = append(shas, git(t, work, "rev-parse", "HEAD"))
	}
	git(t, root, "clone", "-q", "--bare", work, name+".git")
	return shas
}

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n"
}

// TestAddFromGitServer: 'skillgate add' against a git server on loopback
// (git http-backend): it lists a repository's skills (text and JSON, at
// HEAD and at a tag), installs one, several and all through the install
// flow, and refuses a missing folder, a repository without skills and an
// unchosen or unknown skill with messages that say what to do.
func TestAddFromGitServer(t *testing.T) {
	root := t.TempDir()
	base := gitServer(t, root)
	shas := skillRepo(t, root, "skills",
		map[string]string{
			"README.md":                    "skills\n",
			"skills/contratos/SKILL.md":    skillMD("contratos", "Drafts contracts."),
			"skills/escrituras/SKILL.md":   skillMD("escrituras", "Drafts deeds."),
			"skills/escrituras/ref/doc.md": "notes\n",
			"docs/guide.md":                "guide\n",
		},
		map[string]string{"skills/notas/SKILL.md": skillMD("notas", "Keeps notes.")},
	)
	empty := skillRepo(t, root, "empty", map[string]string{"README.md": "nothing here\n"})
	repo := base + "/skills.git"
	loc := "git+" + repo

	listText := "NAME        PATH               DESCRIPTION\n" +
		"contratos   skills/contratos   Drafts contracts.\n" +
		"escrituras  skills/escrituras  Drafts deeds.\n" +
		"notas       skills/notas       Keeps notes.\n"
	listJSON := `{
  "source": "` + loc + `",
  "ref": "v1",
  "path": "skills",
  "commit": "` + shas[0] + `",
  "skills": [
    {
      "name": "contratos",
      "path": "skills/contratos",
      "description": "Drafts contracts.",
      "valid": true,
      "errors": []
    },
    {
      "name": "escrituras",
      "path": "skills/escrituras",
      "description": "Drafts deeds.",
      "valid": true,
      "errors": []
    }
  ]
}
`
	tests := []struct {
		name      string
		args      []string
		code      int
		out, errs string
	}{
		{"list", []string{"add", repo, "--list"}, 0, listText, ""},
		{"list at a tag, in a folder, as JSON", []string{"add", repo, "--list", "--ref", "v1", "--path", "skills", "--json"}, 0, listJSON, ""},
		{"no choice", []string{"add", repo}, 2, "", "Error: add: " + loc + " holds 3 skills (contratos, escrituras, notas): name those to install with --skill NAME, or give --all; --list describes them\n"},
		{"unknown skill", []string{"add", repo, "--skill", "nope"}, 2, "", "Error: add: " + loc + " holds no skill \"nope\"; it holds contratos, escrituras, notas\n"},
		{"both", []string{"add", repo, "--skill", "notas", "--all"}, 2, "", "Error: add: give --skill NAME or --all, not both\n"},
		{"list and skill", []string{"add", repo, "--list", "--all"}, 2, "", "Error: add: --list installs nothing; give it without --skill or --all\n"},
		{"bad path", []string{"add", repo, "--list", "--path", "nope"}, 1, "", "Error: add: invalid install source: " + repo + " has no directory \"nope\" at " + shas[1] + "\n"},
		{"bad ref", []string{"add", repo + "@nope", "--list"}, 1, "", "Error: add: invalid install source: fetching nope of " + repo + ": fatal: couldn't find remote ref nope\n"},
		{"no skill", []string{"add", base + "/empty.git", "--list"}, 1, "", "Error: add: no skill: git+" + base + "/empty.git at " + empty[0] + " has no SKILL.md under its top level; give the PATH of a folder that holds skills\n"},
		{"folder without skills", []string{"add", repo, "--list", "--path", "docs"}, 1, "", "Error: add: no skill: " + loc + " at " + shas[1] + " has no SKILL.md under docs; give the PATH of a folder that holds skills\n"},
		{"ssh", []string{"add", "git@github.com:acme/skills.git", "--list"}, 2, "", "Error: add: git@github.com:acme/skills.git: SSH sources are not fetched; use the repository's https:// URL\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			code, out, errs := run(t, data, tc.args...)
			if code != tc.code || out != tc.out || errs != tc.errs {
				t.Errorf("%d\n got %q %q\nwant %q %q", code, out, errs, tc.out, tc.errs)
			}
			if _, err := os.Stat(data); slices.Contains(tc.args, "--list") && !os.IsNotExist(err) {
				t.Errorf("--list made the data directory: %v", err)
			}
		})
	}

	t.Run("JSON", func(t *testing.T) {
		code, out, errs := run(t, t.TempDir(), "add", repo, "--skill", "contratos", "--skill", "notas", "--json")
		var reviews []struct {
			Key    string `json:"key"`
			State  string `json:"state"`
			Source struct {
				Source string `json:"source"`
				Ref    string `json:"ref"`
				Commit string `json:"commit"`
				Path   string `json:"path"`
			} `json:"provenance"`
		}
		if code != 0 || errs != "" || json.Unmarshal([]byte(out), &reviews) != nil || len(reviews) != 2 {
			t.Fatalf("%d %q\n%s", code, errs, out)
		}
		for i, want := range []string{"contratos", "notas"} {
			r := reviews[i]
			if r.Key != want || r.State != "awaiting_approval" || r.Source.Source != loc || r.Source.Ref != "HEAD" || r.Source.Commit != shas[1] || r.Source.Path != "skills/"+want {
				t.Errorf("review %d: %+v", i, r)
			}
		}
	})

	installs := []struct {
		name    string
		args    []string
		pending []string
	}{
		{"one", []string{"add", repo, "--skill", "contratos"}, []string{"contratos"}},
		{"several", []string{"add", repo, "--skill", "escrituras", "--skill", "notas"}, []string{"escrituras", "notas"}},
		{"all", []string{"add", repo, "--all"}, []string{"contratos", "escrituras", "notas"}},
		{"all at a tag", []string{"add", repo + "@v1", "--all"}, []string{"contratos", "escrituras"}},
		{"the only one in a folder", []string{"add", repo + "/skills/notas"}, []string{"notas"}},
	}
	for _, tc := range installs {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			code, out, errs := run(t, data, tc.args...)
			if code != 0 || errs != "" {
				t.Fatalf("%d %q\n%s", code, errs, out)
			}
			for _, n := range tc.pending {
				if !strings.Contains(out, n+"  awaiting_approval  sha256:") {
					t.Errorf("no review of %s:\n%s", n, out)
				}
			}
			code, out, errs = run(t, data, "pending")
			if code != 0 {
				t.Fatalf("pending: %d %s", code, errs)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
				got = append(got, strings.Fields(line)[0])
			}
			slices.Sort(got)
			if strings.Join(got, ",") != strings.Join(tc.pending, ",") {
				t.Errorf("pending %v, want %v\n%s", got, tc.pending, out)
			}
		})
	}
}
