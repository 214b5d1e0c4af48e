// Package discover finds skills under configured roots: a bounded,
// deterministic walk that never leaves a root, records each skill's files and
// a cheap stat fingerprint (so unchanged skills need no parse on a rescan),
// and resolves precedence between scopes. A [Scan] also keeps what it read
// in a [Cache], so that the next one can tell with a stat per directory
// and file that nothing changed.
//
// Symbolic links are never followed, neither for directories nor for files:
// a link could lead out of the root or into a loop, and a skill's digest
// must describe files that are really under its directory. Each link met is
// reported with the fix (add the link's target as a root of its own).
package discover

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// Scope orders roots for precedence: a skill in a higher scope shadows a
// skill with the same identity in a lower one.
type Scope int

// Scopes, lowest precedence first.
const (
	ScopeBuiltin Scope = iota
	ScopeUser
	ScopeProject
	// ScopeTenant is the scope of a tenant's own skill library (package
	// library): its skills are seen by that tenant's principals only, and
	// for them win over every other scope. It is never configured on a
	// root by hand ([ParseScope] refuses it); [TenantOf] names the tenant.
	ScopeTenant
)

// String returns the scope's name as the CLI spells it.
func (s Scope) String() string {
	switch s {
	case ScopeBuiltin:
		return "builtin"
	case ScopeUser:
		return "user"
	case ScopeProject:
		return "project"
	case ScopeTenant:
		return "tenant"
	}
	return "scope(" + strconv.Itoa(int(s)) + ")"
}

// ParseScope parses "builtin", "user" or "project".
func ParseScope(s string) (Scope, error) {
	switch strings.ToLower(s) {
	case "builtin", "built-in":
		return ScopeBuiltin, nil
	case "user":
		return ScopeUser, nil
	case "project":
		return ScopeProject, nil
	}
	return 0, fmt.Errorf("unknown scope %q: use builtin, user or project", s)
}

// Root is a directory to scan and the scope its skills get.
type Root struct {
	Path  string `json:"path"`
	Scope Scope  `json:"-"`
	// Trust is who vouches for the code of the skills under the root
	// (configured; "" is imported). Scanning never reads it: the registry
	// records it with the root.
	Trust capability.Trust `json:"-"`
	// Limits bound the walk of this root; the zero value means the
	// scanner's own. A rescan sets it to keep the bounds an operator
	// widened for the root (see [RecordedLimits]).
	Limits Limits `json:"-"`
}

// ParseRoot parses the CLI form "DIR" or "DIR=scope"; the default scope is
// project.
func ParseRoot(s string) (Root, error) {
	r := Root{Path: s, Scope: ScopeProject}
	if i := strings.LastIndexByte(s, '='); i > 0 {
		sc, err := ParseScope(s[i+1:])
		if err != nil {
			return Root{}, fmt.Errorf("--root %s: %w", s, err)
		}
		r.Path, r.Scope = s[:i], sc
	}
	if r.Path == "" {
		return Root{}, fmt.Errorf("--root %q: empty directory", s)
	}
	return r, nil
}

// DefaultRoots are the conventional locations, lowest precedence first:
// the user's ~/.agents/skills, then the project's canonical .agents/skills
// and its Claude Code mirror .claude/skills. Missing ones are skipped.
func DefaultRoots(home, project string) []Root {
	var roots []Root
	if home != "" {
		roots = append(roots, Root{Path: filepath.Join(home, ".agents", "skills"), Scope: ScopeUser})
	}
	roots = append(roots,
		Root{Path: filepath.Join(project, ".agents", "skills"), Scope: ScopeProject},
		Root{Path: filepath.Join(project, ".claude", "skills"), Scope: ScopeProject},
	)
	return roots
}

// Limits bounds a walk.
type Limits struct {
	// MaxDepth is how deep below the root a skill may be found.
	MaxDepth int
	// MaxDirs is how many directories outside skill trees may be read per
	// root (skill directories themselves count).
	MaxDirs int
	// Tree bounds each skill's own files.
	Tree skill.TreeLimits
	// MaxTreeDirs bounds the subdirectories of one skill.
	MaxTreeDirs int
}

// Widest returns, bound by bound, the larger of a and b.
func Widest(a, b Limits) Limits {
	return Limits{
		MaxDepth:    max(a.MaxDepth, b.MaxDepth),
		MaxDirs:     max(a.MaxDirs, b.MaxDirs),
		Tree:        skill.TreeLimits{MaxFiles: max(a.Tree.MaxFiles, b.Tree.MaxFiles), MaxBytes: max(a.Tree.MaxBytes, b.Tree.MaxBytes)},
		MaxTreeDirs: max(a.MaxTreeDirs, b.MaxTreeDirs),
	}
}

