package lineage

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// ErrLimit is returned when adding a reference would exceed the index's
// bounds (Limits.MaxReferences).
var ErrLimit = errors.New("lineage: index is full")

// ErrUnknown is returned for a reference name the index does not hold.
var ErrUnknown = errors.New("lineage: no such reference")

// Limits bound the index and every read. Zero values take the defaults.
type Limits struct {
	// MaxReferences bounds how many references the index holds (100,000).
	MaxReferences int
	// MaxFiles bounds the files kept per reference or read per candidate
	// (500); MaxFileBytes the bytes read of one file (1 MiB: a larger file
	// is digested but not fingerprinted); MaxBytes the bytes read per
	// skill (16 MiB).
	MaxFiles     int
	MaxFileBytes int64
	MaxBytes     int64
	// MaxFingerprints bounds the fingerprints kept per file (256), and
	// MaxSkillFingerprints those a skill is indexed and looked up by
	// (2,048, the smallest of its files' fingerprints: a bottom-k sample,
	// so a copy keeps the same ones).
	MaxFingerprints      int
	MaxSkillFingerprints int
	// MaxPostings skips, at lookup, a fingerprint shared by more
	// references than this (boilerplate such as a licence text): it says
	// nothing about lineage and would make a lookup scan them all (1,000).
	MaxPostings int
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxReferences, 100_000)
	def(&l.MaxFiles, 500)
	def(&l.MaxFingerprints, 256)
	def(&l.MaxSkillFingerprints, 2048)
	def(&l.MaxPostings, 1000)
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 1 << 20
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = 16 << 20
	}
	return l
}

// Files are a skill's files by slash-separated path relative to its root.
type Files map[string][]byte

// FilePrint is what the index keeps of one file.
type FilePrint struct {
	Path   string   `json:"path"`
	SHA256 string   `json:"sha256"`
	Prints []uint64 `json:"prints,omitempty"`
}

// Reference is one reference skill as the index keeps it.
type Reference struct {
	// Name identifies the reference (a skill key, or ROOT-NAME:PATH for a
	// reference root); Root is the directory its files are read from for
	// a diff; Origin says where it came from ("approved", "first_party",
	// "reference root"); Trusted references' identical files are not
	// re-reported by layer 4.
	Name    string `json:"name"`
	Root    string `json:"root"`
	Origin  string `json:"origin,omitempty"`
	Trusted bool   `json:"trusted,omitempty"`
	// Version is the digest of the paths and sha256 digests of Files: a
	// reference re-added with the same version is not fingerprinted again.
	Version string      `json:"version"`
	Files   []FilePrint `json:"files"`
	// Stamp is the caller's mark of the reference's tree as it was read
	// (the registry's fingerprint of paths, sizes and times, or an
	// install's content digest): Sync with the same stamp does not read
	// the files again.
	Stamp string `json:"stamp,omitempty"`
}

// Match is one relative Nearest found.
type Match struct {
	Name string
	// Score is the Jaccard similarity of the two skills' fingerprint sets
	// (0 … 1), raised to the share of identical files when that is higher.
	Score float64
	// Shared is how many fingerprints the two share; IdenticalFiles how
	// many files have the same path and digest.
	Shared, IdenticalFiles int
}

// Index holds reference skills and finds a candidate's relatives. It is
// safe for concurrent use.
type Index struct {
	limits Limits

	mu    sync.RWMutex
	refs  []*entry // slot per id; nil when removed
	ids   map[string]int
	free  []int
	inv   map[uint64][]int32 // fingerprint → ids holding it
	bySHA map[string][]int32 // file sha256 → ids holding it
}

type entry struct {
	ref    Reference
	prints int // distinct fingerprints over all files
}

// New returns an empty index with limits l.
func New(l Limits) *Index {
	return &Index{limits: l.withDefaults(), ids: map[string]int{}, inv: map[uint64][]int32{}, bySHA: map[string][]int32{}}
}

// Limits returns the index's limits, defaults applied.
func (ix *Index) Limits() Limits { return ix.limits }

