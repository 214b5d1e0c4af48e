package discover

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// This file is the one place the scan cache's bytes are made and read. A
// root's record (what [Cache] keeps) is:
//
//	magic, root (string),
//	state section: length (uvarint), checksum, bytes (empty when the walk made none),
//	listings section: length (uvarint), checksum, bytes
//
// where a checksum is the CRC-32C of the section's bytes (little-endian
// uint32). The state comes first: a verified rescan reads only that.
//
// The listings section is their number (uvarint), then per directory: its
// path relative to the root ("." for the root) (string), its modification
// time (varint) and its entries (string: per entry a type byte, 'd'
// directory, 'f' regular file, 'l' link, 'o' other, the name and a NUL
// byte, sorted by name). A listing stands in for reading its directory
// while the directory's modification time is unchanged.
//
// The state lets the next walk of the same root tell with one stat per
// directory and file, and nothing else, that it would find exactly the
// same (see [Scan]):
//
//	limits (5 varints), stat section length (uvarint), stat section,
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
// A record is read from the data directory: the checksums refuse one that
// was damaged, and every path in it is checked to stay below the root.
const recordMagic = "skillgate scan cache 1\n"

// maxSection bounds the size of a record's section read back: about 20
// times what a root of 100,000 skills needs.
const maxSection = 1 << 30

// sectionPrealloc bounds the memory taken for a section before its bytes
// are read: a damaged length claims at most this much in advance, and a
// section of 100,000 skills (about 40 MB) is read with no regrowth.
const sectionPrealloc = 64 << 20

// errCorrupt means a record's bytes are damaged or malformed.
var errCorrupt = errors.New("corrupt scan cache")

// errOtherFormat means a record was written in a format this build does
// not read (an older skillgate's): not an error worth reporting, the walk
// simply replaces it.
var errOtherFormat = errors.New("scan cache in another format")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record is a record being read: its state, and its listings once
// listingMap needs them (a verified rescan never reads them).
type record struct {
	r     *bufio.Reader
	state string // "" when there is none
}

// readRecord reads the header and the state of a record of the absolute
// root from r; the listings stay in r until listingMap reads them.
func readRecord(r io.Reader, root string) (*record, error) {
	br := bufio.NewReaderSize(r, 4096)
	magic := make([]byte, len(recordMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != recordMagic {
		return nil, errOtherFormat
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > uint64(len(root)) {
		return nil, fmt.Errorf("%w: not the record of root %s", errCorrupt, root)
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(br, got); err != nil || string(got) != root {
		return nil, fmt.Errorf("%w: not the record of root %s", errCorrupt, root)
	}
	rec := &record{r: br}
	if rec.state, err = readSection(br, "state"); err != nil {
		return nil, err
	}
	return rec, nil
}

// readSection reads a section: its length, checksum and bytes. The bytes
// are read once, straight into the memory of the string returned, and
// checksummed there: the state of 10,000 skills is about 4 MB, which
// copying through a 32 KB buffer and again through another to take its
// checksum passed over twice more (and the buffer was allocated anew).
func readSection(br *bufio.Reader, what string) (string, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil || n > maxSection {
		return "", fmt.Errorf("%w: %s section length", errCorrupt, what)
	}
	var sum [4]byte
	if _, err := io.ReadFull(br, sum[:]); err != nil {
		return "", fmt.Errorf("%w: %s section truncated", errCorrupt, what)
	}
	// A bufio.Reader reads a buffer as large as its own straight into it.
	b := make([]byte, 0, min(n, sectionPrealloc))
	for uint64(len(b)) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, int(min(n-uint64(len(b)), uint64(cap(b)))))
		}
		m, err := br.Read(b[len(b):min(uint64(cap(b)), n)])
		b = b[:len(b)+m]
		switch {
		case err == nil || uint64(len(b)) == n:
		case errors.Is(err, io.EOF):
			return "", fmt.Errorf("%w: %s section truncated", errCorrupt, what)
		default:
			return "", err
		}
	}
	if crc32.Checksum(b, castagnoli) != binary.LittleEndian.Uint32(sum[:]) {
		return "", fmt.Errorf("%w: %s section checksum mismatch", errCorrupt, what)
	}
	// b is not written again, nor kept anywhere else: the string may
	// share its memory, as strings.Builder's does.
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// encodeRecord makes the record of a walk of the absolute root: its
// listings, and its state (from encodeState) when it made one.
func encodeRecord(root string, ls []dirListing, state []byte) []byte {
	size := 0
	for i := range ls {
		size += len(ls[i].rel) + len(ls[i].entries) + 3*binary.MaxVarintLen64
	}
	sec := binary.AppendUvarint(make([]byte, 0, size+binary.MaxVarintLen64), uint64(len(ls)))
	for i := range ls {
		l := &ls[i]
		sec = appendString(sec, l.rel)
		sec = binary.AppendVarint(sec, l.mtime)
		sec = appendString(sec, l.entries)
	}
	out := make([]byte, 0, len(recordMagic)+len(root)+len(state)+len(sec)+3*binary.MaxVarintLen64+8)
	out = append(out, recordMagic...)
	out = appendString(out, root)
	out = appendSection(out, state)
	return appendSection(out, sec)
}

func appendSection(b, sec []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(sec)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Update(0, castagnoli, sec))
	return append(b, sec...)
}

// dirListing is a directory's listing as a record keeps it.
type dirListing struct {
	rel string // relative to the root, "." for the root
	listing
}

// listing is a directory's entries (encoded as encodeEntries does) as they
// were when the directory had modification time mtime. Adding, removing
// or renaming an entry changes a directory's modification time, so a
// listing whose mtime still matches can stand in for reading the
// directory again. Files are still stat'ed on every walk: editing a file
// in place does not touch its directory.
type listing struct {
	mtime   int64
	entries string
}

// listingMap reads and decodes the listings section, keyed by path
// relative to the root; the strings share one string read.
func (rec *record) listingMap() (map[string]listing, error) {
	sec, err := readSection(rec.r, "listings")
	if err != nil {
		return nil, err
	}
	if _, err := rec.r.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: bytes after the listings", errCorrupt)
	}
	r := stateReader{s: sec}
	n := r.count(3) // a listing takes 3 bytes at least
	if r.bad {
		return nil, fmt.Errorf("%w: listing count", errCorrupt)
	}
	out := make(map[string]listing, n)
	for i := 0; i < n; i++ {
		rel := r.str()
		l := listing{mtime: r.varint(), entries: r.str()}
		if r.bad {
			return nil, fmt.Errorf("%w: listing %d of %d", errCorrupt, i+1, n)
		}
		if !validRel(rel) {
			return nil, fmt.Errorf("%w: listing of %q, not a path below the root", errCorrupt, rel)
		}
		if !validEntries(l.entries) {
			return nil, fmt.Errorf("%w: entries of %q", errCorrupt, rel)
		}
		if _, dup := out[rel]; dup {
			return nil, fmt.Errorf("%w: two listings of %q", errCorrupt, rel)
		}
		out[rel] = l
	}
	if len(r.s) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the listings", errCorrupt, len(r.s))
	}
	return out, nil
}

