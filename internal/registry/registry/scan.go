package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/store"
)

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
	verified := true // every root present was verified (discover.Result.Verified)
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
		res, err := discover.Scan(ctx, root, r.limits(root), r.cache)
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
			rr.Warnings = append(rr.Warnings, d.Warning(r.limits(root).MaxDepth))
		}
		rep.Roots = append(rep.Roots, rr)
		if res.Missing || seen[res.Root.Path] {
			continue
		}
		verified = verified && res.Verified
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
	recorded, err := r.store.Roots(ctx)
	if err != nil {
		return nil, err
	}
	forgotten, err := r.forgotten(ctx, recorded, seen, changes)
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
	summary := func() {
		if all, ok = applied(scans, kept); ok {
			summarize(rep, all)
		}
	}
	var parseD, indexD time.Duration
	if verified && rep.Parsed == 0 && len(forgotten) == 0 && sameRoots(recorded, scans) {
		// Every root is as its last walk left it and the store holds
		// what that walk found: a write would change nothing but the
		// roots' last_scan, and cost a write transaction and its sync.
		summary()
	} else if parseD, indexD, err = r.record(ctx, scans, changes, checks, progress, summary); err != nil {
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

// WriteText writes the report for a human, as 'skillgate scan' prints it:
// the counts, one line per root with its notes and warnings, then the
// roots forgotten, the shadowed skills and the rejections with their
// reasons.
func (rep *ScanReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s (%d valid, %d rejected) in %.1f ms: %d parsed, %d unchanged, %d removed\n",
		plural.Of(rep.Skills, "skill", "skills"), rep.Valid, rep.Rejected, rep.DurationMS, rep.Parsed, rep.Unchanged, rep.Removed)
	for _, r := range rep.Roots {
		switch {
		case r.Missing:
			fmt.Fprintf(w, "root %s (%s%s): not present\n", r.Path, r.Scope, trustNote(r.Trust))
		default:
			trunc := ""
			if r.Truncated {
				trunc = ", truncated"
			}
			fmt.Fprintf(w, "root %s (%s%s): %s, %s%s\n", r.Path, r.Scope, trustNote(r.Trust), plural.Of(r.Skills, "skill", "skills"), plural.Of(r.Dirs, "directory", "directories"), trunc)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		for _, wn := range r.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", wn)
		}
	}
	for _, f := range rep.Forgotten {
		why := "which this scan did not include; scan it again (--root " + f.Path + ", or the roots of the configuration) to bring them back"
		for _, r := range rep.Roots {
			if r.Path == f.Path && r.Missing {
				why = "which no longer exists"
			}
		}
		fmt.Fprintf(w, "removed: %s of root %s (%s), %s\n", plural.Of(f.Skills, "skill", "skills"), f.Path, f.Scope, why)
	}
	for _, s := range rep.Shadowed {
		fmt.Fprintf(w, "shadowed: %s at %s (%s) is hidden by %s (%s)\n", s.Key, s.Loser, s.Scope, s.Winner, s.WinScope)
	}
	for _, r := range rep.Rejections {
		fmt.Fprintf(w, "rejected: %s\n", r.Dir)
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  - %s\n", e)
		}
	}
}

// trustNote is ", first_party" for a first_party root: the default,
// imported, is not repeated on every line.
func trustNote(trust string) string {
	if trust == "" || trust == string(capability.TrustImported) {
		return ""
	}
	return ", " + trust
}

// limits returns the bounds of root's walk: its own when it has them,
// else the registry's.
func (r *Registry) limits(root discover.Root) discover.Limits {
	if root.Limits != (discover.Limits{}) {
		return root.Limits
	}
	return r.opts.Limits
}

// RecordedLimits returns the limits of the last walk of root (absolute)
// that the registry's scan cache keeps; ok is false when it keeps none
// (see [discover.RecordedLimits]).
func (r *Registry) RecordedLimits(ctx context.Context, root string) (discover.Limits, bool, error) {
	return discover.RecordedLimits(ctx, root, r.cache)
}

// Limits returns the bounds of the registry's walks of roots that bring
// none of their own.
func (r *Registry) Limits() discover.Limits { return r.opts.Limits }