// DefaultLimits are the client guide's bounds (depth 6, 2,000 directories
// per root), as Codex applies them.
var DefaultLimits = Limits{MaxDepth: 6, MaxDirs: 2000, Tree: skill.DefaultTreeLimits, MaxTreeDirs: 1000}

// Candidate is a directory holding a SKILL.md, before parsing.
type Candidate struct {
	// Dir is the skill directory (absolute); Rel is it relative to the root.
	Dir string
	Rel string
	// FileName is "SKILL.md" or "skill.md".
	FileName string
	// Category is the relative parent directory ("escrituras" for
	// escrituras/compraventa), used when the frontmatter sets none.
	Category string
	// Files are the skill's regular files, sorted, nested skills excluded.
	Files []skill.File
	// Fingerprint summarises paths, sizes, modification and status change
	// times: equal fingerprints mean the tree is unchanged without reading
	// it.
	Fingerprint string
	// Problem is set when the tree could not be listed completely; the
	// skill must then be rejected with it.
	Problem string
}

// Result is what a walk of one root found.
type Result struct {
	Root       Root
	Candidates []Candidate
	// Dirs is how many directories were read.
	Dirs int
	// Truncated says the walk stopped at a bound; Notes say which.
	Truncated bool
	// Notes are findings about the root: bounds hit, links skipped,
	// unreadable directories.
	Notes []string
	// Dropped are the skills found below the depth limit, which the walk
	// does not index (see [Dropped]).
	Dropped []Dropped
	// Missing is true when the root does not exist (not an error: default
	// roots are often absent).
	Missing bool
	// Verified says that [Scan] rebuilt the result from its cache, after a
	// stat of every directory and file the last walk read showed that a
	// walk would find the same. It is never set on platforms other than
	// Linux, where walks keep no state.
	Verified bool
	// CacheError is why Scan could not read or write its cache, if it
	// could not: the walk went on without it.
	CacheError error
}

// Dropped is a skill directory deeper below its root than the depth limit.
// A walk does not index it, but it looks for such skills below the limit
// (in directories it counts against MaxDirs) so that none is left out
// silently: each is a warning with the fix (see [Dropped.Warning]).
type Dropped struct {
	// Dir is the skill directory (absolute); Rel is it relative to the root.
	Dir string
	Rel string
	// Depth is how many directories below the root it is: the depth
	// limit that would find it.
	Depth int
}

// Warning says that d was not scanned under the depth limit, and how to
// scan it: raise the limit (the scan flag or the configuration key), or
// make its parent a root.
func (d Dropped) Warning(limit int) string {
	return fmt.Sprintf("%s%s not scanned: it is %d directories below the root, deeper than the depth limit %d; "+
		"raise the limit with --max-depth %d (configuration file: limits.max_depth), or add %s as a root",
		droppedPrefix, d.Dir, d.Depth, limit, d.Depth, filepath.Dir(d.Dir))
}

// droppedPrefix starts every [Dropped.Warning].
const droppedPrefix = "skill "

// DroppedDir returns the skill directory a [Dropped.Warning] is about, or
// false when warning is not one.
func DroppedDir(warning string) (string, bool) {
	rest, ok := strings.CutPrefix(warning, droppedPrefix)
	if !ok {
		return "", false
	}
	dir, _, ok := strings.Cut(rest, " not scanned: it is ")
	return dir, ok && filepath.IsAbs(dir)
}

// ErrNotDir means a root exists but is not a directory.
var ErrNotDir = errors.New("root is not a directory")

// walkWorkers read the directories of one level of the walk in parallel:
// the walk is bound by system calls, which overlap well even on two cores.
const walkWorkers = 4

// dirRead is one directory's entries, or why it could not be read.
type dirRead struct {
	entries []entry
	listing *listing // to keep, nil when the directory changed too recently
	stat    dirStat
	err     error
	// skill is the directory's skill file name, if it is a skill, and
	// kids the paths of its entries (see paths), made by the worker that
	// read it.
	skill string
	kids  []kid
}

// kid holds the paths of one directory entry: absolute, relative to the
// root and relative to its skill tree. Files need only the last.
type kid struct {
	abs, rel, treeRel string
}

