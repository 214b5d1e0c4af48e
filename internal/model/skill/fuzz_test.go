package skill_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// FuzzParse feeds arbitrary bytes to the frontmatter parser in both modes.
// Properties: it never panics, a rejected skill always says why, and a
// valid skill has a name and a description.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"---\nname: s\ndescription: x\n---\nbody",
		"---\r\nname: s\r\ndescription: x\r\n...\r\n",
		"\ufeff---\nname: s\ndescription: 'a: b'\nmetadata:\n  tier: '1'\n---\n",
		"---\nname: s\ndescription: Use when: x\n---\n",
		"---\na: &a [x, x]\nb: [*a, *a]\nname: s\ndescription: x\n---\n",
		"---\nname: !!str s\ndescription: {a: b}\n---\n",
		"---\n- list\n---\n",
		"---\nname: s\n",
		"no frontmatter",
		"---\nname: s\ndescription: x\ninvokable_by: [T0, T9]\ntier: 3\n---\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), "s")
	}
	f.Fuzz(func(t *testing.T, content []byte, dir string) {
		for _, mode := range []skill.Mode{skill.Lenient, skill.Strict} {
			s := skill.Parse(content, dir, skill.Options{Mode: mode})
			if s.Valid() {
				if strings.TrimSpace(s.Name) == "" || strings.TrimSpace(s.Description) == "" {
					t.Fatalf("%v: valid skill without name or description: %+v", mode, s)
				}
				if s.Tier < 1 || s.Tier > 3 || len(s.InvokableBy) == 0 {
					t.Fatalf("%v: valid skill with tier %d invokable_by %v", mode, s.Tier, s.InvokableBy)
				}
				continue
			}
			for _, d := range s.Diagnostics {
				if d.Message == "" || !utf8.ValidString(d.Message) {
					t.Fatalf("%v: empty or non-UTF-8 diagnostic: %q", mode, d.Message)
				}
			}
		}
	})
}

// FuzzDigest checks that the digest depends only on the tree's content:
// listing and hashing an in-memory tree agrees with DigestBytes.
func FuzzDigest(f *testing.F) {
	f.Add("SKILL.md", []byte("---\nname: s\n---\n"), "scripts/run.sh", []byte("echo"))
	f.Add("a-c", []byte("1"), "a/b", []byte("2"))
	f.Add(".hidden", []byte(""), "node_modules/x", []byte("y"))
	f.Fuzz(func(t *testing.T, p1 string, c1 []byte, p2 string, c2 []byte) {
		fsys := fstest.MapFS{}
		want := map[string][]byte{}
		for _, e := range []struct {
			p string
			c []byte
		}{{p1, c1}, {p2, c2}} {
			if !validTreePath(e.p) {
				continue
			}
			fsys[e.p] = &fstest.MapFile{Data: e.c}
		}
		// A file that is also a directory prefix of another makes an invalid tree.
		for p := range fsys {
			for q := range fsys {
				if strings.HasPrefix(q, p+"/") {
					return
				}
			}
		}
		files, err := skill.ListFiles(context.Background(), fsys, skill.DefaultTreeLimits)
		if err != nil {
			t.Fatal(err)
		}
		for _, fl := range files {
			want[fl.Path] = fsys[fl.Path].Data
		}
		got, err := skill.Digest(context.Background(), fsys, files)
		if err != nil {
			t.Fatal(err)
		}
		if exp := skill.DigestBytes(want); got != exp {
			t.Fatalf("Digest %s != DigestBytes %s", got, exp)
		}
	})
}

func validTreePath(p string) bool {
	if p == "" || p == "." || strings.HasSuffix(p, "/") || strings.HasPrefix(p, "/") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return utf8.ValidString(p)
}
