package discover

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// sampleRoot is the root of sampleRecord.
const sampleRoot = "/r"

// sampleRecord is the record of a walk of a made-up tree under sampleRoot
// (no file system involved), with every kind of value the format holds,
// and the result and listings it records.
func sampleRecord() (string, *Result, map[string]listing) {
	t0 := int64(1_700_000_000_000_000_000)
	sb := &stateBuilder{now: math.MaxInt64}
	root := sb.dir(".", -1, dirStat{mtime: t0, ctime: t0 + 5}, true)
	sb.file(&entry{name: "top.md", size: 3, mtime: t0 - 10, ctime: t0 - 9})
	a := sb.dir("a", root, dirStat{mtime: t0 + 1, ctime: t0 + 1}, true)
	sb.file(&entry{name: "SKILL.md", size: 120, mtime: t0 + 2, ctime: t0 + 2})
	sb.dir("a/scripts", a, dirStat{mtime: t0 + 3, ctime: t0 + 4}, true)
	sb.file(&entry{name: "run.sh", size: 0, mtime: t0 - 1e9, ctime: t0})
	sb.dir("b", root, dirStat{mtime: t0, ctime: t0}, true)
	files := []skill.File{
		{Path: "SKILL.md", Size: 120, ModTime: time.Unix(0, t0+2), Changed: time.Unix(0, t0+2)},
		{Path: "scripts/run.sh", Size: 0, ModTime: time.Unix(0, t0-1e9), Changed: time.Unix(0, t0)},
	}
	res := &Result{
		Root:      Root{Path: sampleRoot},
		Dirs:      4,
		Truncated: true,
		Notes:     []string{"a note", ""},
		Dropped:   []Dropped{{Dir: sampleRoot + "/deep/x", Rel: "deep/x", Depth: 7}},
		Candidates: []Candidate{
			{Dir: sampleRoot + "/a", Rel: "a", FileName: "SKILL.md", Fingerprint: fingerprint("SKILL.md", files), Files: files},
			{Dir: sampleRoot + "/b", Rel: "b", FileName: "skill.md", Problem: "cannot read", Fingerprint: "not hex", Files: []skill.File{}},
			{Dir: sampleRoot + "/b/c", Rel: "b/c", Category: "b", FileName: "Skill.md", Fingerprint: "", Files: []skill.File{}},
		},
	}
	ls := []dirListing{
		{".", listing{t0, "da\x00db\x00ftop.md\x00"}},
		{"a", listing{t0 + 1, "fSKILL.md\x00dscripts\x00"}},
		{"a/scripts", listing{t0 + 3, "opipe\x00frun.sh\x00lx\x00"}},
		{"b", listing{t0, ""}},
	}
	m := map[string]listing{}
	for _, l := range ls {
		m[l.rel] = l.listing
	}
	return string(encodeRecord(sampleRoot, ls, sb.encodeState(res, DefaultLimits))), res, m
}

// TestRecordRoundTrip checks that a record decodes to what was encoded.
func TestRecordRoundTrip(t *testing.T) {
	rec, want, wantListings := sampleRecord()
	checkRecord(t, rec)
	r, ls, err := decodeAll(rec, sampleRoot)
	if err != nil || !reflect.DeepEqual(ls, wantListings) {
		t.Fatalf("listings %v, %v\nwant %v", ls, err, wantListings)
	}
	ps, ok, err := parseState(r.state, DefaultLimits)
	if !ok || err != nil {
		t.Fatalf("state: %v %v", ok, err)
	}
	var stop atomic.Bool
	got, err := decodeResult(want.Root, ps.result, &stop)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Candidates {
		for j, f := range got.Candidates[i].Files {
			// Times come back in the local zone; compare instants.
			w := want.Candidates[i].Files[j]
			if !f.ModTime.Equal(w.ModTime) || !f.Changed.Equal(w.Changed) {
				t.Errorf("candidate %d file %d: times %v %v, want %v %v", i, j, f.ModTime, f.Changed, w.ModTime, w.Changed)
			}
			got.Candidates[i].Files[j].ModTime, got.Candidates[i].Files[j].Changed = w.ModTime, w.Changed
		}
	}
	want.Candidates[0].Category = ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("result\n %+v\nwant\n %+v", got, want)
	}
	var stats []string
	blocks, err := statBlocks(ps.stats)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		var br blockReader
		br.reset(b)
		var sr statRecord
		for {
			ok, err := br.next(&sr)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if sr.dir {
				stats = append(stats, "D "+string(br.rel))
			} else {
				stats = append(stats, "F "+sr.name)
			}
		}
	}
	if got, want := strings.Join(stats, ", "), "D ., F top.md, D a, F SKILL.md, D a/scripts, F run.sh, D b"; got != want {
		t.Errorf("stat records %q, want %q", got, want)
	}
	// Other limits keep the listings but not the state.
	lim := DefaultLimits
	lim.MaxDepth++
	if _, ok, err := parseState(r.state, lim); ok || err != nil {
		t.Errorf("other limits: %v %v", ok, err)
	}
}

