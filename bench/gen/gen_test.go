package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// treeDigest hashes every path, mode and content under dir.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == StampFile {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%v\x00%d\x00", filepath.ToSlash(rel), info.Mode().Perm(), len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	ta, err := Generate(a, 150, 42)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Generate(b, 150, 42)
	if err != nil {
		t.Fatal(err)
	}
	if ta.Bytes != tb.Bytes || ta.Files != tb.Files {
		t.Fatalf("totals differ: %+v vs %+v", ta, tb)
	}
	if da, db := treeDigest(t, a), treeDigest(t, b); da != db {
		t.Fatalf("same seed, different trees: %s vs %s", da, db)
	}
	c := t.TempDir()
	if _, err := Generate(c, 150, 43); err != nil {
		t.Fatal(err)
	}
	if treeDigest(t, a) == treeDigest(t, c) {
		t.Fatal("different seeds gave the same tree")
	}
}

var specName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func TestPlansAtScale(t *testing.T) {
	const n = 10000
	plans := makePlans(n, 1)
	seen := map[string]bool{}
	cats := map[string]int{}
	kinds := map[invalidKind]int{}
	tiers := 0
	for _, p := range plans {
		if !specName.MatchString(p.base) || len(p.base) > 64 {
			t.Errorf("invalid base name %q", p.base)
		}
		if seen[strings.ToLower(p.dir)] {
			t.Errorf("duplicate directory name %q", p.dir)
		}
		seen[strings.ToLower(p.dir)] = true
		cats[p.cat.name]++
		kinds[p.kind]++
		if p.tier {
			tiers++
		}
		switch p.kind {
		case kindOK, kindNoDescription, kindUnknownKey:
			if p.name != p.dir || p.name != p.base {
				t.Errorf("%s: name %q, dir %q", invalidKindNames[p.kind], p.name, p.dir)
			}
		case kindUppercase:
			if p.name != p.dir || p.name == strings.ToLower(p.name) {
				t.Errorf("uppercase: name %q, dir %q", p.name, p.dir)
			}
		case kindNameMismatch:
			if p.name == p.dir || !specName.MatchString(p.name) {
				t.Errorf("mismatch: name %q, dir %q", p.name, p.dir)
			}
		}
	}
	if len(cats) != len(categories) || len(categories) != 50 {
		t.Errorf("%d categories used of %d", len(cats), len(categories))
	}
	if kinds[kindOK] != n-300 || tiers != 500 {
		t.Errorf("kinds %v, tiers %d", kinds, tiers)
	}
	for k := kindUppercase; k <= kindUnknownKey; k++ {
		if kinds[k] != 75 {
			t.Errorf("%s: %d", invalidKindNames[k], kinds[k])
		}
	}
}

func TestContentBounds(t *testing.T) {
	const n = 400
	plans := makePlans(n, 7)
	extraCounts := map[int]int{}
	for _, p := range plans {
		files := render(p, 7)
		md := files[0]
		if !strings.HasSuffix(md.path, "/SKILL.md") {
			t.Fatalf("first file is %s", md.path)
		}
		if len(md.data) < minSkillMD || len(md.data) > maxSkillMD {
			t.Errorf("%s: %d bytes", md.path, len(md.data))
		}
		extraCounts[len(files)-1]++
		for _, f := range files[1:] {
			if len(f.data) < minExtra || len(f.data) > maxExtra {
				t.Errorf("%s: %d bytes", f.path, len(f.data))
			}
		}
		checkFrontmatter(t, p, md.data)
	}
	for k := 0; k <= 4; k++ {
		if extraCounts[k] == 0 {
			t.Errorf("no skill with %d extra files", k)
		}
	}
}

// checkFrontmatter reads the generator's own simple frontmatter format back.
func checkFrontmatter(t *testing.T, p plan, md []byte) {
	t.Helper()
	if !bytes.HasPrefix(md, []byte("---\n")) {
		t.Fatalf("%s: no frontmatter", p.dir)
	}
	end := bytes.Index(md[4:], []byte("\n---\n"))
	if end < 0 {
		t.Fatalf("%s: frontmatter not closed", p.dir)
	}
	fm := string(md[4 : 4+end+1])
	if strings.Contains(fm, "---") {
		t.Errorf("%s: '---' inside the frontmatter", p.dir)
	}
	lines := strings.Split(fm, "\n")
	if lines[0] != "name: "+p.name {
		t.Errorf("%s: first line %q", p.dir, lines[0])
	}
	var desc string
	for i, l := range lines {
		switch {
		case l == "description: >-":
			var parts []string
			for _, c := range lines[i+1:] {
				if !strings.HasPrefix(c, "  ") {
					break
				}
				parts = append(parts, strings.TrimPrefix(c, "  "))
			}
			desc = strings.Join(parts, " ")
		case strings.HasPrefix(l, "description: "):
			desc = strings.Trim(strings.TrimPrefix(l, "description: "), `"`)
		}
	}
	if p.kind == kindNoDescription {
		if desc != "" {
			t.Errorf("%s: has a description", p.dir)
		}
		return
	}
	if len(desc) < minDesc || len(desc) > maxDesc {
		t.Errorf("%s: description of %d chars", p.dir, len(desc))
	}
	if strings.Contains(desc, ": ") || strings.Contains(desc, " #") || strings.ContainsAny(desc, "\"\\`") {
		t.Errorf("%s: description with YAML-sensitive text: %q", p.dir, desc)
	}
}

func TestRunRefusesForeignDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(dir, 5, 1, false); err == nil {
		t.Fatal("run overwrote a directory it did not create")
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Fatal(err)
	}
}

func TestRunReuse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	t1, reused, err := run(dir, 20, 3, true)
	if err != nil || reused || !t1.Complete {
		t.Fatalf("first run: %+v, reused %v, %v", t1, reused, err)
	}
	t2, reused, err := run(dir, 20, 3, true)
	if err != nil || !reused || t2.Bytes != t1.Bytes {
		t.Fatalf("second run: %+v, reused %v, %v", t2, reused, err)
	}
	t3, reused, err := run(dir, 21, 3, true)
	if err != nil || reused || t3.Skills != 21 {
		t.Fatalf("changed -n: %+v, reused %v, %v", t3, reused, err)
	}
}