// paths fills the skill file name and the entry paths of the directory q.
func (d *dirRead) paths(q queued) {
	d.skill = skillFile(d.entries)
	treeRel := q.treeRel
	if d.skill != "" && q.rel != "." {
		treeRel = "" // a nested skill starts a tree of its own
	}
	d.kids = make([]kid, len(d.entries))
	for i := range d.entries {
		e := &d.entries[i]
		if skill.Skip(e.name) || e.isSymlink() {
			continue
		}
		k := &d.kids[i]
		k.treeRel = e.name
		if treeRel != "" {
			k.treeRel = treeRel + "/" + e.name
		}
		if !e.isDir() {
			continue
		}
		k.abs = joinName(q.abs, e.name)
		k.rel = e.name
		if q.rel != "." {
			k.rel = q.rel + "/" + e.name
		}
	}
}

// joinName is filepath.Join(dir, name) for a clean absolute dir and a name
// that is one path element.
func joinName(dir, name string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// levelRead is one breadth-first level being read in parallel. Results
// keep the level's order, so the walk stays deterministic, and the walk
// takes each as soon as it and those before it are read.
type levelRead struct {
	ctx   context.Context
	out   []dirRead
	ready []chan struct{} // per batch of readBatch directories, closed when all are read
	left  []atomic.Int32  // per batch, directories still to read
	wg    sync.WaitGroup
}

// readBatch is how many directories the walk waits for at once.
const readBatch = 64

// readLevel starts reading the directories of one level.
func readLevel(ctx context.Context, dr dirReader, level []queued, cache map[string]listing, now int64) *levelRead {
	lr := &levelRead{ctx: ctx, out: make([]dirRead, len(level))}
	read := func(i int) {
		q := level[i]
		var cached *listing
		if l, ok := cache[q.rel]; ok {
			cached = &l
		}
		es, l, ds, err := dr.readDirCached(q.abs, needStat(q.owner >= 0, q.rel == "."), cached, now)
		lr.out[i] = dirRead{entries: es, listing: l, stat: ds, err: err}
		if err == nil {
			lr.out[i].paths(q)
		}
	}
	if len(level) < 8 {
		for i := range level {
			read(i)
		}
		return lr
	}
	nb := (len(level) + readBatch - 1) / readBatch
	lr.ready = make([]chan struct{}, nb)
	lr.left = make([]atomic.Int32, nb)
	for b := range lr.ready {
		lr.ready[b] = make(chan struct{})
		lr.left[b].Store(int32(min(readBatch, len(level)-b*readBatch)))
	}
	var next atomic.Int64
	for w := 0; w < walkWorkers; w++ {
		lr.wg.Add(1)
		go func() {
			defer lr.wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(level) || ctx.Err() != nil {
					return
				}
				read(i)
				if lr.left[i/readBatch].Add(-1) == 0 {
					close(lr.ready[i/readBatch])
				}
			}
		}()
	}
	return lr
}

// get waits until directory i of the level is read and returns it.
func (lr *levelRead) get(i int) (*dirRead, error) {
	if lr.ready != nil && i%readBatch == 0 {
		select {
		case <-lr.ready[i/readBatch]:
		case <-lr.ctx.Done():
			return nil, lr.ctx.Err()
		}
	}
	return &lr.out[i], lr.ctx.Err()
}

// wait waits for the level's readers to stop.
func (lr *levelRead) wait() { lr.wg.Wait() }

// maxTreeDepth bounds how deep a skill's own directories may nest.
const maxTreeDepth = 16

type queued struct {
	abs, rel string
	depth    int
	// beyond is true below the depth limit, where skills are looked for
	// only to be reported as dropped.
	beyond  bool
	owner   int // index of the skill this dir belongs to, or -1
	treeRel string
	treeDep int
	parent  int32 // the state record of the directory that queued it, or -1
}

// Walk scans one root. It reads each directory once, in a breadth-first,
// sorted order, so results are deterministic. [Scan] is Walk with a cache.
func Walk(ctx context.Context, root Root, lim Limits) (*Result, error) {
	res, _, err := walk(ctx, root, lim, nil)
	return res, err
}

// walk is Walk with the listings of the root's last walk (keyed by path
// relative to the root), and returns the record of this one (see
// record.go) with its result: nil when there is nothing to keep.
func walk(ctx context.Context, root Root, lim Limits, cache map[string]listing) (*Result, []byte, error) {
	res := &Result{Root: root}
	now := time.Now().UnixNano()
	abs, err := filepath.Abs(root.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("root %s: %w", root.Path, err)
	}
	res.Root.Path = abs
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Missing = true
		return res, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("root %s: %w", abs, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := filepath.EvalSymlinks(abs)
		return nil, nil, fmt.Errorf("root %s is a symbolic link (to %s); skillgate does not follow links: give the real directory as the root", abs, target)
	case !fi.IsDir():
		return nil, nil, fmt.Errorf("root %s: %w", abs, ErrNotDir)
	}
	dr := newDirReader(abs)
	defer dr.close()
	w := &walker{res: res, lim: lim, abs: abs, sb: newStateBuilder(now), enqueued: 1}
	level := []queued{{abs: abs, rel: ".", owner: -1, parent: -1}}
	for len(level) > 0 {
		lr := readLevel(ctx, dr, level, cache, now)
		queue, err := w.walkLevel(lr, level)
		lr.wait()
		if err != nil {
			return nil, nil, err
		}
		level = queue
	}
	finish(res.Candidates, lim.Tree)
	state := w.sb.encodeState(res, lim)
	if len(w.keep) == 0 && state == nil {
		return res, nil, nil
	}
	return res, encodeRecord(abs, w.keep, state), nil
}

