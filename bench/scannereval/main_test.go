package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sets kept in the repository: the labelled set the rules are tuned
// on, and the held-out set nobody tunes on (its README.md); each keeps at
// least minPerClass malicious cases per class.
var sets = []struct {
	name, dir   string
	minPerClass int
	// want are strings the output must hold beside the class names.
	want []string
}{
	{"labelled", "../../internal/admission/secscan/testdata/labelled", 4, []string{"SG801"}},
	{"holdout", "../../internal/admission/secscan/testdata/holdout", 3, nil},
}

var classes = []string{"trojanized", "download-run", "decoded-payload", "lookalike-prose", "disguised-script", "non-utf8", "reverse-shell", "persistence", "destructive"}

// TestLabelledSetIsConsistent holds each set's labels.json to its folders
// (every case labelled, every labelled line in its file) and runs the
// evaluation without the corpus: it measures, and the corpus gate fails
// for want of the corpus, which is exit status 1, never a set-up error.
func TestLabelledSetIsConsistent(t *testing.T) {
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), config{labelled: set.dir, corpus: filepath.Join(t.TempDir(), "none"), runs: 1, recallGoal: 0.9, fpGoal: 0.01}, &out)
			if !errors.Is(err, errGate) {
				t.Fatalf("run: %v, want the gate error", err)
			}
			for _, want := range append(append(append([]string{}, classes...), set.want...), "benign corpus: absent") {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			cases, err := loadLabels(set.dir)
			if err != nil {
				t.Fatal(err)
			}
			perClass := map[string]int{}
			for _, c := range cases {
				if c.Malicious {
					perClass[c.Class]++
				}
			}
			for _, class := range classes {
				if n := perClass[class]; n < set.minPerClass {
					t.Errorf("class %s has %d malicious cases; the %s set keeps at least %d per class", class, n, set.name, set.minPerClass)
				}
			}
		})
	}
}

// TestLabelsRefuseMismatch: a labelled line past the end of its file, and a
// case folder without an entry, are set-up errors.
func TestLabelsRefuseMismatch(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("malicious/x/a/SKILL.md", "---\nname: a\n---\n")
	write("malicious/x/a/run.sh", "echo\n")
	write("labels.json", `{"cases":[{"path":"malicious/x/a","class":"x","malicious":true,"what":"w","lines":[{"file":"run.sh","line":9}]}]}`)
	if _, err := loadLabels(dir); !errors.Is(err, errSetup) || !strings.Contains(err.Error(), "not line 9") {
		t.Fatalf("line past the end: %v", err)
	}
	write("labels.json", `{"cases":[{"path":"malicious/x/a","class":"x","malicious":true,"what":"w","lines":[{"file":"run.sh","line":1}]}]}`)
	write("malicious/x/b/SKILL.md", "---\nname: b\n---\n")
	if _, err := loadLabels(dir); !errors.Is(err, errSetup) || !strings.Contains(err.Error(), "malicious/x/b is not in labels.json") {
		t.Fatalf("unlabelled folder: %v", err)
	}
}

func TestScore(t *testing.T) {
	s := scoreOf(3, 1, 6)
	if *s.Precision != 0.75 || *s.Recall != 0.5 || *s.F1 != 0.6 {
		t.Fatalf("score %v %v %v", *s.Precision, *s.Recall, *s.F1)
	}
	if s := scoreOf(0, 0, 5); s.Precision != nil || s.F1 != nil || *s.Recall != 0 {
		t.Fatalf("nothing found: %+v", s)
	}
}
