// Package library serves per-tenant skill libraries (seed 003): skills a
// tenant uploads to object storage as
//
//	{tenant}/skills/{category}/{name}/SKILL.md …
//	{tenant}/skills/{name}/SKILL.md …
//
// are copied into a local cache directory, one directory per tenant, which
// the registry then scans as a root of scope "tenant" (discover.ScopeTenant):
// the same validator, diagnostics, bounds, versioning and incremental
// rescans as any local root. The registry shows a tenant root's skills to
// that tenant's principals only (discover.TenantOf names the tenant from
// the root, whose last element is the tenant).
//
// Why a cache and not discovery reading the bucket through an fs.FS:
// discovery's walk is built on directory handles (openat, fstatat, no
// symbolic links followed, inode fingerprints for incremental rescans), and
// the registry, the session's file serving (os.Root, hard-link and FIFO
// refusals) and the signature checks all read skill directories. A cache
// reuses every one of those unchanged, so a tenant's skill is held to
// exactly the rules of a local one, and a rescan of an unchanged library
// costs one listing of the bucket per tenant (1,000 objects a request) and
// a stat per cached skill, without downloading anything. Only a skill whose
// listing changed (a key, a size, an ETag) is copied again, whole, under a
// temporary name and renamed into place. Measured with BenchmarkSync
// (versitygw on loopback, two shared cores), for 1,000 skills of three
// files: the first sync takes 1.5 s (16 skills copied at a time), a sync of
// the unchanged library 0.2 s, nearly all of it the three listing requests
// that reading the bucket directly would make as well.
//
// Everything in the bucket is hostile: tenant names must be valid tenant
// ids, keys are validated (blob.ValidateKey), each tenant's listing is
// bounded (Options.MaxObjects: a longer one is not synced at all, so a cut
// listing never removes skills), and each skill is bounded in files, bytes
// and depth (Options.Limits) before a byte of it is written. A skill over
// its bounds, or whose objects clash as a directory tree, is not copied,
// its cached copy (if any) is removed, and the sync report says why.
package library

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/flock"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blobsync"
	"github.com/skillgate/skillgate/internal/storage/bucket"
)

// Defaults for [Options].
const (
	// DefaultMaxTenants bounds the tenants synced when Options.Tenants is
	// empty (every tenant found in the bucket).
	DefaultMaxTenants = 1000
	// DefaultMaxObjects bounds one tenant's listing.
	DefaultMaxObjects = 100_000
	// DefaultWorkers is how many skills are copied at once: requests to
	// object storage wait on the network, not on the CPU.
	DefaultWorkers = 16
)

// stateFile is the per-tenant record of what was copied: a dot-name, which
// scans skip.
const stateFile = ".library-state.json"

// Options configures a [Library]. Store and Dir are required.
type Options struct {
	// Store is the bucket the tenants upload to.
	Store blob.Store
	// Dir is the cache directory (DATA/libraries): Dir/{tenant} is the
	// root scanned for a tenant. Nothing else may write under it.
	Dir string
	// Tenants, when set, are the only tenants whose libraries are synced;
	// otherwise every tenant with a {tenant}/skills/ prefix is, up to
	// MaxTenants.
	Tenants []string
	// MaxTenants bounds the tenants found in the bucket; 0 means
	// DefaultMaxTenants.
	MaxTenants int
	// MaxObjects bounds the objects of one tenant's library; 0 means
	// DefaultMaxObjects.
	MaxObjects int
	// Limits bound each skill; the zero value means blobsync.DefaultLimits.
	Limits blobsync.Limits
	// Workers copy changed skills in parallel; 0 means DefaultWorkers.
	Workers int
	// Logger receives sync events; nil discards them.
	Logger *slog.Logger
}

// Library syncs tenant libraries into the cache. It is not safe for
// concurrent use: one sync at a time (the registry serialises scans).
type Library struct {
	opts Options
	log  *slog.Logger
}

