package discover

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/skillgate/skillgate/skill"
)

// A walk's state (Result.State) is what it read, packed so that the next
// walk of the same root can tell with one stat per directory and file, and
// nothing else, that it would find exactly the same (see [Verify]):
//
//	magic, root (string), limits (5 varints),
//	stat section length (uvarint), stat section,
//	result: dirs (uvarint), truncated (byte), notes (uvarint count, strings),
//	        dropped skills (uvarint count, each its path relative to the
//	        root (string) and depth (uvarint)),
//	        files in all (uvarint), candidates (uvarint count, each below)
//
// A string is its length (uvarint) and bytes; times are nanoseconds since
// the epoch. The stat section is a sequence of blocks, each a
// little-endian uint32 length and records: a directory ('D', its path
// relative to the root, "." for the root, as the length it shares with
// the previous directory of the block (uvarint) and the rest (string), its
// modification time and its status change time minus the former
// (varints)) followed by the regular files the walk stat'ed in it ('F',
// the name (string), the size, the modification time minus the
// directory's and the status change time minus the file's (varints)).
// Directories come depth-first, and a block starts at a directory record,
// so blocks are verified in parallel.
//
// A candidate is its path relative to the root (shared length and rest,
// as above, against the previous candidate), its file name (a byte: 0
// SKILL.md, 1 skill.md, else 2 and a string), its problem (string), its
// fingerprint (0 and 16 bytes when it is 32 lowercase hexadecimal digits,
// else 1 and a string), and its files (uvarint count, each: path (string),
// size, modification time minus the previous file's and status change
// time minus the modification time (varints); a status change time of 0
// is unknown).
//
// A walk that cannot promise that an unchanged state means an unchanged
// result makes no state: a directory or file changed within racyWindow of
// the walk (the clock may not tell a later change apart), a directory that
// could not be read, a file that could not be stat'ed.
const stateMagic = "skillgate walk state 3\n"

// stateBlockDirs is how many directories a block of the stat section holds.
const stateBlockDirs = 64

// stateBuilder records a walk's directories and files as it goes. The walk
// is breadth-first; the state lists them depth-first, each directory's
// subtree together, which makes the stats of a verification cheaper: the
// kernel resolves the paths of a subtree through the same few directories.
type stateBuilder struct {
	dirs   []stateDir
	files  []stateFile
	now    int64
	broken bool // the walk can make no state
}

// stateDir is a directory the walk read; its files are those from files
// to the next directory's.
type stateDir struct {
	rel          string
	mtime, ctime int64
	files        int32
	parent       int32 // -1 for the root
}

// stateFile is a regular file the walk stat'ed.
type stateFile struct {
	name               string
	size, mtime, ctime int64
}

func newStateBuilder(now int64) *stateBuilder {
	return &stateBuilder{now: now}
}

// fail records that the walk cannot make a state.
func (b *stateBuilder) fail() { b.broken = true }

// racy reports whether a time is too recent to be told apart from a later
// change.
func (b *stateBuilder) racy(t int64) bool { return t >= b.now-racyWindow }

// dir records a directory the walk read, found in the directory parent
// (a record dir returned, or -1 for the root), whose files (if any)
// follow; cacheable says its listing could be cached. It returns the
// directory's record.
func (b *stateBuilder) dir(rel string, parent int32, ds dirStat, cacheable bool) int32 {
	if b.broken {
		return -1
	}
	if !cacheable || b.racy(ds.mtime) || b.racy(ds.ctime) {
		b.fail()
		return -1
	}
	b.dirs = append(b.dirs, stateDir{rel: rel, mtime: ds.mtime, ctime: ds.ctime, files: int32(len(b.files)), parent: parent})
	return int32(len(b.dirs) - 1)
}

// file records a regular file the walk stat'ed in the last directory.
func (b *stateBuilder) file(e *entry) {
	if b.broken {
		return
	}
	if b.racy(e.mtime) || b.racy(e.ctime) {
		b.fail()
		return
	}
	b.files = append(b.files, stateFile{name: e.name, size: e.size, mtime: e.mtime, ctime: e.ctime})
}