func encodeEntries(es []entry) string {
	n := 0
	for i := range es {
		n += len(es[i].name) + 2
	}
	var b strings.Builder
	b.Grow(n)
	for i := range es {
		e := &es[i]
		switch {
		case e.isDir():
			b.WriteByte('d')
		case e.isRegular():
			b.WriteByte('f')
		case e.isSymlink():
			b.WriteByte('l')
		default:
			b.WriteByte('o')
		}
		b.WriteString(e.name)
		b.WriteByte(0)
	}
	return b.String()
}

// validEntries reports whether s is entries as encodeEntries makes them:
// each a known type byte and a valid name, in strictly increasing order
// (a directory lists each name once, sorted).
func validEntries(s string) bool {
	prev := ""
	for first := true; len(s) > 0; first = false {
		switch s[0] {
		case 'd', 'f', 'l', 'o':
		default:
			return false
		}
		i := strings.IndexByte(s, 0)
		if i < 0 {
			return false
		}
		name := s[1:i]
		if !validName(name) || (!first && name <= prev) {
			return false
		}
		prev = name
		s = s[i+1:]
	}
	return true
}

// decodeEntries decodes entries that validEntries accepted.
func decodeEntries(s string) []entry {
	es := make([]entry, 0, strings.Count(s, "\x00"))
	for len(s) > 1 {
		i := strings.IndexByte(s, 0)
		if i < 1 {
			break
		}
		e := entry{name: s[1:i]}
		switch s[0] {
		case 'd':
			e.typ = fs.ModeDir
		case 'f':
			e.typ = 0
		case 'l':
			e.typ = fs.ModeSymlink
		default:
			e.typ = fs.ModeIrregular
		}
		es = append(es, e)
		s = s[i+1:]
	}
	return es
}

// RecordedLimits returns the limits of the last walk of root (an absolute
// path) as cache's record of it keeps them; ok is false when there is no
// record, one of another format, or one without a state. Only the
// record's head is read, not checked against its checksum: the limits
// are a hint for the next walk, each bounded (maxRecordedCount,
// maxRecordedBytes).
func RecordedLimits(ctx context.Context, root string, cache Cache) (lim Limits, ok bool, err error) {
	if cache == nil {
		return Limits{}, false, nil
	}
	rc, err := cache.ReadScanCache(ctx, root)
	if err != nil || rc == nil {
		return Limits{}, false, err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 512)
	magic := make([]byte, len(recordMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != recordMagic {
		return Limits{}, false, nil
	}
	if n, err := binary.ReadUvarint(br); err != nil || n != uint64(len(root)) {
		return Limits{}, false, fmt.Errorf("scan cache of %s: %w: not the record of root %s", root, errCorrupt, root)
	}
	if _, err := br.Discard(len(root)); err != nil {
		return Limits{}, false, fmt.Errorf("scan cache of %s: %w: truncated", root, errCorrupt)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return Limits{}, false, fmt.Errorf("scan cache of %s: %w: state section length", root, errCorrupt)
	}
	if n == 0 {
		return Limits{}, false, nil
	}
	if _, err := br.Discard(4); err != nil { // the checksum
		return Limits{}, false, fmt.Errorf("scan cache of %s: %w: truncated", root, errCorrupt)
	}
	var v [5]int64
	for i := range v {
		bound := int64(maxRecordedCount)
		if i == 4 {
			bound = maxRecordedBytes
		}
		if v[i], err = binary.ReadVarint(br); err != nil || v[i] <= 0 || v[i] > bound {
			return Limits{}, false, fmt.Errorf("scan cache of %s: %w: limits", root, errCorrupt)
		}
	}
	// The order of appendLimits.
	return Limits{MaxDepth: int(v[0]), MaxDirs: int(v[1]), MaxTreeDirs: int(v[2]),
		Tree: skill.TreeLimits{MaxFiles: int(v[3]), MaxBytes: v[4]}}, true, nil
}

// maxRecordedCount bounds the counts [RecordedLimits] returns (an int
// on every platform), maxRecordedBytes the tree size.
const (
	maxRecordedCount = math.MaxInt32
	maxRecordedBytes = 1 << 40
)
