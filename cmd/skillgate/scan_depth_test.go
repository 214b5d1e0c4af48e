package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanWarnsOfSkillsBelowTheDepthLimit: a skill deeper than --max-depth
// is a warning naming it and the flag and configuration key that raise the
// limit, in scan's text and --json output, and show explains why it finds
// no such skill; raising the limit as told indexes it.
func TestScanWarnsOfSkillsBelowTheDepthLimit(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	write(t, root, map[string]string{
		"a/SKILL.md":            "---\nname: a\ndescription: Shallow.\n---\n",
		"x/y/deeper/SKILL.md":   "---\nname: deeper\ndescription: Deep.\n---\n",
		"x/y/deeper/scripts/go": "echo",
	})
	deep := filepath.Join(root, "x/y/deeper")
	warning := "skill " + deep + " not scanned: it is 3 directories below the root, deeper than the depth limit 2; " +
		"raise the limit with --max-depth 3 (configuration file: limits.max_depth), or add " + filepath.Join(root, "x/y") + " as a root"
	note := "depth limit 2 reached at " + deep + ": deeper skills are not indexed (each one found is a warning); " +
		"raise the limit with --max-depth (configuration file: limits.max_depth)"

	code, out, errs := run(t, data, "scan", "--root", root, "--max-depth", "2")
	wantTail := "root " + root + " (project): 1 skill, 5 directories, truncated\n  note: " + note + "\n  warning: " + warning + "\n"
	if code != 0 || !strings.HasSuffix(out, wantTail) {
		t.Fatalf("scan: %d\n%s\nwant it to end with\n%s\nstderr %s", code, out, wantTail, errs)
	}

	code, out, errs = run(t, data, "scan", "--root", root, "--max-depth", "2", "--json")
	var rep struct {
		Roots []struct {
			Notes    []string `json:"notes"`
			Warnings []string `json:"warnings"`
		} `json:"roots"`
		Skills int `json:"skills"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("scan --json: %d %v %s", code, err, errs)
	}
	if len(rep.Roots) != 1 || rep.Skills != 1 || strings.Join(rep.Roots[0].Warnings, "|") != warning || strings.Join(rep.Roots[0].Notes, "|") != note {
		t.Errorf("scan --json: %+v", rep)
	}

	for _, name := range []string{"deeper", deep} {
		code, out, errs = run(t, data, "show", name)
		wantErr := "Error: skill not found: \"" + name + "\"; run 'skillgate ls' to see the skills, or 'skillgate scan' to refresh\n" + warning + "\n"
		if code != 1 || out != "" || errs != wantErr {
			t.Errorf("show %s: %d %q\nstderr %q\nwant   %q", name, code, out, errs, wantErr)
		}
	}

	code, out, errs = run(t, data, "scan", "--root", root, "--max-depth", "3")
	if code != 0 || !strings.HasPrefix(out, "2 skills (2 valid, 0 rejected)") || strings.Contains(out, "warning:") {
		t.Fatalf("scan --max-depth 3: %d %s %s", code, out, errs)
	}
	if code, _, errs = run(t, data, "show", "deeper"); code != 0 {
		t.Errorf("show deeper after --max-depth 3: %d %s", code, errs)
	}
}