// walker is one walk of a root: what it found so far, and the limits it
// has noted reaching.
type walker struct {
	res *Result
	lim Limits
	abs string // the root
	// keep are the listings to keep, in the order the walk read them.
	keep []dirListing
	sb   *stateBuilder
	// treeDirs counts the subdirectories of each candidate, by index.
	treeDirs []int32
	// enqueued counts the directories outside skill trees queued so far,
	// root included.
	enqueued                               int
	depthNoted, dirsNoted, beyondDirsNoted bool
}

// walkLevel takes the directories of one level as they are read, in
// order, and returns the next level.
func (w *walker) walkLevel(lr *levelRead, level []queued) ([]queued, error) {
	var queue []queued
	for li, q := range level {
		rd, err := lr.get(li)
		if err != nil {
			return nil, err
		}
		if l := rd.listing; l != nil {
			w.keep = append(w.keep, dirListing{rel: q.rel, listing: *l})
		}
		entries, err := rd.entries, rd.err
		w.res.Dirs++
		if err != nil {
			w.sb.fail()
			msg := fmt.Sprintf("cannot read directory %s: %v", q.abs, unwrap(err))
			if q.owner >= 0 {
				w.res.Candidates[q.owner].problem(msg)
			} else {
				w.res.Notes = append(w.res.Notes, msg)
			}
			continue
		}
		self := w.sb.dir(q.rel, q.parent, rd.stat, rd.listing != nil)
		owner, treeDep := q.owner, q.treeDep
		name := rd.skill
		if q.beyond && name != "" {
			// Not indexed, nor its tree read: reported.
			w.res.Dropped = append(w.res.Dropped, Dropped{Dir: q.abs, Rel: q.rel, Depth: q.depth})
			continue
		}
		if name != "" && q.rel == "." {
			w.res.Notes = append(w.res.Notes, fmt.Sprintf("root %s is itself a skill; skills are found in the subdirectories of a root, so give its parent directory as the root", w.abs))
		}
		if name != "" && q.rel != "." {
			// A skill nested in another starts a tree of its own: its
			// files are not its parent's.
			w.res.Candidates = append(w.res.Candidates, Candidate{
				Dir:      q.abs,
				Rel:      q.rel,
				FileName: name,
				Category: category(q.rel),
			})
			owner, treeDep = len(w.res.Candidates)-1, 0
			w.treeDirs = append(w.treeDirs, 0)
		}
		for ei := range entries {
			e := &entries[ei]
			name := e.name
			if skill.Skip(name) {
				continue
			}
			if e.isSymlink() {
				if q.beyond {
					continue
				}
				w.res.Notes = append(w.res.Notes, fmt.Sprintf("skipped symbolic link %s: links are not followed; add its target as a root of its own if it holds skills", filepath.Join(q.abs, name)))
				continue
			}
			kid := &rd.kids[ei]
			childAbs, rel, childTreeRel := kid.abs, kid.rel, kid.treeRel
			switch {
			case e.isDir() && owner >= 0:
				if treeDep+1 > maxTreeDepth || int(w.treeDirs[owner]) >= w.lim.MaxTreeDirs {
					w.res.Candidates[owner].problem(fmt.Sprintf("skill tree is deeper than %d levels or has more than %d directories; flatten it", maxTreeDepth, w.lim.MaxTreeDirs))
					continue
				}
				w.treeDirs[owner]++
				queue = append(queue, queued{abs: childAbs, rel: rel, depth: q.depth + 1, owner: owner, treeRel: childTreeRel, treeDep: treeDep + 1, parent: self})
			case e.isDir():
				beyond := q.beyond || q.depth+1 > w.lim.MaxDepth
				if beyond {
					if !w.depthNoted {
						w.res.Notes = append(w.res.Notes, fmt.Sprintf("depth limit %d reached at %s: deeper skills are not indexed (each one found is a warning); raise the limit with --max-depth (configuration file: limits.max_depth)", w.lim.MaxDepth, childAbs))
						w.depthNoted = true
					}
					w.res.Truncated = true
				}
				if w.enqueued >= w.lim.MaxDirs && beyond {
					if !w.beyondDirsNoted {
						w.res.Notes = append(w.res.Notes, fmt.Sprintf("directory limit %d reached below the depth limit in %s: deeper directories were searched for skills only in part; raise --max-dirs or --max-depth", w.lim.MaxDirs, w.abs))
						w.beyondDirsNoted = true
					}
					continue
				}
				if w.enqueued >= w.lim.MaxDirs {
					if !w.dirsNoted {
						w.res.Notes = append(w.res.Notes, fmt.Sprintf("directory limit %d reached in %s: the rest of the root was not scanned; raise --max-dirs or narrow the root", w.lim.MaxDirs, w.abs))
						w.dirsNoted = true
					}
					w.res.Truncated = true
					continue
				}
				w.enqueued++
				queue = append(queue, queued{abs: childAbs, rel: rel, depth: q.depth + 1, beyond: beyond, owner: -1, parent: self})
			case e.isRegular() && owner >= 0:
				if e.statErr != nil {
					w.sb.fail()
					w.res.Candidates[owner].problem(fmt.Sprintf("cannot stat %s: %v", joinName(q.abs, name), e.statErr))
					continue
				}
				w.sb.file(e)
				c := &w.res.Candidates[owner]
				f := skill.File{Path: childTreeRel, Size: e.size, ModTime: time.Unix(0, e.mtime)}
				if e.ctime != 0 {
					f.Changed = time.Unix(0, e.ctime)
				}
				c.Files = append(c.Files, f)
			}
		}
	}
	return queue, nil
}

