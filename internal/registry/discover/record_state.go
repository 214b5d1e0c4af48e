package discover

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// encodeStats encodes the stat section: the directories depth-first, each
// followed by its files, in blocks of stateBlockDirs directories.
func (b *stateBuilder) encodeStats() []byte {
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

// encodeState returns the state of the walk that found res with lim, or
// nil when it can make none.
func (b *stateBuilder) encodeState(res *Result, lim Limits) []byte {
	if b.broken || len(b.dirs) == 0 || b.dirs[0].parent != -1 || res.Missing {
		return nil
	}
	stats := b.encodeStats()
	nfiles := 0
	size := len(stats) + 64
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

// stateReader decodes a record; the first malformed value makes it bad and
// every later read return zero values.
type stateReader struct {
	s   string
	bad bool
}

func (r *stateReader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	// As binary.Uvarint, on the string itself: a no-change rescan reads
	// millions of varints, and this loop costs a third of a copy into a
	// []byte for binary.Uvarint (callgrind, 10,000 skills).
	var x uint64
	var shift uint
	for i := 0; i < len(r.s) && i < binary.MaxVarintLen64; i++ {
		c := r.s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflow
			}
			r.s = r.s[i+1:]
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	r.bad = true
	return 0
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

// parsedState is a decoded state header: its stat section and the rest.
type parsedState struct {
	stats  string
	result string
}

// parseState checks that a record's state was made by a walk with lim and
// splits it; ok is false when the record has no state or one made with
// other limits (then err is nil: the listings are still good), err says
// what is malformed.
func parseState(state string, lim Limits) (ps parsedState, ok bool, err error) {
	if state == "" {
		return parsedState{}, false, nil
	}
	want := appendLimits(nil, lim)
	if len(state) < len(want) || state[:len(want)] != string(want) {
		return parsedState{}, false, nil
	}
	r := stateReader{s: state[len(want):]}
	n := r.uvarint()
	if r.bad || n > uint64(len(r.s)) {
		return parsedState{}, false, fmt.Errorf("%w: stat section overruns the record", errCorrupt)
	}
	return parsedState{stats: r.s[:n], result: r.s[n:]}, true, nil
}

// statBlocks splits a stat section into its blocks.
func statBlocks(stats string) ([]string, error) {
	var blocks []string
	for len(stats) > 0 {
		if len(stats) < 4 {
			return nil, fmt.Errorf("%w: truncated stat block", errCorrupt)
		}
		n := uint32(stats[0]) | uint32(stats[1])<<8 | uint32(stats[2])<<16 | uint32(stats[3])<<24
		if uint64(n) > uint64(len(stats)-4) {
			return nil, fmt.Errorf("%w: stat block overruns the record", errCorrupt)
		}
		blocks = append(blocks, stats[4:4+n])
		stats = stats[4+n:]
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%w: no stat block", errCorrupt)
	}
	return blocks, nil
}

// statRecord is one record of a stat block: a directory, whose path
// relative to the root is rel, or a regular file in the last directory.
type statRecord struct {
	dir                bool
	name               string // a file's
	size, mtime, ctime int64
}

// blockReader reads the records of one stat block.
type blockReader struct {
	r        stateReader
	rel      []byte // the block's current directory
	dirMtime int64
	seenDir  bool
}

func (b *blockReader) reset(block string) {
	b.r = stateReader{s: block}
	b.rel = b.rel[:0]
	b.seenDir = false
}

// next reads the next record into rec: ok is false at the end of the
// block, err says what is malformed. A directory's path is in b.rel, a
// file's name checked to be one path element.
func (b *blockReader) next(rec *statRecord) (ok bool, err error) {
	r := &b.r
	if len(r.s) == 0 {
		return false, nil
	}
	switch r.byte() {
	case 'D':
		shared := r.uvarint()
		rest := r.str()
		mtime := r.varint()
		ctime := mtime + r.varint()
		if r.bad || shared > uint64(len(b.rel)) {
			return false, fmt.Errorf("%w: directory record", errCorrupt)
		}
		b.rel = append(b.rel[:shared], rest...)
		if !validRel(b.rel) {
			return false, fmt.Errorf("%w: directory %q, not a path below the root", errCorrupt, b.rel)
		}
		b.seenDir, b.dirMtime = true, mtime
		*rec = statRecord{dir: true, mtime: mtime, ctime: ctime}
	case 'F':
		name := r.str()
		size := r.varint()
		mtime := b.dirMtime + r.varint()
		ctime := mtime + r.varint()
		if r.bad || !b.seenDir || !validName(name) {
			return false, fmt.Errorf("%w: file record", errCorrupt)
		}
		*rec = statRecord{name: name, size: size, mtime: mtime, ctime: ctime}
	default:
		return false, fmt.Errorf("%w: unknown stat record", errCorrupt)
	}
	return true, nil
}

// decodeResult rebuilds the result a state recorded, for root (whose Path
// is absolute), unless stop is set meanwhile. Its strings share the memory
// of the state.
func decodeResult(root Root, s string, stop *atomic.Bool) (*Result, error) {
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
			if !validRel(d.Rel) || d.Rel == "." {
				return nil, fmt.Errorf("%w: dropped skill %q, not a path below the root", errCorrupt, d.Rel)
			}
			d.Dir = filepath.Join(root.Path, d.Rel)
		}
	}
	files := make([]skill.File, r.count(3))
	ncand := r.count(6)
	if r.bad {
		return nil, fmt.Errorf("%w: result header", errCorrupt)
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
	bad := func(i int, what string) (*Result, error) {
		return nil, fmt.Errorf("%w: candidate %d: %s", errCorrupt, i+1, what)
	}
	for i := range res.Candidates {
		if i%256 == 0 && stop.Load() {
			return nil, errors.New("stopped")
		}
		c := &res.Candidates[i]
		shared := int(r.uvarint())
		rest := r.str()
		if r.bad || shared > len(prevRel) {
			return bad(i, "path")
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
		if c.Rel == "." || !validRel(c.Rel) {
			return bad(i, "not a path below the root")
		}
		switch r.byte() {
		case 0:
			c.FileName = skill.FileNames[0]
		case 1:
			c.FileName = skill.FileNames[1]
		case 2:
			c.FileName = r.str()
		default:
			return bad(i, "file name")
		}
		c.Problem = r.str()
		switch r.byte() {
		case 0:
			if len(r.s) < 16 {
				return bad(i, "fingerprint")
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
			return bad(i, "fingerprint")
		}
		n := r.count(3)
		if r.bad || n > len(files)-used {
			return bad(i, "files")
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
		return nil, fmt.Errorf("%w: result", errCorrupt)
	}
	return res, nil
}

const hexDigits = "0123456789abcdef"