// New returns a Library for opts, checking them.
func New(opts Options) (*Library, error) {
	if opts.Store == nil {
		return nil, errors.New("library: Options.Store is required")
	}
	if opts.Dir == "" {
		return nil, errors.New("library: Options.Dir is required")
	}
	for _, t := range opts.Tenants {
		if err := capability.CheckID("tenant", t); err != nil {
			return nil, fmt.Errorf("library: tenants: %w", err)
		}
	}
	opts.MaxTenants = cmp.Or(opts.MaxTenants, DefaultMaxTenants)
	opts.MaxObjects = cmp.Or(opts.MaxObjects, DefaultMaxObjects)
	opts.Workers = cmp.Or(opts.Workers, DefaultWorkers)
	if opts.Limits == (blobsync.Limits{}) {
		opts.Limits = blobsync.DefaultLimits
	}
	abs, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("library: %w", err)
	}
	opts.Dir = abs
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Library{opts: opts, log: log}, nil
}

// Report is what one sync did.
type Report struct {
	Tenants []TenantReport `json:"tenants"`
	// Notes are findings about the bucket as a whole.
	Notes []string `json:"notes,omitempty"`
}

// TenantReport is what one sync did for one tenant.
type TenantReport struct {
	Tenant string `json:"tenant"`
	// Root is the directory the registry scans for the tenant.
	Root string `json:"root"`
	// Skills are the skill directories found in the bucket; Copied were new
	// or changed and copied, Unchanged were not, Removed left the cache.
	Skills    int `json:"skills"`
	Copied    int `json:"copied"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
	// Refused are skills not copied, each with why.
	Refused []Refusal `json:"refused"`
	// Notes are findings about the library as a whole.
	Notes []string `json:"notes,omitempty"`

	// listing identifies what the bucket listed for the tenant (see
	// listingOf), for the library's stamp.
	listing string
}

// Refusal is a skill of a library that was not copied.
type Refusal struct {
	// Skill is its directory under {tenant}/skills/ ("category/name").
	Skill  string `json:"skill"`
	Reason string `json:"reason"`
}

// Sync brings the cache in step with the bucket and returns the roots to
// scan, one per tenant library, sorted by tenant. A tenant whose library
// could not be listed keeps its cached skills (the error is in its report's
// notes); a tenant that no longer has a library (or is no longer
// configured) leaves the cache.
//
// Syncs of one cache are serialised, also between processes (a lock file,
// Dir/.lock), so a `skillgate scan` and a server's rescan never copy into
// it at once.
func (l *Library) Sync(ctx context.Context) (*Report, []discover.Root, error) {
	if err := os.MkdirAll(l.opts.Dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("library: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(l.opts.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("library: %w", err)
	}
	defer lf.Close()
	if err := flock.Lock(lf, true); err != nil {
		return nil, nil, fmt.Errorf("library: lock %s: %w", lf.Name(), err)
	}
	defer func() { _ = flock.Unlock(lf) }()
	RemoveStaleTemps(l.opts.Dir)
	rep := &Report{Tenants: []TenantReport{}}
	tenants, err := l.tenants(ctx, rep)
	if err != nil {
		return nil, nil, err
	}
	var roots []discover.Root
	keep := map[string]bool{}
	stamp := newStamp(tenants)
	for _, t := range tenants {
		tr, ok := l.syncTenant(ctx, t)
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		stamp.add(t, tr.listing)
		if !ok {
			continue // no library: its cache, if any, goes below
		}
		rep.Tenants = append(rep.Tenants, tr)
		keep[t] = true
		roots = append(roots, discover.Root{Path: tr.Root, Scope: discover.ScopeTenant, Trust: capability.TrustImported})
	}
	// Tenants without a library leave the cache.
	ents, err := os.ReadDir(l.opts.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("library: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() && !keep[e.Name()] && !strings.HasPrefix(e.Name(), ".") {
			if err := removeTree(filepath.Join(l.opts.Dir, e.Name())); err != nil {
				return nil, nil, fmt.Errorf("library: remove the cache of %s: %w", e.Name(), err)
			}
		}
	}
	if err := stamp.write(l.opts.Dir); err != nil {
		rep.Notes = append(rep.Notes, "stamp: "+err.Error())
	}
	return rep, roots, nil
}

// tenants returns the tenants to sync, sorted, adding what rep should say
// about the search to its notes.
func (l *Library) tenants(ctx context.Context, rep *Report) ([]string, error) {
	if len(l.opts.Tenants) > 0 {
		ts := slices.Clone(l.opts.Tenants)
		slices.Sort(ts)
		return slices.Compact(ts), nil
	}
	// The top level holds tenants (with a library or not) and skillgate's
	// own "_" names: it is listed within a margin over the bound, and
	// each candidate's library is listed when it is synced.
	limit := l.opts.MaxTenants + 64
	d, err := blob.ListDir(ctx, l.opts.Store, "", limit+1)
	if err != nil {
		return nil, fmt.Errorf("library: list tenants: %w", err)
	}
	found := map[string]bool{}
	for _, name := range d.Dirs {
		if capability.CheckID("tenant", name) == nil { // not _global, _mirror, …
			found[name] = true
		}
	}
	if len(d.Dirs)+len(d.Files) > limit {
		// A cut listing must not make libraries disappear: the tenants
		// already cached are synced too.
		rep.Notes = append(rep.Notes, fmt.Sprintf("the bucket holds more than %d names at its top level: list the tenants under tenant_libraries.tenants", limit))
		ents, _ := os.ReadDir(l.opts.Dir)
		for _, e := range ents {
			if e.IsDir() && capability.CheckID("tenant", e.Name()) == nil {
				found[e.Name()] = true
			}
		}
	}
	out := sortedKeys(found)
	if len(out) > l.opts.MaxTenants {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d tenants found, %d synced (tenant_libraries.max_tenants): list the tenants under tenant_libraries.tenants", len(out), l.opts.MaxTenants))
		out = out[:l.opts.MaxTenants]
	}
	return out, nil
}

// state is what the cache holds for one tenant: per skill directory, the
// fingerprint of the listing it was copied from.
type state struct {
	Skills map[string]string `json:"skills"`
}

// syncTenant syncs one tenant's library. ok is false when the tenant has
// none (nothing under {tenant}/skills/ and nothing cached).
func (l *Library) syncTenant(ctx context.Context, tenant string) (tr TenantReport, ok bool) {
	root := filepath.Join(l.opts.Dir, tenant)
	tr = TenantReport{Tenant: tenant, Root: root, Refused: []Refusal{}}
	prefix, err := bucket.TenantSkillsPrefix(tenant)
	if err != nil {
		tr.Notes = append(tr.Notes, err.Error())
		tr.listing = "invalid"
		return tr, false
	}
	cached := exists(root)
	objs, err := l.opts.Store.List(ctx, prefix, l.opts.MaxObjects+1)
	tr.listing = l.listingOf(objs, err)
	if err != nil {
		tr.Notes = append(tr.Notes, fmt.Sprintf("not synced: listing %s failed (%v); the cached skills are kept", prefix, err))
		return tr, cached
	}
	if len(objs) > l.opts.MaxObjects {
		tr.Notes = append(tr.Notes, fmt.Sprintf("not synced: %s holds more than %d objects (tenant_libraries.max_objects); the cached skills are kept", prefix, l.opts.MaxObjects))
		return tr, cached
	}
	if len(objs) == 0 {
		// No library, or an emptied one: its cache goes (in Sync).
		return tr, false
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		tr.Notes = append(tr.Notes, "cache: "+err.Error())
		return tr, cached
	}
	skills, stray := group(prefix, objs)
	if stray > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d objects under %s belong to no skill and were ignored: a skill is {category}/{name}/SKILL.md or {name}/SKILL.md", stray, prefix))
	}
	// Copies that --skills-store s3 made under the same prefix before
	// libraries were turned on are skillgate's, not the tenant's: each has
	// its digest at {tenant}/skill-versions/{dir}.digest.
	versions := tenant + "/skill-versions/"
	copies, err := l.opts.Store.List(ctx, versions, l.opts.MaxObjects+1)
	if err != nil {
		tr.Notes = append(tr.Notes, fmt.Sprintf("not synced: listing %s failed (%v); the cached skills are kept", versions, err))
		return tr, cached
	}
	copied := map[string]bool{}
	for _, c := range copies {
		if dir, ok := strings.CutSuffix(strings.TrimPrefix(c.Key, versions), ".digest"); ok {
			copied[dir] = true
		}
	}
	old := l.readState(root)
	next := state{Skills: map[string]string{}}
	tr.Skills = len(skills)
	// Removals first: a skill directory may become a category, or the
	// other way round.
	for _, dir := range sortedKeys(old.Skills) {
		if _, ok := skills[dir]; ok {
			continue
		}
		if err := removeTree(filepath.Join(root, filepath.FromSlash(dir))); err != nil {
			tr.Notes = append(tr.Notes, fmt.Sprintf("%s: remove: %v", dir, err))
			next.Skills[dir] = old.Skills[dir]
			continue
		}
		pruneEmpty(root, filepath.Dir(filepath.Join(root, filepath.FromSlash(dir))))
		tr.Removed++
	}
	// Changed skills are copied in parallel (each into its own place),
	// then accounted for in order.
	type job struct {
		dir, fp, target string
		err             error
	}
	var jobs []*job
	for _, dir := range sortedKeys(skills) {
		if hidden(dir) {
			tr.Refused = append(tr.Refused, Refusal{Skill: dir, Reason: "a directory whose name starts with a dot, or node_modules, is never scanned; rename it"})
			continue
		}
		if copied[dir] {
			tr.Refused = append(tr.Refused, Refusal{Skill: dir, Reason: "a copy of a shared skill that --skills-store s3 made before tenant libraries were on (" +
				versions + dir + ".digest); delete it with its .digest, or delete only the .digest to make it the tenant's own"})
			continue
		}
		fp := fingerprint(skills[dir])
		target := filepath.Join(root, filepath.FromSlash(dir))
		if old.Skills[dir] == fp && exists(target) {
			next.Skills[dir] = fp
			tr.Unchanged++
			continue
		}
		jobs = append(jobs, &job{dir: dir, fp: fp, target: target})
	}
	work := make(chan *job)
	var wg sync.WaitGroup
	for range min(l.opts.Workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.err = blobsync.Materialize(ctx, l.opts.Store, prefix+j.dir+"/", skills[j.dir], j.target, l.opts.Limits)
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return tr, true
	}
	for _, j := range jobs {
		dir, err := j.dir, j.err
		if err != nil {
			refused := errors.Is(err, blobsync.ErrLimit) || errors.Is(err, blob.ErrConflict) || errors.Is(err, blob.ErrInvalidKey)
			if !refused && old.Skills[dir] != "" && exists(j.target) {
				// A failure that may pass (the network, an upload in
				// progress): the last good copy stays until the next sync.
				tr.Notes = append(tr.Notes, fmt.Sprintf("%s: not copied (%s); the previous copy is kept", dir, reason(err)))
				next.Skills[dir] = old.Skills[dir]
				continue
			}
			tr.Refused = append(tr.Refused, Refusal{Skill: dir, Reason: reason(err)})
			if old.Skills[dir] != "" {
				// The cached copy is of an upload the bucket no longer
				// holds, which will never be copied as it is.
				if rerr := removeTree(j.target); rerr == nil {
					tr.Removed++
				}
			}
			continue
		}
		next.Skills[dir] = j.fp
		tr.Copied++
	}
	slices.SortFunc(tr.Refused, func(a, b Refusal) int { return strings.Compare(a.Skill, b.Skill) })
	if err := writeState(root, next); err != nil {
		tr.Notes = append(tr.Notes, "cache state: "+err.Error())
	}
	if tr.Copied+tr.Removed > 0 || len(tr.Refused) > 0 {
		l.log.InfoContext(ctx, "tenant library synced", "tenant", tenant, "skills", tr.Skills, "copied", tr.Copied,
			"unchanged", tr.Unchanged, "removed", tr.Removed, "refused", len(tr.Refused))
	}
	return tr, true
}

// reason words a refusal for the tenant's operator.
func reason(err error) string {
	switch {
	case errors.Is(err, blobsync.ErrLimit):
		return strings.TrimPrefix(err.Error(), "blobsync: ") + "; split the skill or remove files"
	case errors.Is(err, blob.ErrConflict):
		return "its keys do not form a directory tree (" + err.Error() + "): a key may not be both a file and a directory"
	case errors.Is(err, blob.ErrSizeMismatch):
		return err.Error() + "; the next sync tries again"
	}
	return err.Error()
}

// group splits a tenant's listing (keys under prefix) into skill
// directories, each with its objects, and counts the objects in none. A
// skill directory is a directory holding SKILL.md (or skill.md) one or two
// levels below prefix ({name}/ or {category}/{name}/); a first-level skill
// takes everything below it, nested skills included (the scan finds those
// as skills of their own).
func group(prefix string, objs []blob.Info) (map[string][]blob.Info, int) {
	skills := map[string][]blob.Info{}
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, prefix)
		dir, file := splitLast(rel)
		if file != "SKILL.md" && file != "skill.md" {
			continue
		}
		if n := strings.Count(dir, "/"); dir != "" && n <= 1 {
			skills[dir] = nil
		}
	}
	for dir := range skills {
		if i := strings.IndexByte(dir, '/'); i >= 0 {
			if _, parent := skills[dir[:i]]; parent {
				delete(skills, dir) // part of its parent's tree
			}
		}
	}
	stray := 0
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, prefix)
		first, rest, _ := strings.Cut(rel, "/")
		if _, ok := skills[first]; ok && rest != "" {
			skills[first] = append(skills[first], o)
			continue
		}
		if second, _, ok := strings.Cut(rest, "/"); ok {
			if _, ok := skills[first+"/"+second]; ok {
				skills[first+"/"+second] = append(skills[first+"/"+second], o)
				continue
			}
		}
		stray++
	}
	return skills, stray
}

// hidden reports whether a skill directory has a segment scans skip.
func hidden(dir string) bool {
	for seg := range strings.SplitSeq(dir, "/") {
		if skill.Skip(seg) {
			return true
		}
	}
	return false
}

// splitLast splits a key at its last slash.
func splitLast(key string) (dir, file string) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return "", key
	}
	return key[:i], key[i+1:]
}

// fingerprint identifies a skill's listing: keys, sizes, ETags and times.
func fingerprint(objs []blob.Info) string {
	h := sha256.New()
	for _, o := range objs {
		h.Write([]byte(o.Key))
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatInt(o.Size, 10)))
		h.Write([]byte{0})
		h.Write([]byte(o.ETag))
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatInt(o.ModTime.UnixNano(), 10)))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (l *Library) readState(root string) state {
	var st state
	b, err := os.ReadFile(filepath.Join(root, stateFile))
	if err != nil || len(b) > 64<<20 || json.Unmarshal(b, &st) != nil || st.Skills == nil {
		return state{Skills: map[string]string{}}
	}
	return st
}

// writeState writes the state file atomically.
func writeState(root string, st state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(root, ".state-")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(root, stateFile))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// removeTree removes dir: renamed aside to a dot-name first, so a scan
// never sees half of it.
func removeTree(dir string) error {
	if !exists(dir) {
		return nil
	}
	aside := filepath.Join(filepath.Dir(dir), ".old-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := os.Rename(dir, aside); err != nil {
		return err
	}
	return os.RemoveAll(aside)
}

// pruneEmpty removes dir and its parents up to (not including) root while
// they are empty: a category whose last skill left.
func pruneEmpty(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// RemoveStaleTemps removes what a sync killed mid-copy left in the cache
// of every tenant under dir.
func RemoveStaleTemps(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	now := time.Now()
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		t := filepath.Join(dir, e.Name())
		blobsync.RemoveStale(t, time.Hour, now)
		subs, _ := os.ReadDir(t)
		for _, s := range subs {
			if s.IsDir() && !strings.HasPrefix(s.Name(), ".") {
				blobsync.RemoveStale(filepath.Join(t, s.Name()), time.Hour, now)
			}
		}
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
