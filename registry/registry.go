// Package registry is the skill registry service: it scans configured
// roots into the store incrementally, resolves precedence between scopes,
// and answers the queries the CLI, the catalog and agents need.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/discover"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// ErrNotFound means no skill matches a name.
var ErrNotFound = errors.New("skill not found")

// ErrAmbiguous means a bare name matches skills in several categories.
var ErrAmbiguous = errors.New("skill name is ambiguous")

// Options configures a Registry. The zero value is usable.
type Options struct {
	// Limits bound each root's walk; zero means discover.DefaultLimits.
	Limits discover.Limits
	// Workers parse and hash changed skills in parallel; zero means one
	// per CPU.
	Workers int
	// Logger receives scan events; nil discards them.
	Logger *slog.Logger
}

// Registry is the registry service over a store. It is safe for concurrent
// use; scans are serialised.
type Registry struct {
	store  store.Store
	opts   Options
	log    *slog.Logger
	scanMu sync.Mutex
}

// New returns a registry over st.
func New(st store.Store, opts Options) *Registry {
	if opts.Limits == (discover.Limits{}) {
		opts.Limits = discover.DefaultLimits
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{store: st, opts: opts, log: log}
}

// Progress reports scan progress: phase is "walk" or "parse", done of
// total units.
type Progress func(phase string, done, total int)

// RootReport is what a scan found under one root.
type RootReport struct {
	Path      string   `json:"path"`
	Scope     string   `json:"scope"`
	Missing   bool     `json:"missing,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
	Dirs      int      `json:"dirs"`
	Skills    int      `json:"skills"`
	Notes     []string `json:"notes,omitempty"`
}

// Rejection is a skill that failed validation, with its reasons.
type Rejection struct {
	Dir    string   `json:"dir"`
	Name   string   `json:"name,omitempty"`
	Errors []string `json:"errors"`
}

// Shadow records that a skill hides another with the same identity.
type Shadow struct {
	Key      string `json:"key"`
	Winner   string `json:"winner"`
	WinScope string `json:"winner_scope"`
	Loser    string `json:"shadowed"`
	Scope    string `json:"shadowed_scope"`
}

// ScanReport summarises a scan.
type ScanReport struct {
	Roots []RootReport `json:"roots"`
	// Skills is how many skill directories were found; Valid and Rejected
	// split them. Parsed were new or changed, Unchanged cost a stat only,
	// Removed left the registry.
	Skills     int         `json:"skills"`
	Valid      int         `json:"valid"`
	Rejected   int         `json:"rejected"`
	Parsed     int         `json:"parsed"`
	Unchanged  int         `json:"unchanged"`
	Removed    int         `json:"removed"`
	Shadowed   []Shadow    `json:"shadowed"`
	Rejections []Rejection `json:"rejections"`
	DurationMS float64     `json:"duration_ms"`
	// Phases splits DurationMS: walking the roots, reading, parsing and
	// hashing changed skills, and writing the index.
	Phases struct {
		WalkMS  float64 `json:"walk_ms"`
		ParseMS float64 `json:"parse_ms"`
		IndexMS float64 `json:"index_ms"`
	} `json:"phases"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Scan walks roots (in precedence order among equal scopes), parses what
// changed since the last scan, and records the result atomically. Roots not
// given are forgotten with their skills: the registry mirrors the
// configuration.
func (r *Registry) Scan(ctx context.Context, roots []discover.Root, progress Progress) (*ScanReport, error) {
	r.scanMu.Lock()
	defer r.scanMu.Unlock()
	start := time.Now()
	if progress == nil {
		progress = func(string, int, int) {}
	}
	rep := &ScanReport{Shadowed: []Shadow{}, Rejections: []Rejection{}}
	var scans []store.RootScan
	seen := map[string]bool{}
	var walkD, parseD time.Duration
	for i, root := range roots {
		t0 := time.Now()
		abs, err := filepath.Abs(root.Path)
		if err != nil {
			return nil, err
		}
		old, err := r.store.Listings(ctx, abs)
		if err != nil {
			return nil, err
		}
		cache := make(discover.Cache, len(old))
		for p, l := range old {
			cache[p] = discover.Listing{MTime: l.MTime, Entries: l.Entries}
		}
		res, err := discover.WalkCached(ctx, root, r.opts.Limits, cache)
		walkD += time.Since(t0)
		if err != nil {
			return nil, err
		}
		progress("walk", i+1, len(roots))
		rr := RootReport{Path: res.Root.Path, Scope: root.Scope.String(), Missing: res.Missing, Truncated: res.Truncated, Dirs: res.Dirs, Skills: len(res.Candidates), Notes: res.Notes}
		rep.Roots = append(rep.Roots, rr)
		if res.Missing || seen[res.Root.Path] {
			continue
		}
		seen[res.Root.Path] = true
		refs, err := r.store.Refs(ctx, res.Root.Path)
		if err != nil {
			return nil, err
		}
		sc := store.RootScan{Root: res.Root.Path, Scope: root.Scope.String(), Position: i, Notes: res.Notes}
		sc.PutListings, sc.GoneListings = listingChanges(old, res.Listings)
		var changed []discover.Candidate
		found := make(map[string]bool, len(res.Candidates))
		for _, c := range res.Candidates {
			found[c.Dir] = true
			if ref, ok := refs[c.Dir]; ok && ref.Fingerprint == c.Fingerprint {
				rep.Unchanged++
				continue
			}
			changed = append(changed, c)
		}
		for dir := range refs {
			if !found[dir] {
				sc.Gone = append(sc.Gone, dir)
			}
		}
		sort.Strings(sc.Gone)
		rep.Removed += len(sc.Gone)
		t1 := time.Now()
		sc.Upserts, err = r.parseAll(ctx, res.Root.Path, changed, progress)
		parseD += time.Since(t1)
		if err != nil {
			return nil, err
		}
		rep.Parsed += len(changed)
		scans = append(scans, sc)
	}
	t2 := time.Now()
	if err := r.store.ApplyScans(ctx, scans); err != nil {
		return nil, err
	}
	rep.Phases.WalkMS, rep.Phases.ParseMS, rep.Phases.IndexMS = ms(walkD), ms(parseD), ms(time.Since(t2))
	all, err := r.store.Versions(ctx, store.Filter{Summary: true})
	if err != nil {
		return nil, err
	}
	rep.Skills = len(all)
	for _, v := range all {
		if v.Valid {
			rep.Valid++
			continue
		}
		rep.Rejected++
		rej := Rejection{Dir: v.Dir, Name: v.Name}
		var diags []skill.Diagnostic
		_ = json.Unmarshal(v.Diagnostics, &diags)
		for _, d := range diags {
			if d.Severity == skill.SeverityError {
				rej.Errors = append(rej.Errors, d.Message)
			}
		}
		rep.Rejections = append(rep.Rejections, rej)
	}
	sort.Slice(rep.Rejections, func(i, j int) bool { return rep.Rejections[i].Dir < rep.Rejections[j].Dir })
	_, rep.Shadowed = resolve(all)
	rep.DurationMS = ms(time.Since(start))
	r.log.InfoContext(ctx, "scan", "roots", len(roots), "skills", rep.Skills, "parsed", rep.Parsed,
		"unchanged", rep.Unchanged, "removed", rep.Removed, "rejected", rep.Rejected, "duration_ms", rep.DurationMS)
	return rep, nil
}

// listingChanges compares the cached listings with the walk's.
func listingChanges(old map[string]store.Listing, now discover.Cache) (map[string]store.Listing, []string) {
	put := map[string]store.Listing{}
	for p, l := range now {
		if o, ok := old[p]; !ok || o.MTime != l.MTime || o.Entries != l.Entries {
			put[p] = store.Listing{MTime: l.MTime, Entries: l.Entries}
		}
	}
	var gone []string
	for p := range old {
		if _, ok := now[p]; !ok {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	return put, gone
}

// parseAll parses and hashes changed candidates on a worker pool, keeping
// their order.
func (r *Registry) parseAll(ctx context.Context, root string, cs []discover.Candidate, progress Progress) ([]store.Version, error) {
	out := make([]store.Version, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next, done := 0, 0
	for w := 0; w < r.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= len(cs) || firstErr != nil {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				v, err := parseCandidate(ctx, root, cs[i])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				out[i] = v
				done++
				if done%256 == 0 || done == len(cs) {
					progress("parse", done, len(cs))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out, firstErr
}

// parseCandidate validates one skill leniently and hashes its tree. A bad
// skill is not an error: it is recorded as rejected with its reasons. The
// skill directory is opened as an [os.Root], so no read can leave it even if
// the tree changes under the scan.
func parseCandidate(ctx context.Context, root string, c discover.Candidate) (store.Version, error) {
	v := store.Version{Root: root, Dir: c.Dir, Rel: c.Rel, File: c.Dir + string(os.PathSeparator) + c.FileName, Fingerprint: c.Fingerprint, Category: c.Category}
	if err := ctx.Err(); err != nil {
		return v, err
	}
	opts := skill.Options{Mode: skill.Lenient, Category: c.Category}
	s, err := loadCandidate(ctx, c, opts)
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

// readListed reads the skill file, whose size the walk listed: exactly that
// many bytes in one read, bounded by skill.MaxFileBytes (a larger file is
// read up to the bound, so Parse reports it as too large).
func readListed(f io.Reader, c discover.Candidate) ([]byte, error) {
	size := int64(-1)
	for _, fl := range c.Files {
		if fl.Path == c.FileName {
			size = fl.Size
		}
	}
	if size < 0 || size > skill.MaxFileBytes {
		return io.ReadAll(io.LimitReader(f, skill.MaxFileBytes+1))
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("file changed while being read: %w; scan again", err)
	}
	return b, nil
}

// loadCandidate reads, parses and hashes one candidate.
func loadCandidate(ctx context.Context, c discover.Candidate, opts skill.Options) (*skill.Skill, error) {
	if c.Problem != "" {
		return nil, errors.New(c.Problem)
	}
	tree, err := discover.OpenTree(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", c.Dir, err)
	}
	defer tree.Close()
	f, err := tree.Open(c.FileName)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", c.FileName, err)
	}
	content, err := readListed(f, c)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", c.FileName, err)
	}
	s := skill.Parse(content, filepath.Base(c.Dir), opts)
	s.Dir, s.File = c.Dir, filepath.Join(c.Dir, c.FileName)
	if !s.Valid() {
		return s, nil
	}
	d, err := skill.DigestWith(ctx, tree, c.Files, c.FileName, content)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.Diagnostics = append(s.Diagnostics, skill.Diagnostic{Severity: skill.SeverityError, Message: "cannot hash the skill tree: " + err.Error()})
	}
	s.Digest = d
	return s, nil
}

func fillVersion(v *store.Version, s *skill.Skill, c discover.Candidate) {
	v.Name, v.Description, v.Version, v.Tier, v.Category = s.Name, s.Description, s.Version, s.Tier, s.Category
	for _, t := range s.InvokableBy {
		v.InvokableBy = append(v.InvokableBy, string(t))
	}
	v.Valid = s.Valid()
	v.Digest = s.Digest
	v.Key = s.ID()
	if s.Name == "" || !v.Valid {
		// A rejected skill keeps a key that cannot collide with a valid one.
		v.Key = "!" + c.Rel
	}
	if s.Frontmatter != nil {
		v.Frontmatter, _ = json.Marshal(s.Frontmatter)
	}
	diags := s.Diagnostics
	if diags == nil {
		diags = []skill.Diagnostic{}
	}
	v.Diagnostics, _ = json.Marshal(diags)
	files := make([]fileJSON, len(c.Files))
	for i, f := range c.Files {
		files[i] = fileJSON{Path: f.Path, Size: f.Size}
	}
	v.Files, _ = json.Marshal(files)
}

type fileJSON struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// scopeRank orders scope names for precedence.
func scopeRank(s string) int {
	sc, err := discover.ParseScope(s)
	if err != nil {
		return -1
	}
	return int(sc)
}

// resolve applies precedence to current versions: among valid versions
// with the same key, the highest scope wins, then the earlier root, then
// the first directory. It returns the winners (and every rejected version,
// which never shadows anything) and the shadowing it decided.
func resolve(all []store.Version) ([]store.Version, []Shadow) {
	byKey := map[string][]store.Version{}
	var keys []string
	for _, v := range all {
		if _, ok := byKey[v.Key]; !ok {
			keys = append(keys, v.Key)
		}
		byKey[v.Key] = append(byKey[v.Key], v)
	}
	sort.Strings(keys)
	winners := make([]store.Version, 0, len(keys))
	shadows := []Shadow{}
	for _, k := range keys {
		vs := byKey[k]
		if strings.HasPrefix(k, "!") {
			winners = append(winners, vs...)
			continue
		}
		// Versions arrive ordered by root position, then directory.
		sort.SliceStable(vs, func(i, j int) bool { return scopeRank(vs[i].Scope) > scopeRank(vs[j].Scope) })
		winners = append(winners, vs[0])
		for _, l := range vs[1:] {
			shadows = append(shadows, Shadow{Key: k, Winner: vs[0].Dir, WinScope: vs[0].Scope, Loser: l.Dir, Scope: l.Scope})
		}
	}
	return winners, shadows
}

// Roots returns the configured roots as last scanned.
func (r *Registry) Roots(ctx context.Context) ([]store.Root, error) { return r.store.Roots(ctx) }

// SetEnabled enables or disables a skill by name or key.
func (r *Registry) SetEnabled(ctx context.Context, name string, enabled bool) error {
	v, err := r.Get(ctx, name)
	if err != nil {
		return err
	}
	return r.store.SetEnabled(ctx, v.Key, enabled)
}

func errorf(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)
}
