package registry

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Imported is an enabled skill of the install pipeline, as the registry
// lists it: its identity, name and category as installed, and its skill
// tree in managed storage.
type Imported struct {
	Key, Name, Category string
	// Dir is the skill tree (DATA/imported/<version>/skill).
	Dir string
}

// importedPosition places the root of imported skills after every
// configured root.
const importedPosition = 1 << 30

// SyncImported makes the registry list exactly skills, the enabled skills
// of the install pipeline kept under root (managed storage), with scope
// and trust imported: below every configured root in precedence, in every
// catalog, skill_list, the disclosure and load_skill like any scanned
// skill. Only trees that changed since the last sync are read again. A
// skill is parsed as a scan parses one, but its name is checked against
// its installed name, not the managed directory's ("skill"). It is
// idempotent: callers run it after every install change and at start, so a
// process that died between an install change and its sync leaves nothing
// behind.
func (r *Registry) SyncImported(ctx context.Context, root string, skills []Imported) error {
	ap, ok := r.store.(store.RootApplier)
	if !ok {
		return errors.New("registry: the store cannot record imported skills")
	}
	r.scanMu.Lock()
	defer r.scanMu.Unlock()
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	want := make(map[string]Imported, len(skills))
	for _, s := range skills {
		d, err := filepath.Abs(s.Dir)
		if err != nil {
			return err
		}
		want[d] = s
	}
	refs, err := r.store.Refs(ctx, abs)
	if err != nil {
		return err
	}
	sc := store.RootScan{Root: abs, Scope: ScopeImported, Trust: string(capability.TrustImported), Position: importedPosition}
	found := map[string]bool{}
	dirs := make([]string, 0, len(want))
	for d := range want {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		// Each version directory (<version>/skill) is walked on its own,
		// so that neither the number of installs nor the trees of those
		// not enabled count against the walk's bounds.
		vdir := filepath.Dir(d)
		res, err := discover.Walk(ctx, discover.Root{Path: vdir}, r.opts.Limits)
		if err != nil {
			return fmt.Errorf("registry: imported skill %s: %w", want[d].Key, err)
		}
		for _, c := range res.Candidates {
			if c.Dir != d {
				continue
			}
			found[d] = true
			if ref, ok := refs[d]; ok && ref.Fingerprint == c.Fingerprint {
				continue
			}
			c.Rel = relTo(abs, d) // "<version>/skill", unique in the root
			trees := discover.OpenTrees(vdir)
			v, err := parseImported(ctx, trees, abs, c, want[d])
			trees.Close()
			if err != nil {
				return err
			}
			sc.Upserts = append(sc.Upserts, v)
		}
	}
	for dir := range refs {
		if !found[dir] {
			sc.Gone = append(sc.Gone, dir)
		}
	}
	sort.Strings(sc.Gone)
	if len(sc.Upserts) == 0 && len(sc.Gone) == 0 {
		return nil // nothing changed: no write, the generation stays
	}
	if err := ap.ApplyRoot(ctx, sc); err != nil {
		return fmt.Errorf("registry: record imported skills: %w", err)
	}
	r.log.InfoContext(ctx, "imported skills", "root", abs, "enabled", len(skills), "changed", len(sc.Upserts), "gone", len(sc.Gone))
	return nil
}

// relTo is dir relative to root, or dir when it is not below root.
func relTo(root, dir string) string {
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return dir
}

// parseImported is parseCandidate for a skill of managed storage: its
// category and the name its directory is checked against are the
// installed skill's.
func parseImported(ctx context.Context, trees *discover.Trees, root string, c discover.Candidate, im Imported) (store.Version, error) {
	c.Category = im.Category
	v := store.Version{Root: root, Dir: c.Dir, Rel: c.Rel, File: filepath.Join(c.Dir, c.FileName), Fingerprint: c.Fingerprint, Category: c.Category}
	opts := skill.Options{Mode: skill.Lenient, Category: c.Category, SkipBody: true}
	s, err := loadCandidate(ctx, trees, c, im.Name, opts, nil)
	if err != nil {
		if ctx.Err() != nil {
			return v, ctx.Err()
		}
		s = &skill.Skill{Category: c.Category, Tier: skill.DefaultTier}
		s.Diagnostics = []skill.Diagnostic{{Severity: skill.SeverityError, Message: err.Error()}}
	}
	fillVersion(&v, s, c)
	return v, nil
}
