// Package registry is the skill registry service: it scans configured
// roots into the store incrementally, resolves precedence between scopes,
// and answers the queries the CLI, the catalog and agents need.
package registry

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/jsonscan"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/store"
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
	// Signatures checks the signatures of the skills of first_party
	// roots: a skill there without a valid one is rejected, with the
	// reason. Nil trusts no key, so every such skill is rejected.
	Signatures SignatureChecker
}

// SignatureChecker verifies the signatures of the skills of first_party
// roots (package signature implements it; the registry knows no keys and
// no signature formats).
type SignatureChecker interface {
	// Root prepares the checks of the skills under the first_party root
	// (an absolute path) for one scan: what the root holds for all of its
	// skills (a signed index) is read and verified here, once.
	Root(ctx context.Context, root string) RootSignatures
}

// SignatureCheckerFunc is a function as a [SignatureChecker].
type SignatureCheckerFunc func(ctx context.Context, root string) RootSignatures

// Root calls f.
func (f SignatureCheckerFunc) Root(ctx context.Context, root string) RootSignatures {
	return f(ctx, root)
}

// RootSignatures checks the signatures of the skills of one root during
// one scan. It must be safe for concurrent use.
type RootSignatures interface {
	// Evidence reads what the check of the skill in dir (rel: its path
	// under the root, slash-separated, "." for the root itself) rests on
	// besides its files. fingerprint and data change whenever the check's
	// outcome may change although the skill's files did not (its
	// signature file, the root's index, the trusted keys or their validity
	// windows): the scan mixes both into the skill's fingerprint, so that
	// a rescan checks such a skill again. data is handed back to Check,
	// so that nothing is read twice.
	Evidence(ctx context.Context, rel, dir string) (fingerprint string, data []byte)
	// Check returns nil when the skill at rel, named name, with content
	// digest digest and files (with their own digests) is validly signed,
	// else why not. tree is the skill directory, read without following
	// links.
	Check(ctx context.Context, tree fs.FS, rel string, data []byte, name, digest string, files []skill.File) error
}

// unsignedRoots rejects every skill of a first_party root when no keys
// are trusted.
type unsignedRoots struct{}

// Root is the same for every root: nothing to read.
func (unsignedRoots) Root(context.Context, string) RootSignatures { return unsignedRoots{} }

// Evidence is constant: with no key trusted, every skill is rejected
// whatever its signature file holds, so nothing is read.
func (unsignedRoots) Evidence(context.Context, string, string) (string, []byte) {
	return "unchecked", nil
}
func (unsignedRoots) Check(context.Context, fs.FS, string, []byte, string, string, []skill.File) error {
	return errors.New("no signing keys are trusted for first_party skills; list them under signing.keys in config.yaml (see docs/supply-chain.md)")
}

// Registry is the registry service over a store. It is safe for concurrent
// use; scans are serialised.
type Registry struct {
	store store.Store
	// cache is the store, when it keeps the scan cache (discover.Cache).
	cache  discover.Cache
	opts   Options
	log    *slog.Logger
	scanMu sync.Mutex
	// snap is the latest catalog snapshot; snapMu serialises its builds.
	snap   atomic.Pointer[Snapshot]
	snapMu sync.Mutex
	// tenantSnaps are the snapshots of tenants with a library, at
	// generation tenantGen (see TenantSnapshot).
	tenantMu    sync.Mutex
	tenantGen   int64
	tenantSnaps map[string]*Snapshot
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
	cache, _ := st.(discover.Cache)
	return &Registry{store: st, cache: cache, opts: opts, log: log}
}

// Progress reports scan progress: phase is "walk" or "parse", done of
// total units.
type Progress func(phase string, done, total int)

