package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMissingDataDir checks that a command reading the data directory
// refuses a directory that does not exist (a mistyped --data) with exit 2,
// and creates nothing, while the commands that create it, and those that
// do not use it, run.
func TestMissingDataDir(t *testing.T) {
	skills := t.TempDir()
	write(t, skills, map[string]string{"good/SKILL.md": "---\nname: good\ndescription: Good.\n---\n"})
	refused := [][]string{
		{"ls"}, {"show", "good"}, {"prompt"}, {"disclose", "--tier", "T3"}, {"enable", "good"},
		{"pending"}, {"review", "good"}, {"policy", "check"}, {"grant", "ls"}, {"token", "ls"},
		{"audit", "verify"}, {"audit", "query"}, {"mcp", "--agent", "a", "--tier", "T3"}, {"serve"},
		{"credential", "ls"}, {"credential", "rm", "TOKEN", "--tenant", "acme"},
	}
	for _, args := range refused {
		t.Run(args[0], func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "mistyped")
			code, out, errs := run(t, data, args...)
			want := "Error: data directory " + data + " ($SKILLGATE_DATA) does not exist: run 'skillgate scan' to create a registry there, or give an existing one with --data DIR or SKILLGATE_DATA\n"
			if code != 2 || out != "" || errs != want {
				t.Errorf("%v: %d %q %q; want 2 %q", args, code, out, errs, want)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("%v created %s", args, data)
			}
		})
	}
	// The flag is named when it gave the directory.
	data := filepath.Join(t.TempDir(), "typo")
	code, _, errs := run(t, t.TempDir(), "--data", data, "ls")
	if want := "Error: data directory " + data + " (--data) does not exist: run 'skillgate scan' to create a registry there, or give an existing one with --data DIR or SKILLGATE_DATA\n"; code != 2 || errs != want {
		t.Errorf("--data: %d %q", code, errs)
	}
	runs := [][]string{
		{"validate", filepath.Join(skills, "good")}, {"drift", skills, skills}, {"version"},
		{"prompt", filepath.Join(skills, "good")}, {"policy"}, {"help"},
	}
	for _, args := range runs {
		data := filepath.Join(t.TempDir(), "none")
		if code, _, errs := run(t, data, args...); code == 2 && errs != "Error: policy needs a subcommand: check, test, put, rm or ls (see 'skillgate policy --help')\n" {
			t.Errorf("%v: %d %s", args, code, errs)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%v created %s", args, data)
		}
	}
	creates := [][]string{
		{"scan", "--root", skills},
		{"install", filepath.Join(skills, "good")},
		{"token", "add", "--agent", "a", "--tier", "T3", "--tenant", "acme"},
	}
	for _, args := range creates {
		data := filepath.Join(t.TempDir(), "new")
		if code, _, errs := run(t, data, args...); code != 0 {
			t.Errorf("%v: %d %s", args, code, errs)
		}
		if code, _, errs := run(t, data, "ls"); code != 0 {
			t.Errorf("ls after %v: %d %s", args, code, errs)
		}
	}
}
