package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/launch"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// PackagesDir is the directory of a version's fetched packages, beside its
// skill tree: <version>/packages/<server id> holds the package (and its
// dependencies) a launch of that server fetched.
const PackagesDir = "packages"

// stagingPrefix names the directory under the managed storage root where
// packages are fetched before the version they belong to is stored.
const stagingPrefix = ".fetch-"

// staleStaging is how old a staging directory must be before Recover takes
// it for the leftover of a crash rather than a fetch in progress.
const staleStaging = 2 * launch.DefaultTimeout

// isPackageError reports whether err is a refusal of a declared package
// launch (one that cannot be pinned, a failed fetch, install scripts).
func isPackageError(err error) bool {
	return errors.Is(err, launch.ErrUnsupported) || errors.Is(err, launch.ErrFetch) || errors.Is(err, launch.ErrInstallScript)
}

// launches returns the package-manager launches among cfg's stdio
// servers, by server id.
func launches(cfg *mcpclient.Config) (map[string]launch.Launch, error) {
	out := map[string]launch.Launch{}
	if cfg == nil {
		return out, nil
	}
	for _, d := range cfg.Servers {
		if d.Transport != capability.TransportStdio {
			continue
		}
		l, ok, err := launch.Parse(d.Command, d.Args)
		if err != nil {
			return nil, fmt.Errorf("%s: server %s: %w", MCPConfigFile, d.ID, err)
		}
		if ok {
			out[d.ID] = l
		}
	}
	return out, nil
}