// TestRecordDamageRefused checks that every change of one byte of a
// record, and every truncation, is refused with an error: CRC-32C finds
// every error burst of up to 32 bits in a section, and a change in the
// header moves or garbles the sections.
func TestRecordDamageRefused(t *testing.T) {
	rec, _, _ := sampleRecord()
	for i := 0; i < len(rec); i++ {
		for _, x := range []byte{1, 0x80, 0xff} {
			b := []byte(rec)
			b[i] ^= x
			if _, _, err := decodeAll(string(b), sampleRoot); err == nil {
				t.Fatalf("byte %d ^ %#x accepted", i, x)
			}
		}
	}
	for n := 0; n < len(rec); n++ {
		if _, _, err := decodeAll(rec[:n], sampleRoot); err == nil {
			t.Fatalf("the first %d bytes accepted", n)
		}
	}
	if _, _, err := decodeAll(rec, "/other"); err == nil || err.Error() != "corrupt scan cache: not the record of root /other" {
		t.Errorf("another root: %v", err)
	}
}

// decodeAll reads a whole record of root.
func decodeAll(rec, root string) (*record, map[string]listing, error) {
	r, err := readRecord(strings.NewReader(rec), root)
	if err != nil {
		return nil, nil, err
	}
	ls, err := r.listingMap()
	return r, ls, err
}

// sealed returns a record of sampleRoot with the given sections, under
// right checksums. The fuzz target seals what it is given as well, so
// that the fuzzer explores what lies behind the checksums.
func sealed(state, listings []byte) string {
	b := appendString([]byte(recordMagic), sampleRoot)
	b = appendSection(b, state)
	return string(appendSection(b, listings))
}

// FuzzDecodeRecord decodes arbitrary records (a record is read from the
// data directory), as given and sealed from the given sections with right
// checksums: decoding must never panic, and what it accepts must stay
// below the root and encode back to the same. Its seed corpus is in
// testdata/fuzz/FuzzDecodeRecord.
func FuzzDecodeRecord(f *testing.F) {
	f.Fuzz(func(t *testing.T, rec, state, listings []byte) {
		checkRecord(t, string(rec))
		checkRecord(t, sealed(state, listings))
	})
}

// checkRecord decodes every part of rec, a record of sampleRoot made with
// DefaultLimits, and checks what it accepts.
func checkRecord(t *testing.T, rec string) {
	if lim, ok, err := RecordedLimits(context.Background(), sampleRoot, oneRecord(rec)); err != nil && !errors.Is(err, errCorrupt) {
		t.Fatalf("recorded limits: error of another kind: %v", err)
	} else if ok && (lim.MaxDepth <= 0 || lim.MaxDirs <= 0 || lim.MaxTreeDirs <= 0 || lim.Tree.MaxFiles <= 0 ||
		lim.Tree.MaxBytes <= 0 || lim.Tree.MaxBytes > maxRecordedBytes || int64(lim.MaxDirs) > maxRecordedCount) {
		t.Fatalf("recorded limits out of bounds: %+v", lim)
	}
	r, err := readRecord(strings.NewReader(rec), sampleRoot)
	if err != nil {
		if !errors.Is(err, errCorrupt) && !errors.Is(err, errOtherFormat) {
			t.Fatalf("error of another kind: %v", err)
		}
		return
	}
	if ls, err := r.listingMap(); err == nil {
		again := make([]dirListing, 0, len(ls))
		for rel, l := range ls {
			if !validRel(rel) || !validEntries(l.entries) {
				t.Fatalf("listing %q %q accepted", rel, l.entries)
			}
			for _, e := range decodeEntries(l.entries) {
				if !validName(e.name) {
					t.Fatalf("entry %q accepted", e.name)
				}
			}
			again = append(again, dirListing{rel, l})
		}
		_, ls2, err := decodeAll(string(encodeRecord(sampleRoot, again, nil)), sampleRoot)
		if err != nil || !reflect.DeepEqual(ls2, ls) {
			t.Fatalf("listings do not encode back: %v", err)
		}
	} else if !errors.Is(err, errCorrupt) {
		t.Fatalf("listings: error of another kind: %v", err)
	}
	ps, ok, _ := parseState(r.state, DefaultLimits)
	if !ok {
		return
	}
	if blocks, err := statBlocks(ps.stats); err == nil {
		for _, b := range blocks {
			var br blockReader
			br.reset(b)
			var sr statRecord
			for {
				ok, err := br.next(&sr)
				if !ok {
					if err != nil && !errors.Is(err, errCorrupt) {
						t.Fatalf("stats: error of another kind: %v", err)
					}
					break
				}
				if !validRel(br.rel) || (!sr.dir && !validName(sr.name)) {
					t.Fatalf("stat record %q %q accepted", br.rel, sr.name)
				}
			}
		}
	}
	var stop atomic.Bool
	res, err := decodeResult(Root{Path: sampleRoot}, ps.result, &stop)
	if err != nil {
		if !errors.Is(err, errCorrupt) {
			t.Fatalf("result: error of another kind: %v", err)
		}
		return
	}
	for _, c := range res.Candidates {
		if c.Rel == "." || !validRel(c.Rel) || c.Dir != sampleRoot+"/"+c.Rel {
			t.Fatalf("candidate %q in %q accepted", c.Rel, c.Dir)
		}
	}
	for _, d := range res.Dropped {
		if d.Rel == "." || !validRel(d.Rel) || !strings.HasPrefix(d.Dir, sampleRoot+"/") {
			t.Fatalf("dropped %q in %q accepted", d.Rel, d.Dir)
		}
	}
}