// finish sorts each candidate's files, checks its tree limits and computes
// its fingerprint, on several goroutines when there are many.
func finish(cs []Candidate, lim skill.TreeLimits) {
	one := func(c *Candidate) {
		skill.SortFiles(c.Files)
		if c.Problem == "" {
			c.checkLimits(lim)
		}
		c.Fingerprint = fingerprint(c.FileName, c.Files)
	}
	if len(cs) < 256 {
		for i := range cs {
			one(&cs[i])
		}
		return
	}
	var wg sync.WaitGroup
	per := (len(cs) + walkWorkers - 1) / walkWorkers
	for start := 0; start < len(cs); start += per {
		part := cs[start:min(start+per, len(cs))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range part {
				one(&part[i])
			}
		}()
	}
	wg.Wait()
}

func (c *Candidate) problem(msg string) {
	if c.Problem == "" {
		c.Problem = msg
	}
}

func (c *Candidate) checkLimits(lim skill.TreeLimits) {
	var total int64
	for _, f := range c.Files {
		total += f.Size
	}
	switch {
	case len(c.Files) > lim.MaxFiles:
		c.Problem = fmt.Sprintf("skill tree has %d files, more than %d; remove generated files or split the skill", len(c.Files), lim.MaxFiles)
	case total > lim.MaxBytes:
		c.Problem = fmt.Sprintf("skill tree has %d bytes, more than %d; keep large assets out of the skill", total, lim.MaxBytes)
	}
}

// skillFile returns the skill file among entries, if any.
func skillFile(entries []entry) string {
	for _, want := range skill.FileNames {
		for _, e := range entries {
			if e.name == want && e.isRegular() {
				return want
			}
		}
	}
	return ""
}

// category derives a category from a skill's path relative to its root:
// its parent directories, or "" for a skill at the top of the root.
func category(rel string) string {
	dir := path.Dir(rel)
	if dir == "." {
		return ""
	}
	return dir
}

// fingerprint hashes what stat reveals about the tree. The status change
// time is in it so that an edit which keeps a file's size and sets its
// modification time back (touch -r, some sync tools) is still seen.
func fingerprint(fileName string, files []skill.File) string {
	h := sha256.New()
	h.Write([]byte(fileName))
	var buf []byte
	for _, f := range files {
		buf = buf[:0]
		buf = append(buf, 0)
		buf = append(buf, f.Path...)
		buf = append(buf, 0)
		buf = strconv.AppendInt(buf, f.Size, 10)
		buf = append(buf, 0)
		buf = strconv.AppendInt(buf, f.ModTime.UnixNano(), 10)
		if !f.Changed.IsZero() {
			buf = append(buf, 0)
			buf = strconv.AppendInt(buf, f.Changed.UnixNano(), 10)
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// SortCandidates orders candidates by relative path.
func SortCandidates(cs []Candidate) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].Rel < cs[j].Rel })
}
