package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/lineage"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
)

// ConfigScanner is the scanner section of config.yaml: what layer 4's
// content scanner compares skills with (docs/admission.md, "Lineage").
type ConfigScanner struct {
	// References are directories of reference skills: a skill under
	// review that is derived from one of them is compared with it.
	References []ConfigReference `yaml:"references"`
}

// ConfigReference is one reference root: a skill directory (with
// SKILL.md) or a directory of skills, at any depth up to 8.
type ConfigReference struct {
	// Path is the directory (~ is the home directory).
	Path string `yaml:"path"`
	// Name prefixes its skills' reference names (NAME:PATH); the
	// directory's base name when empty.
	Name string `yaml:"name"`
	// Trusted, true when unset, says its skills were reviewed: a derived
	// skill's files identical to theirs are not reported again.
	Trusted *bool `yaml:"trusted"`
}

// referenceDepth bounds the search for skills under a reference root.
const referenceDepth = 8

// lineageFile is the index's file in the data directory.
const lineageFile = "lineage.idx"

// check validates the scanner section; git sources are not supported
// yet.
func (c ConfigScanner) check() []error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range c.References {
		switch {
		case r.Path == "":
			errs = append(errs, fmt.Errorf("scanner.references[%d].path: required", i))
		case strings.Contains(r.Path, "://") || strings.HasPrefix(r.Path, "git@"):
			errs = append(errs, fmt.Errorf("scanner.references[%d].path: %q: git sources are not supported yet; clone it and give the directory", i, r.Path))
		}
		if strings.ContainsAny(r.Name, ":/") {
			errs = append(errs, fmt.Errorf("scanner.references[%d].name: %q: no ':' or '/'", i, r.Name))
		}
		name := r.refName()
		if seen[name] {
			errs = append(errs, fmt.Errorf("scanner.references[%d]: name %q is used twice: give one a name", i, name))
		}
		seen[name] = true
	}
	return errs
}

func (r ConfigReference) refName() string {
	if r.Name != "" {
		return r.Name
	}
	return filepath.Base(filepath.Clean(r.Path))
}

// referenceRoot is one directory whose skills are references.
type referenceRoot struct {
	name, path, origin string
	trusted            bool
}

// lineageIndex opens layer 4's reference index (file, DATA/lineage.idx)
// and brings it in step with the reference roots (scanner.references and
// the first_party roots), whose skills are found as the registry finds
// them (discover.Walk): a skill whose tree is unchanged since it was
// indexed (the walk's fingerprint of paths, sizes and times) is not read
// again; one that is gone is removed. Approved installs are added by the
// install service. A file of another format is rebuilt.
func (a *App) lineageIndex(ctx context.Context, cfg *Config, file string) (*lineage.Index, error) {
	ix, err := lineage.Load(file, lineage.Limits{})
	if errors.Is(err, lineage.ErrFormat) {
		a.log.Warn("lineage: rebuilding the reference index", "file", file, "err", err)
		ix, err = lineage.New(lineage.Limits{}), nil
	}
	if err != nil {
		return nil, err
	}
	var roots []referenceRoot
	for _, r := range cfg.Scanner.References {
		roots = append(roots, referenceRoot{name: r.refName(), path: expandHome(r.Path, a.getenv("HOME")), origin: "reference root", trusted: r.Trusted == nil || *r.Trusted})
	}
	for _, r := range cfg.Roots {
		if t, err := capability.ParseTrust(r.Trust); err == nil && t == capability.TrustFirstParty {
			p := expandHome(r.Path, a.getenv("HOME"))
			roots = append(roots, referenceRoot{name: "first_party " + filepath.Base(filepath.Clean(p)), path: p, origin: string(capability.TrustFirstParty), trusted: true})
		}
	}
	lim := discover.DefaultLimits
	lim.MaxDepth = referenceDepth
	changed := false
	present := map[string]bool{}
	for _, root := range roots {
		res, err := discover.Walk(ctx, discover.Root{Path: root.path}, lim)
		if err != nil {
			return nil, fmt.Errorf("config scanner.references %s: %w", root.path, err)
		}
		for _, c := range res.Candidates {
			name := root.name + ":" + filepath.ToSlash(c.Rel)
			present[name] = true
			ch, err := ix.Sync(lineage.Reference{Name: name, Origin: root.origin, Trusted: root.trusted, Stamp: c.Fingerprint}, c.Dir)
			if errors.Is(err, lineage.ErrLimit) {
				a.log.Warn("lineage: the reference index is full", "skill", c.Dir)
				break
			}
			if err != nil {
				return nil, err
			}
			changed = changed || ch
		}
	}
	for _, n := range ix.Names() {
		if r, ok := ix.Reference(n); ok && r.Origin != "approved" && !present[n] {
			changed = ix.Remove(n) || changed
		}
	}
	if changed {
		if err := ix.Save(file); err != nil {
			return nil, err
		}
	}
	return ix, nil
}