// Len returns how many references the index holds.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.ids)
}

// Prints computes what the index keeps of files: each file's digest and
// fingerprints, sorted by path, at most Limits.MaxFiles, and the version
// digest over them.
func (ix *Index) Prints(files Files) ([]FilePrint, string) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if len(paths) > ix.limits.MaxFiles {
		paths = paths[:ix.limits.MaxFiles]
	}
	out := make([]FilePrint, 0, len(paths))
	v := sha256.New()
	for _, p := range paths {
		data := files[p]
		sum := sha256.Sum256(data)
		fp := FilePrint{Path: p, SHA256: hex.EncodeToString(sum[:])}
		if int64(len(data)) <= ix.limits.MaxFileBytes && isText(data) {
			fp.Prints = Fingerprints(data, ix.limits.MaxFingerprints)
		}
		fmt.Fprintf(v, "%s\x00%s\n", fp.Path, fp.SHA256)
		out = append(out, fp)
	}
	return out, hex.EncodeToString(v.Sum(nil))
}

// Version returns the version digest of files, as Reference.Version,
// without fingerprinting them.
func (ix *Index) Version(files Files) string {
	paths := sortedPaths(files)
	if len(paths) > ix.limits.MaxFiles {
		paths = paths[:ix.limits.MaxFiles]
	}
	v := sha256.New()
	for _, p := range paths {
		sum := sha256.Sum256(files[p])
		fmt.Fprintf(v, "%s\x00%s\n", p, hex.EncodeToString(sum[:]))
	}
	return hex.EncodeToString(v.Sum(nil))
}

// Has reports whether the index holds name at version.
func (ix *Index) Has(name, version string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	id, ok := ix.ids[name]
	return ok && ix.refs[id].ref.Version == version
}

// Add adds or replaces the reference ref.Name with files (ref.Files and
// ref.Version are computed). When the index already holds the same name
// at the same version, only ref's stamp, root, origin and trust are
// recorded. It reports whether the index changed.
func (ix *Index) Add(ref Reference, files Files) (bool, error) {
	v := ix.Version(files)
	ix.mu.Lock()
	if id, ok := ix.ids[ref.Name]; ok && ix.refs[id].ref.Version == v {
		e := ix.refs[id]
		changed := e.ref.Stamp != ref.Stamp
		e.ref.Root, e.ref.Origin, e.ref.Trusted, e.ref.Stamp = ref.Root, ref.Origin, ref.Trusted, ref.Stamp
		ix.mu.Unlock()
		return changed, nil
	}
	ix.mu.Unlock()
	ref.Files, ref.Version = ix.Prints(files)
	return ix.AddPrinted(ref)
}

// AddPrinted adds ref whose Files and Version are already computed (a
// loaded index, or prints computed elsewhere).
func (ix *Index) AddPrinted(ref Reference) (bool, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if id, ok := ix.ids[ref.Name]; ok {
		if ix.refs[id].ref.Version == ref.Version {
			e := ix.refs[id]
			changed := e.ref.Stamp != ref.Stamp
			e.ref.Root, e.ref.Origin, e.ref.Trusted, e.ref.Stamp = ref.Root, ref.Origin, ref.Trusted, ref.Stamp
			return changed, nil
		}
		ix.removeLocked(ref.Name)
	}
	if len(ix.ids) >= ix.limits.MaxReferences {
		return false, fmt.Errorf("%w: %d references", ErrLimit, len(ix.ids))
	}
	var id int
	if n := len(ix.free); n > 0 {
		id, ix.free = ix.free[n-1], ix.free[:n-1]
	} else {
		id = len(ix.refs)
		ix.refs = append(ix.refs, nil)
	}
	e := &entry{ref: ref}
	ix.refs[id] = e
	ix.ids[ref.Name] = id
	for _, p := range ix.distinct(ref.Files) {
		ix.inv[p] = append(ix.inv[p], int32(id))
		e.prints++
	}
	for _, f := range ref.Files {
		ix.bySHA[f.SHA256] = append(ix.bySHA[f.SHA256], int32(id))
	}
	return true, nil
}

