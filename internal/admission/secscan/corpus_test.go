package secscan

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// corpusDir is the public skill corpus beside the checkout
// (SKILLGATE_CORPUS, or ../shared/corpus), or "" when it is absent.
func corpusDir() string {
	if d := os.Getenv("SKILLGATE_CORPUS"); d != "" {
		return d
	}
	d := filepath.Join("..", "..", "..", "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(d, "verdicts.jsonl")); err != nil {
		return ""
	}
	return d
}

// TestCorpusFalsePositives scans every skill of the public corpus — real,
// benign skills — and holds the share with a blocking (high or critical)
// finding to at most 2 %. Each such skill is logged with its findings, so
// that a rule's false positives can be read (go test -v -run Corpus).
func TestCorpusFalsePositives(t *testing.T) {
	dir := corpusDir()
	if dir == "" {
		t.Skip("the skill corpus (../shared/corpus) is absent")
	}
	f, err := os.Open(filepath.Join(dir, "verdicts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	skills, blocked := 0, 0
	bySeverity := map[Severity]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		rep, err := Dir(context.Background(), filepath.Join(dir, v.Path), Limits{})
		if err != nil {
			t.Errorf("%s: %v", v.Path, err)
			continue
		}
		skills++
		hit := false
		for _, fd := range rep.Findings {
			bySeverity[fd.Severity]++
			if fd.Severity.Blocks() {
				hit = true
				t.Logf("%s: %s %s %s: %s", v.Path, fd.Location(), fd.Rule, fd.Severity, fd.Excerpt)
			}
		}
		if hit {
			blocked++
		}
	}
	share := float64(blocked) / float64(skills)
	t.Logf("%d skills, %d (%.2f %%) with a high or critical finding; findings by severity: %v", skills, blocked, 100*share, bySeverity)
	if share > 0.02 {
		t.Errorf("%d of %d corpus skills (%.2f %%) have a high or critical finding; the goal is at most 2 %%", blocked, skills, 100*share)
	}
}

// TestTriggersMissNothing holds the prefilter to the patterns: over the
// fixture, every rule case and (when present) every file of the public
// corpus, scanning with the triggers finds exactly what matching every
// pattern against every line finds.
func TestTriggersMissNothing(t *testing.T) {
	check := func(name string, data []byte, k kind) {
		t.Helper()
		fast := scanLines(name, data, k, 1000, true)
		slow := scanLines(name, data, k, 1000, false)
		if len(fast) != len(slow) {
			t.Fatalf("%s: %d findings with the prefilter, %d without", name, len(fast), len(slow))
		}
		for i := range fast {
			if fast[i] != slow[i] {
				t.Fatalf("%s: %+v with the prefilter, %+v without", name, fast[i], slow[i])
			}
		}
	}
	for _, tc := range ruleCases {
		for _, k := range []kind{kindProse, kindScript, kindTool} {
			check(tc.file, []byte(tc.text), k)
		}
	}
	roots := []string{filepath.Join("testdata", "hostile")}
	if dir := corpusDir(); dir != "" {
		roots = append(roots, dir)
	}
	// Each corpus file is checked as what it is (prose or script); under
	// the race detector, which makes matching several times slower, one
	// file in sixteen.
	every := 1
	if raceEnabled {
		every = 16
	}
	n := 0
	for _, root := range roots {
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if n++; n%every != 0 {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil || isBinary(data) || !utf8.Valid(data) {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			check(path, data, kindOf(filepath.ToSlash(rel), data))
			return nil
		})
	}
}
