package discover

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// SkillDrift is how one skill differs between a canonical folder and its
// mirror.
type SkillDrift struct {
	// Skill is the skill directory relative to both roots.
	Skill string `json:"skill"`
	// OnlyCanonical and OnlyMirror are files present on one side only;
	// Changed are files whose content differs.
	OnlyCanonical []string `json:"only_in_canonical"`
	OnlyMirror    []string `json:"only_in_mirror"`
	Changed       []string `json:"changed"`
	// Keys are frontmatter keys whose values differ or that one side lacks.
	Keys []string `json:"frontmatter_keys"`
}

// DriftReport compares two skill folders, such as .agents/skills and its
// Claude Code mirror .claude/skills. Skills are matched by their path
// relative to each root.
type DriftReport struct {
	Canonical     string       `json:"canonical"`
	Mirror        string       `json:"mirror"`
	OnlyCanonical []string     `json:"only_in_canonical"`
	OnlyMirror    []string     `json:"only_in_mirror"`
	Differ        []SkillDrift `json:"differ"`
	// Notes carry bounds hit and links skipped on either side.
	Notes []string `json:"notes,omitempty"`
}

// InSync reports whether no drift was found.
func (r *DriftReport) InSync() bool {
	return len(r.OnlyCanonical) == 0 && len(r.OnlyMirror) == 0 && len(r.Differ) == 0
}

// Drift compares the skills under canonical and mirror.
func Drift(ctx context.Context, canonical, mirror string, lim Limits) (*DriftReport, error) {
	var sides [2]*Result
	for i, p := range []string{canonical, mirror} {
		res, err := Walk(ctx, Root{Path: p}, lim)
		if err != nil {
			return nil, err
		}
		if res.Missing {
			return nil, fmt.Errorf("drift: %s does not exist", p)
		}
		sides[i] = res
	}
	rep := &DriftReport{Canonical: sides[0].Root.Path, Mirror: sides[1].Root.Path,
		OnlyCanonical: []string{}, OnlyMirror: []string{}, Differ: []SkillDrift{}}
	rep.Notes = append(append(rep.Notes, sides[0].Notes...), sides[1].Notes...)
	mir := map[string]*Candidate{}
	for i := range sides[1].Candidates {
		mir[sides[1].Candidates[i].Rel] = &sides[1].Candidates[i]
	}
	can := map[string]bool{}
	for i := range sides[0].Candidates {
		c := &sides[0].Candidates[i]
		can[c.Rel] = true
		m, ok := mir[c.Rel]
		if !ok {
			rep.OnlyCanonical = append(rep.OnlyCanonical, c.Rel)
			continue
		}
		d, err := compareSkill(ctx, c, m)
		if err != nil {
			return nil, err
		}
		if len(d.OnlyCanonical)+len(d.OnlyMirror)+len(d.Changed)+len(d.Keys) > 0 {
			rep.Differ = append(rep.Differ, d)
		}
	}
	for _, m := range sides[1].Candidates {
		if !can[m.Rel] {
			rep.OnlyMirror = append(rep.OnlyMirror, m.Rel)
		}
	}
	sort.Strings(rep.OnlyCanonical)
	sort.Strings(rep.OnlyMirror)
	sort.Slice(rep.Differ, func(i, j int) bool { return rep.Differ[i].Skill < rep.Differ[j].Skill })
	return rep, nil
}

func compareSkill(ctx context.Context, c, m *Candidate) (SkillDrift, error) {
	d := SkillDrift{Skill: c.Rel, OnlyCanonical: []string{}, OnlyMirror: []string{}, Changed: []string{}, Keys: []string{}}
	// Both trees are read without following links, as scans read them.
	ct, err := OpenTree(c.Dir)
	if err != nil {
		return d, fmt.Errorf("drift: %w", err)
	}
	defer ct.Close()
	mt, err := OpenTree(m.Dir)
	if err != nil {
		return d, fmt.Errorf("drift: %w", err)
	}
	defer mt.Close()
	mf := map[string]skill.File{}
	for _, f := range m.Files {
		mf[f.Path] = f
	}
	cf := map[string]bool{}
	for _, f := range c.Files {
		cf[f.Path] = true
		g, ok := mf[f.Path]
		if !ok {
			d.OnlyCanonical = append(d.OnlyCanonical, f.Path)
			continue
		}
		same := f.Size == g.Size
		if same {
			var err error
			if same, err = sameContent(ct, mt, f.Path); err != nil {
				return d, err
			}
		}
		if !same {
			d.Changed = append(d.Changed, f.Path)
		}
	}
	for _, f := range m.Files {
		if !cf[f.Path] {
			d.OnlyMirror = append(d.OnlyMirror, f.Path)
		}
	}
	if err := ctx.Err(); err != nil {
		return d, err
	}
	cs, err := skill.Load(ctx, c.Dir, skill.Options{})
	if err != nil {
		return d, err
	}
	ms, err := skill.Load(ctx, m.Dir, skill.Options{})
	if err != nil {
		return d, err
	}
	d.Keys = diffKeys(cs.Frontmatter, ms.Frontmatter)
	return d, nil
}

// diffKeys lists the top-level keys whose values differ, sorted.
func diffKeys(a, b *skill.Map) []string {
	keys := map[string]bool{}
	out := []string{}
	for _, m := range []*skill.Map{a, b} {
		if m == nil {
			continue
		}
		for _, k := range m.Keys {
			keys[k] = true
		}
	}
	for k := range keys {
		av, aok := a.Get(k)
		bv, bok := b.Get(k)
		if aok != bok {
			out = append(out, k)
			continue
		}
		aj, _ := json.Marshal(av)
		bj, _ := json.Marshal(bv)
		if !bytes.Equal(aj, bj) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func sameContent(a, b fs.FS, p string) (bool, error) {
	ha, err := hashFile(a, p)
	if err != nil {
		return false, err
	}
	hb, err := hashFile(b, p)
	if err != nil {
		return false, err
	}
	return ha == hb, nil
}

func hashFile(fsys fs.FS, p string) ([32]byte, error) {
	var sum [32]byte
	f, err := fsys.Open(p)
	if err != nil {
		return sum, fmt.Errorf("drift: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, fmt.Errorf("drift: %w", err)
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// WriteText writes the report for a human, as 'skillgate drift' prints
// it: "in sync", or the skills only on one side, the skills that differ
// with their files and frontmatter keys, and the notes.
func (rep *DriftReport) WriteText(w io.Writer) {
	if rep.InSync() {
		fmt.Fprintf(w, "in sync: %s and %s\n", rep.Canonical, rep.Mirror)
		return
	}
	for _, s := range rep.OnlyCanonical {
		fmt.Fprintf(w, "only in canonical: %s\n", s)
	}
	for _, s := range rep.OnlyMirror {
		fmt.Fprintf(w, "only in mirror: %s\n", s)
	}
	for _, d := range rep.Differ {
		fmt.Fprintf(w, "differs: %s\n", d.Skill)
		for _, f := range d.Changed {
			fmt.Fprintf(w, "  changed file: %s\n", f)
		}
		for _, f := range d.OnlyCanonical {
			fmt.Fprintf(w, "  file only in canonical: %s\n", f)
		}
		for _, f := range d.OnlyMirror {
			fmt.Fprintf(w, "  file only in mirror: %s\n", f)
		}
		if len(d.Keys) > 0 {
			fmt.Fprintf(w, "  frontmatter keys: %s\n", strings.Join(d.Keys, ", "))
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