// Remove removes the reference name; it reports whether it was there.
func (ix *Index) Remove(name string) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.removeLocked(name)
}

func (ix *Index) removeLocked(name string) bool {
	id, ok := ix.ids[name]
	if !ok {
		return false
	}
	e := ix.refs[id]
	drop := func(list []int32) []int32 {
		return slices.DeleteFunc(list, func(x int32) bool { return int(x) == id })
	}
	for _, p := range ix.distinct(e.ref.Files) {
		if l := drop(ix.inv[p]); len(l) > 0 {
			ix.inv[p] = l
		} else {
			delete(ix.inv, p)
		}
	}
	for _, f := range e.ref.Files {
		if l := drop(ix.bySHA[f.SHA256]); len(l) > 0 {
			ix.bySHA[f.SHA256] = l
		} else {
			delete(ix.bySHA, f.SHA256)
		}
	}
	ix.refs[id] = nil
	delete(ix.ids, name)
	ix.free = append(ix.free, id)
	return true
}

// Reference returns the reference name.
func (ix *Index) Reference(name string) (Reference, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	id, ok := ix.ids[name]
	if !ok {
		return Reference{}, false
	}
	return ix.refs[id].ref, true
}

// Names returns the references' names, sorted.
func (ix *Index) Names() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]string, 0, len(ix.ids))
	for n := range ix.ids {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Nearest returns up to n references most similar to files, best first,
// skipping the names in exclude (the candidate itself, when it is also a
// reference). Only references sharing a fingerprint or an identical file
// are considered, found through the inverted index.
func (ix *Index) Nearest(files Files, n int, exclude ...string) []Match {
	prints, _ := ix.Prints(files)
	return ix.NearestPrinted(prints, n, exclude...)
}

// NearestPrinted is Nearest over prints already computed.
func (ix *Index) NearestPrinted(prints []FilePrint, n int, exclude ...string) []Match {
	cand := ix.distinct(prints)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	skip := map[int]bool{}
	for _, name := range exclude {
		if id, ok := ix.ids[name]; ok {
			skip[id] = true
		}
	}
	// Dense counters over reference ids: a lookup touches only the
	// references that share something with the candidate.
	shared := make([]int32, len(ix.refs))
	same := make([]int32, len(ix.refs))
	var touched []int32
	for _, p := range cand {
		list := ix.inv[p]
		if len(list) > ix.limits.MaxPostings {
			continue
		}
		for _, id := range list {
			if shared[id] == 0 && same[id] == 0 {
				touched = append(touched, id)
			}
			shared[id]++
		}
	}
	for _, f := range prints {
		list := ix.bySHA[f.SHA256]
		if len(list) > ix.limits.MaxPostings {
			continue
		}
		for _, id := range list {
			if shared[id] == 0 && same[id] == 0 {
				touched = append(touched, id)
			}
			same[id]++
		}
	}
	out := make([]Match, 0, len(touched))
	for _, id := range touched {
		if skip[int(id)] {
			continue
		}
		e := ix.refs[id]
		s := int(shared[id])
		m := Match{Name: e.ref.Name, Shared: s, IdenticalFiles: int(same[id])}
		if union := len(cand) + e.prints - s; union > 0 {
			m.Score = float64(s) / float64(union)
		}
		if files := max(len(prints), len(e.ref.Files)); files > 0 {
			m.Score = max(m.Score, float64(m.IdenticalFiles)/float64(files))
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Match) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// distinct returns the distinct fingerprints of files, at most
// MaxSkillFingerprints (the smallest).
func (ix *Index) distinct(files []FilePrint) []uint64 {
	var all []uint64
	for _, f := range files {
		all = append(all, f.Prints...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all) > ix.limits.MaxSkillFingerprints {
		all = all[:ix.limits.MaxSkillFingerprints]
	}
	return all
}