// fetchPackages fetches the package of every launch in cfg into a staging
// directory under the storage root, and returns it (empty when cfg
// launches nothing) with what was pinned, sorted by server. locked pins a
// server's package to an exact version (a lock file's); allow names the
// packages whose install scripts the operator allows. On error nothing is
// left in managed storage.
func (s *Service) fetchPackages(ctx context.Context, key string, cfg *mcpclient.Config, locked map[string]string, allow map[string]string) (string, []launch.Package, error) {
	ls, err := launches(cfg)
	if err != nil || len(ls) == 0 {
		if err != nil {
			err = fmt.Errorf("%s: %w", key, err)
		}
		return "", nil, err
	}
	if err := os.MkdirAll(s.storage.Root, 0o700); err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	staging, err := os.MkdirTemp(s.storage.Root, stagingPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	root := filepath.Join(staging, PackagesDir)
	if err := os.Mkdir(root, 0o755); err != nil {
		os.RemoveAll(staging)
		return "", nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	ids := make([]string, 0, len(ls))
	for id := range ls {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var pkgs []launch.Package
	for _, id := range ids {
		l := ls[id]
		if v, ok := locked[id]; ok && v != "" {
			l.Requested = v
		}
		s.step("fetching the %s package %s for server %s", l.Ecosystem, launchName(l), id)
		p, err := s.fetcher.Fetch(ctx, id, l, filepath.Join(root, id), allow)
		if err != nil {
			os.RemoveAll(staging)
			return "", nil, fmt.Errorf("%s: %w", key, err)
		}
		// A lock pins the version fetched; the record keeps what the
		// declaration asks for, so that the version's digest is the
		// one the lock was made from.
		p.Requested = ls[id].Requested
		pkgs = append(pkgs, p)
	}
	return staging, pkgs, nil
}

// packagesOf returns the packages pinned for in (none for a version whose
// servers launch none).
func packagesOf(in store.Install) ([]launch.Package, error) {
	if len(in.Provenance) == 0 {
		return nil, nil
	}
	var p Provenance
	if err := json.Unmarshal(in.Provenance, &p); err != nil {
		return nil, fmt.Errorf("%w: %s: provenance: %w", ErrStorage, in.Key, err)
	}
	return p.Packages, nil
}

// withExec returns decl set to run the package pinned for it, from in's
// managed storage, when it launches one; decl unchanged otherwise. check
// refuses a package whose interpreter is gone (analysis says so; the
// gateway's start fails for that server alone).
func withExec(in store.Install, decl mcpclient.ServerDecl, pkgs []launch.Package, check bool) (mcpclient.ServerDecl, error) {
	for _, p := range pkgs {
		if p.Server != decl.ID {
			continue
		}
		l, ok, err := launch.Parse(decl.Command, decl.Args)
		if err != nil || !ok {
			return decl, fmt.Errorf("%w: %s: server %s: its package %s is pinned, but its declaration is no launch (%v)", ErrStorage, in.Key, decl.ID, p.Name, err)
		}
		if err := p.CheckInterpreter(); check && err != nil {
			return decl, err
		}
		x, err := p.Exec(filepath.Join(in.Dir, PackagesDir, decl.ID), l.Args)
		if err != nil {
			return decl, err
		}
		decl.Exec = &x
		return decl, nil
	}
	if _, ok, _ := launch.Parse(decl.Command, decl.Args); ok && check {
		return decl, fmt.Errorf("server %s is launched with %s, and no package was fetched and pinned for it at install (an install by an older skillgate); it is not started: run skillgate update %s, or install it again",
			decl.ID, decl.Command, in.Key)
	}
	return decl, nil
}

// checkPackage refuses to start decl's package when its fetched tree no
// longer hashes to the digest approved for it.
func (s *Service) checkPackage(ctx context.Context, decl mcpclient.ServerDecl) error {
	if decl.Exec == nil || decl.Exec.Tree == "" {
		return nil
	}
	if err := s.verifier.Verify(ctx, decl.Exec.Dir, decl.Exec.Tree); err != nil {
		return fmt.Errorf("the fetched package of server %s changed since it was pinned (%w); it is not started: install the skill again (or skillgate update it) to fetch it anew", decl.ID, err)
	}
	return nil
}

// fetching reports whether e, an entry of the storage root, is the
// staging directory of a fetch that may still run (younger than any fetch
// lasts): Recover leaves it alone.
func (s *Service) fetching(e os.DirEntry) bool {
	if !e.IsDir() || !strings.HasPrefix(e.Name(), stagingPrefix) {
		return false
	}
	info, err := e.Info()
	return err == nil && s.now().Sub(info.ModTime()) < staleStaging
}

// PackageChange is how one server's package differs between two
// versions: what an update's review shows beside the capability diff.
type PackageChange struct {
	// Server is the server id.
	Server string `json:"server"`
	// Name is the package; From and To its versions ("" where a version
	// has no such package).
	Name string `json:"name"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// FromIntegrity and ToIntegrity are the archives' hashes.
	FromIntegrity string `json:"fromIntegrity,omitempty"`
	ToIntegrity   string `json:"toIntegrity,omitempty"`
	// Added, Removed and Changed are the dependencies ("name@version";
	// Changed as "name@old → new") that differ.
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
}

// diffPackages compares the packages of two versions, server by server,
// and returns the changes (none when they pin the same).
func diffPackages(old, cur []launch.Package) []PackageChange {
	byServer := func(ps []launch.Package) map[string]launch.Package {
		m := map[string]launch.Package{}
		for _, p := range ps {
			m[p.Server] = p
		}
		return m
	}
	o, n := byServer(old), byServer(cur)
	ids := map[string]bool{}
	for id := range o {
		ids[id] = true
	}
	for id := range n {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	var out []PackageChange
	for _, id := range sorted {
		a, b := o[id], n[id]
		if a.Name == b.Name && a.Version == b.Version && a.Integrity == b.Integrity && a.Tree == b.Tree {
			continue
		}
		c := PackageChange{Server: id, Name: b.Name, From: a.Version, To: b.Version, FromIntegrity: a.Integrity, ToIntegrity: b.Integrity,
			Added: []string{}, Removed: []string{}, Changed: []string{}}
		if c.Name == "" {
			c.Name = a.Name
		}
		deps := func(p launch.Package) map[string]string {
			m := map[string]string{}
			for _, d := range p.Dependencies {
				if v, ok := m[d.Name]; ok {
					m[d.Name] = v + ", " + d.Version
					continue
				}
				m[d.Name] = d.Version
			}
			return m
		}
		da, db := deps(a), deps(b)
		for name, v := range db {
			switch old, ok := da[name]; {
			case !ok:
				c.Added = append(c.Added, name+"@"+v)
			case old != v:
				c.Changed = append(c.Changed, name+"@"+old+" → "+v)
			}
		}
		for name, v := range da {
			if _, ok := db[name]; !ok {
				c.Removed = append(c.Removed, name+"@"+v)
			}
		}
		sort.Strings(c.Added)
		sort.Strings(c.Removed)
		sort.Strings(c.Changed)
		out = append(out, c)
	}
	return out
}

// launchesIn reports whether t's mcp.json declares a package launch (or
// one that cannot be read: the install then says why).
func launchesIn(t *Tree) bool {
	_, cfg, err := validateTree(t)
	if err != nil {
		return true
	}
	ls, err := launches(cfg)
	return err != nil || len(ls) > 0
}

// packageText writes what review shows of a server's pinned package.
func packageText(b *strings.Builder, p launch.Package) {
	requested := p.Requested
	switch {
	case requested == "":
		requested = "no version given: the newest, " + p.Version
	case requested != p.Version:
		requested += ": the newest matching, " + p.Version
	default:
		requested = "exactly"
	}
	fmt.Fprintf(b, "  package: %s %s@%s (%s), %s, from %s\n", p.Ecosystem, p.Name, p.Version, requested, p.Launcher, p.Registry)
	fmt.Fprintf(b, "    integrity: %s\n", p.Integrity)
	fmt.Fprintf(b, "    fetched tree: %s, %s\n", p.Tree, plural.Of(len(p.Dependencies), "dependency", "dependencies"))
	fmt.Fprintf(b, "    runs offline: %s %s\n", p.Interpreter, p.Bin)
	for _, sc := range p.Scripts {
		if sc.Allowed {
			fmt.Fprintf(b, "    install scripts of %s@%s allowed: %q\n", sc.Package, sc.Version, sc.Why)
		}
	}
}

// packageChangeText writes what an update's review shows of a package that
// changed.
func packageChangeText(b *strings.Builder, c PackageChange) {
	from, to := orNone(c.From), orNone(c.To)
	fmt.Fprintf(b, "  package of server %s: %s %s → %s\n", c.Server, c.Name, from, to)
	if c.FromIntegrity != c.ToIntegrity {
		fmt.Fprintf(b, "    integrity: %s → %s\n", orNone(c.FromIntegrity), orNone(c.ToIntegrity))
	}
	for _, l := range []struct {
		what string
		list []string
	}{{"added", c.Added}, {"removed", c.Removed}, {"changed", c.Changed}} {
		if len(l.list) > 0 {
			fmt.Fprintf(b, "    dependencies %s: %s\n", l.what, strings.Join(l.list, ", "))
		}
	}
}

// orNone is s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// packagesAudit is what an install's audit record keeps of its packages:
// each server's package, version, integrity, registry and the install
// scripts allowed, with why. Nil when there are none.
func packagesAudit(pkgs []launch.Package) map[string]any {
	if len(pkgs) == 0 {
		return nil
	}
	type entry struct {
		Server    string          `json:"server"`
		Name      string          `json:"name"`
		Version   string          `json:"version"`
		Integrity string          `json:"integrity"`
		Registry  string          `json:"registry"`
		Tree      string          `json:"tree"`
		Scripts   []launch.Script `json:"scriptsAllowed,omitempty"`
	}
	out := make([]entry, 0, len(pkgs))
	for _, p := range pkgs {
		e := entry{Server: p.Server, Name: p.Name, Version: p.Version, Integrity: p.Integrity, Registry: p.Registry, Tree: p.Tree}
		for _, sc := range p.Scripts {
			if sc.Allowed {
				e.Scripts = append(e.Scripts, sc)
			}
		}
		out = append(out, e)
	}
	return map[string]any{"packages": out}
}

// contentOf is the digest of in's skill tree alone: its version's digest,
// unless its servers launch fetched packages (see launch.VersionDigest).
func contentOf(in store.Install) string {
	var p Provenance
	if len(in.Provenance) > 0 && json.Unmarshal(in.Provenance, &p) != nil {
		return in.Digest
	}
	return contentDigest(in, p)
}

// contentDigest is contentOf for a provenance already read.
func contentDigest(in store.Install, p Provenance) string {
	if p.version() == in.Digest && p.Digest != "" {
		return p.Digest
	}
	return in.Digest
}

// launchName is how a progress line names l's package: name@version as
// declared, or the name alone when no version was.
func launchName(l launch.Launch) string {
	if l.Requested == "" {
		return l.Package
	}
	return l.Package + "@" + l.Requested
}