// TestValidPaths pins which paths a record may hold.
func TestValidPaths(t *testing.T) {
	for rel, want := range map[string]bool{
		".": true, "a": true, "a/b": true, "a.b/.c": true, "..a/b..": true, "...": true,
		"": false, "..": false, "../x": false, "a/../../x": false, "/etc": false, "a//b": false,
		"a/./b": false, "a/": false, "./a": false, "a/.": false, "a\x00b": false,
	} {
		if got := validRel(rel); got != want {
			t.Errorf("validRel(%q) = %v, want %v", rel, got, want)
		}
		if got := validRel([]byte(rel)); got != want {
			t.Errorf("validRel([]byte(%q)) = %v, want %v", rel, got, want)
		}
	}
	for name, want := range map[string]bool{
		"a": true, ".a": true, "...": true, "a b": true,
		"": false, ".": false, "..": false, "a/b": false, "a\x00": false, "/": false,
	} {
		if got := validName(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestReadSectionOneCopy checks that a record's state is read straight
// into the string decoded from, with no staging buffer: a no-change rescan
// of 10,000 skills reads a state of about 4 MB. Reading it allocates the
// section and the reader's 4 KB buffer, and little else; a damaged length
// does not claim its memory in advance; a section is still refused when
// truncated or damaged.
func TestReadSectionOneCopy(t *testing.T) {
	state := []byte(strings.Repeat("stat records ", 1<<17)) // 1.6 MB
	rec := sealed(state, nil)
	var least uint64 = math.MaxUint64
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := readRecord(strings.NewReader(rec), sampleRoot)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if r.state != string(state) {
			t.Fatal("state read differs from the state written")
		}
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if limit := uint64(len(state)) + 8<<10; least > limit {
		t.Errorf("reading a %d-byte state allocated %d bytes, want at most %d", len(state), least, limit)
	}
	// A damaged length (here 512 MB, in a record of a few bytes) takes
	// no more than sectionPrealloc before the record runs out.
	lying := binary.AppendUvarint(appendString([]byte(recordMagic), sampleRoot), 1<<29)
	lying = append(lying, "sum!a few bytes"...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _ = readRecord(strings.NewReader(string(lying)), sampleRoot)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > sectionPrealloc+1<<20 {
		t.Errorf("a record claiming a 512 MB state allocated %d bytes, want at most %d", got, sectionPrealloc+1<<20)
	}
	for _, tc := range []struct {
		name, rec, want string
	}{
		{"length beyond the record", string(lying), "corrupt scan cache: state section truncated"},
		{"truncated", rec[:len(rec)-len(state)/2], "corrupt scan cache: state section truncated"},
		{"damaged", rec[:len(rec)-10] + "X" + rec[len(rec)-9:], "corrupt scan cache: state section checksum mismatch"},
	} {
		if _, err := readRecord(strings.NewReader(tc.rec), sampleRoot); err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// oneRecord is a [Cache] holding one record, for every root.
type oneRecord string

func (r oneRecord) ReadScanCache(context.Context, string) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(string(r))), nil
}

func (oneRecord) WriteScanCache(context.Context, string, []byte) error { return nil }
