package skill_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// corpusDir finds ../shared/corpus (or $SKILLGATE_CORPUS) and skips the test
// when it is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("SKILLGATE_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "corpus")
	}
	if _, err := os.Stat(filepath.Join(dir, "verdicts.jsonl")); err != nil {
		t.Skipf("skill corpus not found at %s (set SKILLGATE_CORPUS): %v", dir, err)
	}
	return dir
}

type verdict struct {
	Path   string   `json:"path"`
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors"`
}

// TestCorpusStrictParity validates every skill of the public corpus in
// strict mode and compares verdict and messages with skills-ref's.
func TestCorpusStrictParity(t *testing.T) {
	dir := corpusDir(t)
	f, err := os.Open(filepath.Join(dir, "verdicts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var v verdict
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		n++
		s, err := skill.Load(context.Background(), filepath.Join(dir, v.Path), skill.Options{Mode: skill.Strict})
		if err != nil {
			t.Fatal(err)
		}
		got := s.Errors()
		if s.Valid() != v.Valid {
			t.Errorf("%s: valid = %v, skills-ref says %v (errors %q, want %q)", v.Path, s.Valid(), v.Valid, got, v.Errors)
			continue
		}
		if len(got) != len(v.Errors) {
			t.Errorf("%s: errors %q, want %q", v.Path, got, v.Errors)
			continue
		}
		for i := range got {
			want := v.Errors[i]
			if strings.HasPrefix(want, "Invalid YAML in frontmatter: ") {
				// The YAML library's own text differs; the verdict and prefix must match.
				if !strings.HasPrefix(got[i], "Invalid YAML in frontmatter: ") {
					t.Errorf("%s: error %q, want the prefix of %q", v.Path, got[i], want)
				}
				continue
			}
			if got[i] != want {
				t.Errorf("%s: error %d = %q, want %q", v.Path, i, got[i], want)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 592 {
		t.Errorf("verdicts.jsonl has %d entries, want 592", n)
	}
}