// RootReport is what a scan found under one root.
type RootReport struct {
	Path      string   `json:"path"`
	Scope     string   `json:"scope"`
	Trust     string   `json:"trust"`
	Missing   bool     `json:"missing,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
	Dirs      int      `json:"dirs"`
	Skills    int      `json:"skills"`
	Notes     []string `json:"notes,omitempty"`
	// Warnings are the skills left out by the depth limit, each with how
	// to scan it (discover.Dropped.Warning).
	Warnings []string `json:"warnings,omitempty"`
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
	Skills    int `json:"skills"`
	Valid     int `json:"valid"`
	Rejected  int `json:"rejected"`
	Parsed    int `json:"parsed"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
	// Forgotten are the roots of earlier scans this scan left out, whose
	// skills (counted in Removed) left the registry.
	Forgotten  []ForgottenRoot `json:"forgotten"`
	Shadowed   []Shadow        `json:"shadowed"`
	Rejections []Rejection     `json:"rejections"`
	DurationMS float64         `json:"duration_ms"`
	// Phases splits DurationMS: walking the roots (with reading the
	// cached listings), reading, parsing and hashing changed skills, and
	// writing the index. The index is written while skills are parsed, so
	// IndexMS is only what remains once the last skill is parsed (mostly
	// the commit).
	Phases struct {
		WalkMS  float64 `json:"walk_ms"`
		ParseMS float64 `json:"parse_ms"`
		IndexMS float64 `json:"index_ms"`
	} `json:"phases"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Scan walks roots (in precedence order among equal scopes), parses what
// changed since the last scan, and records the result atomically. Roots not
// given (or no longer present) are forgotten with their skills: the
// registry mirrors the configuration. The report lists them in Forgotten
// and counts their skills in Removed.
func (r *Registry) Scan(ctx context.Context, roots []discover.Root, progress Progress) (*ScanReport, error) {
	r.scanMu.Lock()
	defer r.scanMu.Unlock()
	start := time.Now()
	if progress == nil {
		progress = func(string, int, int) {}
	}
	rep := &ScanReport{Shadowed: []Shadow{}, Rejections: []Rejection{}, Forgotten: []ForgottenRoot{}}
	var scans []store.RootScan
	var kept []map[string]store.Ref    // per scan, the refs it leaves untouched
	var changes [][]discover.Candidate // per scan, what to parse
	var checks []rootChecks            // per scan, its signature checks
	seen := map[string]bool{}
	var walkD time.Duration
	for i, root := range roots {
		t0 := time.Now()
		abs, err := filepath.Abs(root.Path)
		if err != nil {
			return nil, err
		}
		// The current versions are read while the root is walked.
		refsc := make(chan refsResult, 1)
		go func() {
			refs, err := r.store.Refs(ctx, abs)
			refsc <- refsResult{refs, err}
		}()
		// A first_party root's signed index is read and verified while
		// the root is walked.
		var sigsc chan RootSignatures
		if rootTrust(root) == capability.TrustFirstParty {
			sigsc = make(chan RootSignatures, 1)
			go func() { sigsc <- r.signatures().Root(ctx, abs) }()
		}
		res, err := discover.Scan(ctx, root, r.opts.Limits, r.cache)
		var sigs RootSignatures
		if sigsc != nil {
			sigs = <-sigsc
		}
		walkD += time.Since(t0)
		rf := <-refsc
		if err != nil {
			return nil, err
		}
		if res.CacheError != nil {
			r.log.WarnContext(ctx, "scan cache unusable", "root", abs, "err", res.CacheError)
		}
		progress("walk", i+1, len(roots))
		rr := RootReport{Path: res.Root.Path, Scope: root.Scope.String(), Trust: string(rootTrust(root)), Missing: res.Missing, Truncated: res.Truncated, Dirs: res.Dirs, Skills: len(res.Candidates), Notes: res.Notes}
		for _, d := range res.Dropped {
			rr.Warnings = append(rr.Warnings, d.Warning(r.opts.Limits.MaxDepth))
		}
		rep.Roots = append(rep.Roots, rr)
		if res.Missing || seen[res.Root.Path] {
			continue
		}
		seen[res.Root.Path] = true
		refs, err := rf.refs, rf.err
		if err != nil {
			return nil, err
		}
		var evidence [][]byte
		if sigs != nil {
			evidence = signatureFingerprints(ctx, sigs, res.Candidates, r.opts.Workers)
		}
		// The root's record keeps the warnings with its notes, for show.
		sc := store.RootScan{Root: res.Root.Path, Scope: root.Scope.String(), Trust: rr.Trust, Position: i, Notes: append(slices.Clip(res.Notes), rr.Warnings...)}
		// With nothing recorded under the root (a first scan) every
		// candidate is parsed, without a copy of them all.
		changed := res.Candidates
		known := 0 // candidates with a ref; directories are distinct
		if len(refs) > 0 {
			changed = nil
			var ev [][]byte
			for i, c := range res.Candidates {
				ref, ok := refs[c.Dir]
				if ok {
					known++
				}
				if ok && ref.Fingerprint == c.Fingerprint {
					rep.Unchanged++
					continue
				}
				changed = append(changed, c)
				if evidence != nil {
					ev = append(ev, evidence[i])
				}
			}
			if evidence != nil {
				evidence = ev
			}
		}
		if known < len(refs) {
			found := make(map[string]bool, len(res.Candidates))
			for _, c := range res.Candidates {
				found[c.Dir] = true
			}
			for dir := range refs {
				if !found[dir] {
					sc.Gone = append(sc.Gone, dir)
				}
			}
		}
		sort.Strings(sc.Gone)
		rep.Removed += len(sc.Gone)
		rep.Parsed += len(changed)
		scans = append(scans, sc)
		changes = append(changes, changed)
		checks = append(checks, rootChecks{sigs: sigs, evidence: evidence})
		kept = append(kept, refs)
	}
	forgotten, err := r.forgotten(ctx, seen, changes)
	if err != nil {
		return nil, err
	}
	rep.Forgotten = forgotten
	for _, f := range rep.Forgotten {
		rep.Removed += f.Skills
	}
	// The report is computed while the scan is committed, when it can be
	// computed without the store.
	var all []current
	var ok bool
	parseD, indexD, err := r.record(ctx, scans, changes, checks, progress, func() {
		if all, ok = applied(scans, kept); ok {
			summarize(rep, all)
		}
	})
	if err != nil {
		return nil, err
	}
	rep.Phases.WalkMS, rep.Phases.ParseMS, rep.Phases.IndexMS = ms(walkD), ms(parseD), ms(indexD)
	if !ok {
		vs, err := r.store.Versions(ctx, store.Filter{Summary: true})
		if err != nil {
			return nil, err
		}
		summarize(rep, currentOf(vs))
	}
	rep.DurationMS = ms(time.Since(start))
	r.log.InfoContext(ctx, "scan", "roots", len(roots), "skills", rep.Skills, "parsed", rep.Parsed,
		"unchanged", rep.Unchanged, "removed", rep.Removed, "rejected", rep.Rejected, "duration_ms", rep.DurationMS)
	return rep, nil
}

// rootChecks are the signature checks of the changed skills of one root:
// none (sigs nil) for a root that is not first_party; evidence, parallel
// to the changed candidates, is what sigs.Evidence read of each.
type rootChecks struct {
	sigs     RootSignatures
	evidence [][]byte
}

// rootTrust is root's trust: a root configured without one is imported.
func rootTrust(root discover.Root) capability.Trust {
	if root.Trust == "" {
		return capability.TrustImported
	}
	return root.Trust
}

// refsResult is what Store.Refs returned.
type refsResult struct {
	refs map[string]store.Ref
	err  error
}

// current is what a scan report needs of a current version.
type current struct {
	key, name, scope, dir string
	tenant                string // the tenant whose library holds it, or ""
	pos                   int    // the position of its root
	valid                 bool
	diags                 json.RawMessage // of a rejected version
}

// currentOf returns what a scan report needs of versions in the store's
// order (Versions): their positions keep that order.
func currentOf(vs []store.Version) []current {
	out := make([]current, len(vs))
	for i := range vs {
		v := &vs[i]
		out[i] = current{key: v.Key, name: v.Name, scope: v.Scope, dir: v.Dir, tenant: discover.TenantOf(v.Scope, v.Root), pos: i, valid: v.Valid, diags: v.Diagnostics}
	}
	return out
}

// summarize fills the counts, rejections and shadowing of rep from the
// current versions, in any order.
func summarize(rep *ScanReport, all []current) {
	rep.Skills = len(all)
	for i := range all {
		v := &all[i]
		if v.valid {
			rep.Valid++
			continue
		}
		rep.Rejected++
		rej := Rejection{Dir: v.dir, Name: v.name}
		var diags []skill.Diagnostic
		_ = json.Unmarshal(v.diags, &diags)
		for _, d := range diags {
			if d.Severity == skill.SeverityError {
				rej.Errors = append(rej.Errors, d.Message)
			}
		}
		rep.Rejections = append(rep.Rejections, rej)
	}
	sort.Slice(rep.Rejections, func(i, j int) bool { return rep.Rejections[i].Dir < rep.Rejections[j].Dir })
	rep.Shadowed = shadowsOf(all)
}

// shadowsOf returns the shadowing among versions in any order, as
// resolveIndex decides it over the same versions in the store's order
// (key, root position, directory).
func shadowsOf(all []current) []Shadow {
	// Most keys have one version: only those with more are sorted.
	first := make(map[string]int32, len(all))
	var dups map[string][]int32
	for i := range all {
		k := groupKey(all[i].key, all[i].tenant)
		if strings.HasPrefix(k, "!") {
			continue // a rejected version shadows nothing
		}
		j, ok := first[k]
		if !ok {
			first[k] = int32(i)
			continue
		}
		if dups == nil {
			dups = map[string][]int32{}
		}
		if dups[k] == nil {
			dups[k] = []int32{j}
		}
		dups[k] = append(dups[k], int32(i))
	}
	keys := make([]string, 0, len(dups))
	for k := range dups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	group := make([]current, 0, 4)
	shadows := []Shadow{}
	for _, k := range keys {
		group = group[:0]
		for _, i := range dups[k] {
			group = append(group, all[i])
		}
		slices.SortFunc(group, func(a, b current) int {
			if c := cmp.Compare(a.pos, b.pos); c != 0 {
				return c
			}
			return strings.Compare(a.dir, b.dir)
		})
		_, sh := resolveBy(group, func(v *current) (string, string, string) { return groupKey(v.key, v.tenant), v.scope, v.dir })
		shadows = append(shadows, sh...)
	}
	return shadows
}

// applied returns the current versions the store holds after ApplyScans,
// in no order, with what Filter.Summary gives of them, computed from what
// the scan already knows instead of read back: per root, the refs read
// before the scan without the gone directories, and the upserts. ok is
// false when a directory appears under two roots (nested roots), where the
// store's answer depends on the order of its writes; the caller then asks
// the store.
func applied(scans []store.RootScan, refs []map[string]store.Ref) (all []current, ok bool) {
	// Within one root, directories are distinct by construction: refs are
	// keyed by directory, upserts were found once, gone ones are refs.
	var seen map[string]bool
	if len(scans) > 1 {
		seen = map[string]bool{}
	}
	claim := func(dir string) bool {
		if seen == nil {
			return true
		}
		if seen[dir] {
			return false
		}
		seen[dir] = true
		return true
	}
	n := 0
	for i := range scans {
		n += len(refs[i]) + len(scans[i].Upserts)
	}
	all = make([]current, 0, n)
	for i, sc := range scans {
		var gone map[string]bool
		if len(sc.Gone)+len(sc.Upserts) > 0 {
			gone = make(map[string]bool, len(sc.Gone)+len(sc.Upserts))
		}
		for _, dir := range sc.Gone {
			if !claim(dir) {
				return nil, false
			}
			gone[dir] = true
		}
		for j := range sc.Upserts {
			v := &sc.Upserts[j]
			if !claim(v.Dir) {
				return nil, false
			}
			gone[v.Dir] = true
			all = append(all, current{key: v.Key, name: v.Name, scope: sc.Scope, dir: v.Dir, tenant: discover.TenantOf(sc.Scope, sc.Root), pos: sc.Position,
				valid: v.Valid, diags: summaryDiagnostics(v.Valid, v.Diagnostics)})
		}
		for dir, ref := range refs[i] {
			if gone[dir] {
				continue
			}
			if !claim(dir) {
				return nil, false
			}
			all = append(all, current{key: ref.Key, name: ref.Name, scope: sc.Scope, dir: dir, tenant: discover.TenantOf(sc.Scope, sc.Root), pos: sc.Position,
				valid: ref.Valid, diags: summaryDiagnostics(ref.Valid, ref.Diagnostics)})
		}
	}
	return all, true
}

// noDiagnostics is the summary diagnostics of a valid version; it is
// shared, and never modified.
var noDiagnostics = json.RawMessage("[]")

// summaryDiagnostics is what Filter.Summary returns as diagnostics: those
// of a rejected version, "[]" for a valid one.
func summaryDiagnostics(valid bool, diags json.RawMessage) json.RawMessage {
	if valid || len(diags) == 0 {
		return noDiagnostics
	}
	return diags
}

// record parses the changed candidates of each scan into its Upserts and
// records the scans in the store. When the store can take a scan as a
// stream (store.ScanStreamer), batches of parsed skills are written while
// the next are parsed, so the single-threaded index writes overlap the
// parse; otherwise everything is parsed, then applied. meanwhile, if not
// nil, runs while the scan is committed, with every Upserts filled; it
// must not use the store. parseD is the time until the last skill was
// parsed, indexD the rest.
func (r *Registry) record(ctx context.Context, scans []store.RootScan, changes [][]discover.Candidate, checks []rootChecks, progress Progress, meanwhile func()) (parseD, indexD time.Duration, err error) {
	t0 := time.Now()
	streamer, ok := r.store.(store.ScanStreamer)
	if !ok {
		for i := range scans {
			if scans[i].Upserts, _, err = r.parseAll(ctx, scans[i].Root, changes[i], checks[i], progress, nil); err != nil {
				return 0, 0, err
			}
		}
		t1 := time.Now()
		if err := alongside(meanwhile, func() error { return r.store.ApplyScans(ctx, scans) }); err != nil {
			return 0, 0, err
		}
		return t1.Sub(t0), time.Since(t1), nil
	}
	roots := make([]string, len(scans))
	for i, sc := range scans {
		roots[i] = sc.Root
	}
	w, err := streamer.BeginScan(ctx, roots)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if err != nil {
			w.Rollback()
		}
	}()
	for i := range scans {
		if err := w.Root(ctx, scans[i]); err != nil {
			return 0, 0, err
		}
		t := time.Now()
		var parsed time.Time
		scans[i].Upserts, parsed, err = r.parseAll(ctx, scans[i].Root, changes[i], checks[i], progress, func(vs []store.Version) error {
			if err := w.Upsert(ctx, vs); err != nil {
				return err
			}
			// Until the commit, the scan needs only what a Ref holds of
			// each version: holding every frontmatter, file list and
			// description instead doubled the live heap of a scan of
			// 100,000 skills (about 150 MB more).
			for j := range vs {
				vs[j] = slim(&vs[j])
			}
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
		parseD += parsed.Sub(t)
	}
	if err := alongside(meanwhile, w.Commit); err != nil {
		return 0, 0, err
	}
	return parseD, time.Since(t0) - parseD, nil
}

// slim returns what the rest of a scan reads of a written version (see
// store.ScanWriter.Upsert and applied). Key and Name are copied: they may
// share the memory of the whole parsed frontmatter.
func slim(v *store.Version) store.Version {
	s := store.Version{Key: strings.Clone(v.Key), Name: strings.Clone(v.Name), Dir: v.Dir, Fingerprint: v.Fingerprint, Valid: v.Valid}
	if !v.Valid {
		s.Diagnostics = v.Diagnostics
	}
	return s
}

// alongside runs meanwhile (when not nil) on another goroutine while f runs,
// and returns f's error once both are done.
func alongside(meanwhile func(), f func() error) error {
	if meanwhile == nil {
		return f()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		meanwhile()
	}()
	err := f()
	<-done
	return err
}

// streamBatch is how many parsed skills record hands to the store at once.
const streamBatch = 64

// streamAhead is how many batches the parse may run ahead of the store.
const streamAhead = 8

// parseAll parses and hashes changed candidates on a worker pool, keeping
// their order. Each candidate of cs is cleared once parsed (what the rest
// of a scan needs of it is in its version): the file lists of 100,000
// candidates would otherwise stay live through the parse. When write is not nil it is given the results in order, in
// batches of streamBatch, from the calling goroutine while the workers
// parse on; parseAll returns once every batch was written. A write error
// stops the parse. parsed is when the last candidate was parsed.
func (r *Registry) parseAll(ctx context.Context, root string, cs []discover.Candidate, checks rootChecks, progress Progress, write func([]store.Version) error) (out []store.Version, parsed time.Time, err error) {
	out = make([]store.Version, len(cs))
	if len(cs) == 0 {
		return out, time.Now(), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// ready[b] is closed when batch b is parsed; left[b] counts down to it.
	nb := (len(cs) + streamBatch - 1) / streamBatch
	ready := make([]chan struct{}, nb)
	left := make([]atomic.Int32, nb)
	for b := range ready {
		ready[b] = make(chan struct{})
		left[b].Store(int32(min(streamBatch, len(cs)-b*streamBatch)))
	}
	trees := discover.OpenTrees(root)
	defer trees.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var next atomic.Int64
	var done int
	// When the results are written as they come, the workers parse at most
	// streamAhead batches ahead of the writer: the single-threaded index
	// writes are the slower side, and parsed skills waiting for them were
	// most of a large scan's live heap. Candidates are taken in order, so
	// the batch the writer waits for always gets its tokens.
	var ahead chan struct{}
	if write != nil {
		ahead = make(chan struct{}, streamAhead*streamBatch)
	}
	for w := 0; w < r.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if ahead != nil {
					select {
					case ahead <- struct{}{}:
					case <-ctx.Done():
						return
					}
				}
				i := int(next.Add(1)) - 1
				if i >= len(cs) || ctx.Err() != nil {
					return
				}
				var sig *candidateCheck
				if checks.sigs != nil {
					sig = &candidateCheck{sigs: checks.sigs, data: checks.evidence[i]}
					checks.evidence[i] = nil
				}
				v, err := parseCandidate(ctx, trees, root, cs[i], sig)
				out[i] = v
				cs[i] = discover.Candidate{}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				done++
				if done == len(cs) {
					parsed = time.Now()
				}
				if done%256 == 0 || done == len(cs) {
					progress("parse", done, len(cs))
				}
				mu.Unlock()
				if left[i/streamBatch].Add(-1) == 0 {
					close(ready[i/streamBatch])
				}
			}
		}()
	}
	var werr error
	if write != nil {
		for b := 0; b < nb && werr == nil; b++ {
			select {
			case <-ready[b]:
				batch := out[b*streamBatch : min((b+1)*streamBatch, len(cs))]
				werr = write(batch)
				for range batch {
					<-ahead
				}
			case <-ctx.Done():
				werr = ctx.Err()
			}
		}
		if werr != nil {
			cancel()
		}
	}
	wg.Wait()
	if werr != nil {
		// Workers stopped by the cancel report it; the write error is why.
		return out, parsed, werr
	}
	return out, parsed, firstErr
}

// parseCandidate validates one skill leniently and hashes its tree. A bad
// skill is not an error: it is recorded as rejected with its reasons. The
// skill directory is opened as an [os.Root], so no read can leave it even if
// the tree changes under the scan.
func parseCandidate(ctx context.Context, trees *discover.Trees, root string, c discover.Candidate, check *candidateCheck) (store.Version, error) {
	v := store.Version{Root: root, Dir: c.Dir, Rel: c.Rel, File: c.Dir + string(os.PathSeparator) + c.FileName, Fingerprint: c.Fingerprint, Category: c.Category}
	if err := ctx.Err(); err != nil {
		return v, err
	}
	opts := skill.Options{Mode: skill.Lenient, Category: c.Category, SkipBody: true}
	s, err := loadCandidate(ctx, trees, c, filepath.Base(c.Dir), opts, check)
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

// signatures is the checker of first_party skills.
func (r *Registry) signatures() SignatureChecker {
	if r.opts.Signatures == nil {
		return unsignedRoots{}
	}
	return r.opts.Signatures
}

// candidateCheck is the signature check of one skill: its root's checks
// and what they read of it (RootSignatures.Evidence).
type candidateCheck struct {
	sigs RootSignatures
	data []byte
}

// signatureFingerprints mixes into the fingerprint of each skill of a
// first_party root what its signature check depends on besides its files
// (RootSignatures.Evidence): a skill signed, re-signed or unsigned, its
// root's index changed, or a key added, revoked or expired, is then a
// changed skill, checked again. It returns what Evidence read of each
// candidate, for its check. A skill the root's index lists costs no read;
// any other, a read of its signature file (about a kilobyte). Many
// candidates are shared among workers goroutines.
func signatureFingerprints(ctx context.Context, sigs RootSignatures, cs []discover.Candidate, workers int) [][]byte {
	data := make([][]byte, len(cs))
	one := func(i int) {
		c := &cs[i]
		fp, b := sigs.Evidence(ctx, c.Rel, c.Dir)
		h := sha256.New()
		h.Write([]byte(c.Fingerprint))
		h.Write([]byte{0})
		h.Write([]byte(fp))
		h.Write([]byte{0})
		h.Write(b)
		c.Fingerprint = hex.EncodeToString(h.Sum(nil)[:16])
		data[i] = b
	}
	if len(cs) < 256 || workers < 2 {
		for i := range cs {
			one(i)
		}
		return data
	}
	var wg sync.WaitGroup
	per := (len(cs) + workers - 1) / workers
	for start := 0; start < len(cs); start += per {
		end := min(start+per, len(cs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := start; i < end; i++ {
				one(i)
			}
		}()
	}
	wg.Wait()
	return data
}

// readListed reads the skill file, whose size the walk listed (else stat
// says): exactly that many bytes in one read. A file over
// skill.MaxFileBytes is not read: the error, skill.FileTooLarge, names its
// size and the bound. buf, when large enough, holds the content.
func readListed(f fs.File, c discover.Candidate, buf []byte) ([]byte, error) {
	size := int64(-1)
	for _, fl := range c.Files {
		if fl.Path == c.FileName {
			size = fl.Size
		}
	}
	if size < 0 {
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		size = fi.Size()
	}
	if size > skill.MaxFileBytes {
		return nil, skill.FileTooLarge(c.FileName, size)
	}
	b := buf[:0]
	if int64(cap(b)) < size {
		b = make([]byte, size)
	}
	b = b[:size]
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("file changed while being read: %w; scan again", err)
	}
	return b, nil
}

// contentBufs hold SKILL.md files while they are parsed and hashed.
var contentBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// loadCandidate reads, parses and hashes one candidate.
// The name is checked against dirName (the directory's own name, but for
// managed storage).
func loadCandidate(ctx context.Context, trees *discover.Trees, c discover.Candidate, dirName string, opts skill.Options, check *candidateCheck) (*skill.Skill, error) {
	if c.Problem != "" {
		return nil, errors.New(c.Problem)
	}
	tree, err := trees.Open(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", c.Dir, err)
	}
	defer tree.Close()
	f, err := tree.Open(c.FileName)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", c.FileName, err)
	}
	// Nothing keeps content after this function (Parse copies what it
	// keeps), so its buffer is reused.
	bp := contentBufs.Get().(*[]byte)
	defer contentBufs.Put(bp)
	content, err := readListed(f, c, *bp)
	f.Close()
	if errors.Is(err, skill.ErrTooLarge) { // rejected, with the reason, as Parse rejects
		s := &skill.Skill{Dir: c.Dir, File: filepath.Join(c.Dir, c.FileName)}
		s.Diagnostics = []skill.Diagnostic{{Severity: skill.SeverityError, Message: err.Error()}}
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", c.FileName, err)
	}
	s := skill.Parse(content, dirName, opts)
	s.Dir, s.File = c.Dir, filepath.Join(c.Dir, c.FileName)
	if !s.Valid() {
		return s, nil
	}
	d, err := skill.DigestFiles(ctx, tree, c.Files, c.FileName, content)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.Diagnostics = append(s.Diagnostics, skill.Diagnostic{Severity: skill.SeverityError, Message: "cannot hash the skill tree: " + err.Error()})
	}
	s.Digest = d
	if check != nil && err == nil {
		if err := check.sigs.Check(ctx, tree, c.Rel, check.data, s.Name, d, c.Files); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.Diagnostics = append(s.Diagnostics, skill.Diagnostic{Severity: skill.SeverityError, Message: "signature: " + err.Error()})
		}
	}
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
		v.Frontmatter, _ = s.Frontmatter.MarshalJSON()
	}
	v.Diagnostics = json.RawMessage("[]")
	if len(s.Diagnostics) > 0 {
		v.Diagnostics, _ = json.Marshal(s.Diagnostics)
	}
	v.Files = filesJSON(c.Files)
}

// filesJSON writes files as the JSON list [{"path":…,"size":…,"digest":…},…],
// as encoding/json writes it (digest, each file's own SHA-256, only when
// recorded).
func filesJSON(files []skill.File) json.RawMessage {
	n := 2
	for _, f := range files {
		n += len(f.Path) + 32 + len(f.Digest) + 12
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, f := range files {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		if jsonscan.Plain(f.Path) {
			b = append(b, '"')
			b = append(b, f.Path...)
			b = append(b, '"')
		} else {
			p, _ := json.Marshal(f.Path)
			b = append(b, p...)
		}
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, f.Size, 10)
		if f.Digest != "" {
			b = append(b, `,"digest":"`...)
			b = append(b, f.Digest...) // "sha256:" and hex: plain
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// scopeRank orders scope names for precedence.
func scopeRank(s string) int { return discover.ScopeRank(s) }

// resolve applies precedence to current versions: among valid versions
// with the same key, the highest scope wins, then the earlier root, then
// the first directory. It returns the winners (and every rejected version,
// which never shadows anything) and the shadowing it decided.
func resolve(all []store.Version) ([]store.Version, []Shadow) {
	idx, shadows := resolveIndex(all)
	winners := make([]store.Version, len(idx))
	for i, w := range idx {
		winners[i] = all[w]
	}
	return winners, shadows
}

// resolveIndex is resolve with the winners as indexes into all.
// Each tenant library's versions compete among themselves only: another
// tenant never sees them, and whether they win over the shared skills is
// decided per tenant by its catalog snapshot ([Registry.TenantSnapshot]).
func resolveIndex(all []store.Version) ([]int, []Shadow) {
	return resolveBy(all, func(v *store.Version) (string, string, string) {
		return groupKey(v.Key, discover.TenantOf(v.Scope, v.Root)), v.Scope, v.Dir
	})
}

// groupKey is the key precedence is decided on: the identity, and for a
// tenant library's skill its tenant after a NUL byte (which no identity
// holds), so that two tenants' skills never shadow each other.
func groupKey(key, tenant string) string {
	if tenant == "" {
		return key
	}
	return key + "\x00" + tenant
}

// resolveBy is resolveIndex over versions of any type, whose key, scope
// and directory id returns.
func resolveBy[T any](all []T, id func(*T) (key, scope, dir string)) ([]int, []Shadow) {
	key := func(i int) string { k, _, _ := id(&all[i]); return k }
	// groups are the indexes of the versions of each key, in key order.
	var groups [][]int
	sorted := true
	for i := 1; i < len(all) && sorted; i++ {
		sorted = key(i-1) <= key(i)
	}
	if sorted {
		// As the store lists them: each key's versions are together.
		idx := make([]int, len(all))
		for i := range idx {
			idx[i] = i
		}
		for start := 0; start < len(all); {
			end := start + 1
			for end < len(all) && key(end) == key(start) {
				end++
			}
			groups = append(groups, idx[start:end:end])
			start = end
		}
	} else {
		byKey := make(map[string][]int, len(all))
		var keys []string
		for i := range all {
			k := key(i)
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], i)
		}
		sort.Strings(keys)
		for _, k := range keys {
			groups = append(groups, byKey[k])
		}
	}
	winners := make([]int, 0, len(groups))
	shadows := []Shadow{}
	for _, vs := range groups {
		k := key(vs[0])
		if strings.HasPrefix(k, "!") {
			winners = append(winners, vs...)
			continue
		}
		if len(vs) == 1 {
			winners = append(winners, vs[0])
			continue
		}
		// Versions arrive ordered by root position, then directory.
		sort.SliceStable(vs, func(i, j int) bool {
			_, a, _ := id(&all[vs[i]])
			_, b, _ := id(&all[vs[j]])
			return scopeRank(a) > scopeRank(b)
		})
		_, wScope, wDir := id(&all[vs[0]])
		shownKey, _, _ := strings.Cut(k, "\x00")
		winners = append(winners, vs[0])
		for _, l := range vs[1:] {
			_, lScope, lDir := id(&all[l])
			shadows = append(shadows, Shadow{Key: shownKey, Winner: wDir, WinScope: wScope, Loser: lDir, Scope: lScope})
		}
	}
	return winners, shadows
}

// Versions returns the store's versions matching f, with everything
// recorded of them (file lists included unless f says otherwise).
func (r *Registry) Versions(ctx context.Context, f store.Filter) ([]store.Version, error) {
	return r.store.Versions(ctx, f)
}

// Roots returns the configured roots as last scanned.
func (r *Registry) Roots(ctx context.Context) ([]store.Root, error) { return r.store.Roots(ctx) }

// NotScanned returns the warnings of the last scan about skills it left
// out for their depth whose directory is dir, or whose directory's name
// (what a skill's name must be) is dir: why show finds no such skill.
func (r *Registry) NotScanned(ctx context.Context, dir string) ([]string, error) {
	roots, err := r.store.Roots(ctx)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	var out []string
	for _, rt := range roots {
		for _, n := range rt.Notes {
			if d, ok := discover.DroppedDir(n); ok && (d == abs || filepath.Base(d) == dir) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

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
