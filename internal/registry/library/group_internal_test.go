package library

import (
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

func TestGroup(t *testing.T) {
	keys := []string{
		"t/skills/a/SKILL.md", "t/skills/a/x/SKILL.md", "t/skills/a/x/y.md", // a takes its nested skill
		"t/skills/c/b/SKILL.md", "t/skills/c/b/r/f.md", "t/skills/c/README.md", // c is a category
		"t/skills/d/e/f/SKILL.md", // too deep: no skill
		"t/skills/SKILL.md",       // the library's top: no skill
		"t/skills/g/skill.md",     // lower-case name
	}
	var objs []blob.Info
	for _, k := range keys {
		objs = append(objs, blob.Info{Key: k})
	}
	skills, stray := group("t/skills/", objs)
	got := map[string][]string{}
	for dir, os := range skills {
		for _, o := range os {
			got[dir] = append(got[dir], strings.TrimPrefix(o.Key, "t/skills/"))
		}
	}
	want := map[string][]string{
		"a":   {"a/SKILL.md", "a/x/SKILL.md", "a/x/y.md"},
		"c/b": {"c/b/SKILL.md", "c/b/r/f.md"},
		"g":   {"g/skill.md"},
	}
	if !reflect.DeepEqual(got, want) || stray != 3 {
		t.Fatalf("got %v, %d stray; want %v, 3", got, stray, want)
	}
}

// FuzzGroup checks that any listing groups into skill directories at most
// two levels deep, each object in exactly one place, without panicking.
func FuzzGroup(f *testing.F) {
	for _, s := range []string{"a/SKILL.md\na/b", "c/d/SKILL.md\nc/x\nc/d/e/f", "SKILL.md\n/SKILL.md\n//SKILL.md", "a/SKILL.md\na/b/SKILL.md\na/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		var objs []blob.Info
		for _, k := range strings.Split(list, "\n") {
			if blob.ValidateKey("p/"+k) == nil {
				objs = append(objs, blob.Info{Key: "p/" + k})
			}
		}
		skills, stray := group("p/", objs)
		n := stray
		for dir, os := range skills {
			if strings.Count(dir, "/") > 1 || dir == "" {
				t.Fatalf("skill directory %q", dir)
			}
			for _, o := range os {
				if !strings.HasPrefix(o.Key, "p/"+dir+"/") {
					t.Fatalf("%q is not under %q", o.Key, dir)
				}
			}
			n += len(os)
		}
		if n != len(objs) {
			t.Fatalf("%d objects placed of %d", n, len(objs))
		}
	})
}