// stats encodes the stat section: the directories depth-first, each
// followed by its files, in blocks of stateBlockDirs directories.
func (b *stateBuilder) stats() []byte {
	n := len(b.dirs)
	// The children of each directory, in the order the walk read them
	// (sorted): kids[first[i]:first[i+1]].
	first := make([]int32, n+1)
	for _, d := range b.dirs[1:] {
		first[d.parent+1]++
	}
	for i := 1; i <= n; i++ {
		first[i] += first[i-1]
	}
	kids := make([]int32, n)
	next := append([]int32(nil), first[:n]...)
	for i, d := range b.dirs[1:] {
		kids[next[d.parent]] = int32(i + 1)
		next[d.parent]++
	}
	size := 0
	for _, d := range b.dirs {
		size += len(d.rel) + 24
	}
	for _, f := range b.files {
		size += len(f.name) + 24
	}
	buf := make([]byte, 0, size+4*(n/stateBlockDirs+1))
	block, blockDirs, prevRel := -1, 0, ""
	endBlock := func() {
		if block >= 0 {
			binary.LittleEndian.PutUint32(buf[block:], uint32(len(buf)-block-4))
		}
	}
	stack := []int32{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		d := &b.dirs[i]
		if block < 0 || blockDirs == stateBlockDirs {
			endBlock()
			block, blockDirs, prevRel = len(buf), 0, ""
			buf = append(buf, 0, 0, 0, 0)
		}
		blockDirs++
		shared := commonPrefix(prevRel, d.rel)
		buf = append(buf, 'D')
		buf = binary.AppendUvarint(buf, uint64(shared))
		buf = appendString(buf, d.rel[shared:])
		buf = binary.AppendVarint(buf, d.mtime)
		buf = binary.AppendVarint(buf, d.ctime-d.mtime)
		prevRel = d.rel
		end := int32(len(b.files))
		if int(i)+1 < n {
			end = b.dirs[i+1].files
		}
		for _, f := range b.files[d.files:end] {
			buf = append(buf, 'F')
			buf = appendString(buf, f.name)
			buf = binary.AppendVarint(buf, f.size)
			buf = binary.AppendVarint(buf, f.mtime-d.mtime)
			buf = binary.AppendVarint(buf, f.ctime-f.mtime)
		}
		// Children are pushed last first, to come out in order.
		for k := first[i+1] - 1; k >= first[i]; k-- {
			stack = append(stack, kids[k])
		}
	}
	endBlock()
	return buf
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// finish returns the state of the walk that found res with lim, or nil
// when it can make none.
func (b *stateBuilder) finish(res *Result, lim Limits) []byte {
	if b.broken || len(b.dirs) == 0 || b.dirs[0].parent != -1 || res.Missing {
		return nil
	}
	stats := b.stats()
	nfiles := 0
	size := len(stateMagic) + len(res.Root.Path) + len(stats) + 64
	for _, n := range res.Notes {
		size += len(n) + binary.MaxVarintLen64
	}
	for _, d := range res.Dropped {
		size += len(d.Rel) + 2*binary.MaxVarintLen64
	}
	for i := range res.Candidates {
		c := &res.Candidates[i]
		size += len(c.Rel) + len(c.FileName) + len(c.Problem) + len(c.Fingerprint) + 6*binary.MaxVarintLen64
		for _, f := range c.Files {
			size += len(f.Path) + 3*binary.MaxVarintLen64
		}
		nfiles += len(c.Files)
	}
	out := make([]byte, 0, size)
	out = append(out, stateMagic...)
	out = appendString(out, res.Root.Path)
	out = appendLimits(out, lim)
	out = binary.AppendUvarint(out, uint64(len(stats)))
	out = append(out, stats...)
	out = binary.AppendUvarint(out, uint64(res.Dirs))
	if res.Truncated {
		out = append(out, 1)
	} else {
		out = append(out, 0)
	}
	out = binary.AppendUvarint(out, uint64(len(res.Notes)))
	for _, n := range res.Notes {
		out = appendString(out, n)
	}
	out = binary.AppendUvarint(out, uint64(len(res.Dropped)))
	for _, d := range res.Dropped {
		out = appendString(out, d.Rel)
		out = binary.AppendUvarint(out, uint64(d.Depth))
	}
	out = binary.AppendUvarint(out, uint64(nfiles))
	out = binary.AppendUvarint(out, uint64(len(res.Candidates)))
	prevRel := ""
	for i := range res.Candidates {
		c := &res.Candidates[i]
		shared := commonPrefix(prevRel, c.Rel)
		out = binary.AppendUvarint(out, uint64(shared))
		out = appendString(out, c.Rel[shared:])
		prevRel = c.Rel
		switch c.FileName {
		case skill.FileNames[0]:
			out = append(out, 0)
		case skill.FileNames[1]:
			out = append(out, 1)
		default:
			out = append(out, 2)
			out = appendString(out, c.FileName)
		}
		out = appendString(out, c.Problem)
		if raw, ok := hexDigest(c.Fingerprint); ok {
			out = append(out, 0)
			out = append(out, raw[:]...)
		} else {
			out = append(out, 1)
			out = appendString(out, c.Fingerprint)
		}
		out = binary.AppendUvarint(out, uint64(len(c.Files)))
		prev := int64(0)
		for _, f := range c.Files {
			m := f.ModTime.UnixNano()
			out = appendString(out, f.Path)
			out = binary.AppendVarint(out, f.Size)
			out = binary.AppendVarint(out, m-prev)
			ct := int64(0)
			if !f.Changed.IsZero() {
				ct = f.Changed.UnixNano()
			}
			out = binary.AppendVarint(out, ct-m)
			prev = m
		}
	}
	return out
}

// hexDigest decodes a fingerprint of 32 lowercase hexadecimal digits.
func hexDigest(s string) (raw [16]byte, ok bool) {
	if len(s) != 32 {
		return raw, false
	}
	for i := 0; i < 32; i++ {
		c := s[i]
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		default:
			return raw, false
		}
		raw[i/2] |= v << (4 * (1 - uint(i%2)))
	}
	return raw, true
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendLimits(b []byte, lim Limits) []byte {
	for _, v := range []int64{int64(lim.MaxDepth), int64(lim.MaxDirs), int64(lim.MaxTreeDirs), int64(lim.Tree.MaxFiles), lim.Tree.MaxBytes} {
		b = binary.AppendVarint(b, v)
	}
	return b
}

// stateReader decodes a state; the first malformed value makes it bad and
// every later read return zero values.
type stateReader struct {
	s   string
	bad bool
}

func (r *stateReader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	x, n := uvarintString(r.s)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.s = r.s[n:]
	return x
}

func (r *stateReader) varint() int64 {
	ux := r.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// count reads a count of items that take at least min bytes each.
func (r *stateReader) count(min int) int {
	n := r.uvarint()
	if n > uint64(len(r.s)/min) {
		r.bad = true
		return 0
	}
	return int(n)
}

func (r *stateReader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.s)) {
		r.bad = true
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

func (r *stateReader) byte() byte {
	if r.bad || len(r.s) == 0 {
		r.bad = true
		return 0
	}
	c := r.s[0]
	r.s = r.s[1:]
	return c
}

func uvarintString(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -1 // overflow
			}
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

// parsedState is a decoded state header: whether it was made by a walk of
// root with lim, and its stat section and the rest.
type parsedState struct {
	stats  string
	result string
}

// parseState checks that state was made by a walk of the absolute root
// with lim and splits it.
func parseState(state string, abs string, lim Limits) (parsedState, bool) {
	if !strings.HasPrefix(state, stateMagic) {
		return parsedState{}, false
	}
	r := stateReader{s: state[len(stateMagic):]}
	if r.str() != abs {
		return parsedState{}, false
	}
	want := appendLimits(nil, lim)
	if len(r.s) < len(want) || r.s[:len(want)] != string(want) {
		return parsedState{}, false
	}
	r.s = r.s[len(want):]
	n := r.uvarint()
	if r.bad || n > uint64(len(r.s)) {
		return parsedState{}, false
	}
	return parsedState{stats: r.s[:n], result: r.s[n:]}, true
}

// decodeResult rebuilds the result a state recorded, for root (whose Path
// is absolute), unless stop is set meanwhile. Its strings share the memory
// of the state.
func decodeResult(root Root, s string, stop *atomic.Bool) (*Result, bool) {
	r := stateReader{s: s}
	res := &Result{Root: root}
	res.Dirs = int(r.uvarint())
	res.Truncated = r.byte() == 1
	if n := r.count(1); n > 0 {
		res.Notes = make([]string, n)
		for i := range res.Notes {
			res.Notes[i] = r.str()
		}
	}
	if n := r.count(2); n > 0 {
		res.Dropped = make([]Dropped, n)
		for i := range res.Dropped {
			d := &res.Dropped[i]
			d.Rel = r.str()
			d.Depth = int(r.uvarint())
			if !validRel([]byte(d.Rel)) {
				return nil, false
			}
			d.Dir = filepath.Join(root.Path, d.Rel)
		}
	}
	files := make([]skill.File, r.count(3))
	ncand := r.count(6)
	if r.bad {
		return nil, false
	}
	res.Candidates = make([]Candidate, ncand)
	// The directories (each the root, a separator and the relative path,
	// which is taken from it) and the fingerprints are made in one buffer
	// each: a string taken from a Builder stays valid as it grows.
	sep := string(filepath.Separator)
	if strings.HasSuffix(root.Path, sep) {
		sep = ""
	}
	var dirs, fps strings.Builder
	dirs.Grow(ncand * (len(root.Path) + len(sep) + 40))
	fps.Grow(ncand * 32)
	used := 0
	prevRel := ""
	for i := range res.Candidates {
		if i%256 == 0 && stop.Load() {
			return nil, false
		}
		c := &res.Candidates[i]
		shared := int(r.uvarint())
		rest := r.str()
		if r.bad || shared > len(prevRel) {
			return nil, false
		}
		start := dirs.Len()
		dirs.WriteString(root.Path)
		dirs.WriteString(sep)
		relStart := dirs.Len()
		dirs.WriteString(prevRel[:shared])
		dirs.WriteString(rest)
		c.Dir = dirs.String()[start:]
		c.Rel = c.Dir[relStart-start:]
		prevRel = c.Rel
		switch r.byte() {
		case 0:
			c.FileName = skill.FileNames[0]
		case 1:
			c.FileName = skill.FileNames[1]
		case 2:
			c.FileName = r.str()
		default:
			return nil, false
		}
		c.Problem = r.str()
		switch r.byte() {
		case 0:
			if len(r.s) < 16 {
				return nil, false
			}
			start := fps.Len()
			for _, b := range []byte(r.s[:16]) {
				fps.WriteByte(hexDigits[b>>4])
				fps.WriteByte(hexDigits[b&15])
			}
			r.s = r.s[16:]
			c.Fingerprint = fps.String()[start:]
		case 1:
			c.Fingerprint = r.str()
		default:
			return nil, false
		}
		n := r.count(3)
		if r.bad || n > len(files)-used || c.Rel == "" || c.Rel == "." {
			return nil, false
		}
		fs := files[used : used+n : used+n]
		used += n
		mtime := int64(0)
		for j := range fs {
			p, size := r.str(), r.varint()
			mtime += r.varint()
			fs[j] = skill.File{Path: p, Size: size, ModTime: time.Unix(0, mtime)}
			if ct := mtime + r.varint(); ct != 0 {
				fs[j].Changed = time.Unix(0, ct)
			}
		}
		c.Files = fs
		c.Category = category(c.Rel)
	}
	if r.bad || len(r.s) != 0 || used != len(files) {
		return nil, false
	}
	return res, true
}

const hexDigits = "0123456789abcdef"

// Verify re-walks root cheaply after a walk with lim that returned state
// (which Verify keeps: it must not be modified afterwards). When every
// directory and regular file the state records still has the same type,
// times and size, a walk would read the same listings and stat the same
// files: Verify returns that walk's result, rebuilt from the state, and
// true. It costs one stat per directory and file, spread over several
// goroutines, and stops at the first difference; false means the root must
// be walked (with [WalkCached]).
//
// The result has the walk's Candidates, Dirs, Truncated, Notes and Dropped, and its
// State is state. Listings is nil and Reused 0: the listings the earlier
// walk returned still hold.
func Verify(ctx context.Context, root Root, lim Limits, state []byte) (*Result, bool) {
	if len(state) == 0 || ctx.Err() != nil {
		return nil, false
	}
	abs, err := filepath.Abs(root.Path)
	if err != nil {
		return nil, false
	}
	// The state is not copied: the result's strings share its memory.
	s := unsafe.String(&state[0], len(state))
	ps, ok := parseState(s, abs, lim)
	if !ok {
		return nil, false
	}
	// The result is decoded while the stats are verified.
	root.Path = abs
	var stop atomic.Bool
	type decoded struct {
		res *Result
		ok  bool
	}
	dc := make(chan decoded, 1)
	go func() {
		res, ok := decodeResult(root, ps.result, &stop)
		dc <- decoded{res, ok}
	}()
	verified := verifyStats(ctx, abs, ps.stats)
	if !verified {
		stop.Store(true)
	}
	d := <-dc
	if !verified || !d.ok {
		return nil, false
	}
	d.res.State = state
	return d.res, true
}

// validName reports whether name is one path element.
func validName[T string | []byte](name T) bool {
	return len(name) > 0 && string(name) != "." && string(name) != ".." &&
		!containsByte(name, '/') && !containsByte(name, 0)
}

func containsByte[T string | []byte](s T, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// validRel reports whether rel is "." or a relative slash-separated path
// of valid elements, so that it stays below the root.
func validRel(rel []byte) bool {
	if len(rel) == 1 && rel[0] == '.' {
		return true
	}
	for {
		i := 0
		for i < len(rel) && rel[i] != '/' {
			i++
		}
		if !validName(rel[:i]) {
			return false
		}
		if i == len(rel) {
			return true
		}
		rel = rel[i+1:]
	}
}
