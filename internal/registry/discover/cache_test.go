package discover_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/registry/discover"
)

// memCache is a [discover.Cache] in memory, counting its reads and writes.
type memCache struct {
	mu      sync.Mutex
	recs    map[string]string
	writes  int
	readErr error
}

func (c *memCache) ReadScanCache(_ context.Context, root string) (io.ReadCloser, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr != nil {
		return nil, c.readErr
	}
	rec, ok := c.recs[root]
	if !ok {
		return nil, nil
	}
	return io.NopCloser(strings.NewReader(rec)), nil
}

func (c *memCache) WriteScanCache(_ context.Context, root string, rec []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recs == nil {
		c.recs = map[string]string{}
	}
	c.writes++
	if len(rec) == 0 {
		delete(c.recs, root)
		return nil
	}
	c.recs[root] = string(rec)
	return nil
}

func (c *memCache) get(root string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.recs[root]
}

func (c *memCache) set(root, rec string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recs == nil {
		c.recs = map[string]string{}
	}
	c.recs[root] = rec
}

// backdate sets every directory's modification time an hour back, so its
// listing may be cached.
func backdate(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

// TestScanReusesListings checks that a scan that cannot verify the last
// walk still reuses the listings of directories whose modification time
// is unchanged, and still sees files edited in place.
func TestScanReusesListings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("listing cache is Linux-only")
	}
	root := writeTree(t, map[string]string{"a/SKILL.md": sk("a"), "a/scripts/run.sh": "echo"})
	backdate(t, root)
	ctx := context.Background()
	r := discover.Root{Path: root}
	var c memCache
	first, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
	if err != nil || first.Verified || first.CacheError != nil || c.writes != 1 {
		t.Fatalf("first scan: %v, verified %v, cache error %v, %d writes", err, first.Verified, first.CacheError, c.writes)
	}
	if got := discover.ListingsForTest(c.get(root)); got != ".,a,a/scripts" {
		t.Fatalf("listings kept: %q, want the root, a and a/scripts", got)
	}
	// A file edited in place is seen although its directory's listing is
	// reused (the edit is too recent for a state: the scan walks).
	os.WriteFile(filepath.Join(root, "a/scripts/run.sh"), []byte("echo longer"), 0o644)
	backdate(t, root)
	second, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
	if err != nil || second.Verified {
		t.Fatalf("second scan: %v, verified %v", err, second.Verified)
	}
	if second.Candidates[0].Fingerprint == first.Candidates[0].Fingerprint {
		t.Error("in-place edit not seen")
	}
	// A listing is trusted while its mtime matches: a ghost entry shows
	// that it is reused.
	c.set(root, discover.AddGhostForTest(c.get(root), root, "a", "fghost.md"))
	lim := discover.DefaultLimits
	lim.MaxDirs++ // other limits: the state is not verified, the listings are used
	third, err := discover.Scan(ctx, r, lim, &c)
	if err != nil || third.CacheError != nil {
		t.Fatalf("third scan: %v, cache error %v", err, third.CacheError)
	}
	if third.Candidates[0].Problem == "" {
		t.Error("cached listing was not used (the ghost file should fail to stat)")
	}
	// A new skill changes its parent's mtime, so the parent is read again.
	writeTree2(t, root, map[string]string{"b/SKILL.md": sk("b")})
	fourth, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
	if err != nil || len(fourth.Candidates) != 2 {
		t.Fatalf("new skill not found: %v, %d candidates", err, len(fourth.Candidates))
	}
	// A directory changed within the last moments is not cached.
	if got := discover.ListingsForTest(c.get(root)); strings.HasPrefix(got, ".,") {
		t.Errorf("just-modified root listing was kept: %q", got)
	}
}

// TestScanCacheErrors checks that a cache that cannot be read, or holds
// a damaged record, is no error: the scan walks and says why.
func TestScanCacheErrors(t *testing.T) {
	root := writeTree(t, map[string]string{"a/SKILL.md": sk("a")})
	ctx := context.Background()
	r := discover.Root{Path: root}
	want, err := discover.Walk(ctx, r, discover.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	unreadable := &memCache{readErr: errors.New("disk on fire")}
	res, err := discover.Scan(ctx, r, discover.DefaultLimits, unreadable)
	if err != nil || res.CacheError == nil || res.CacheError.Error() != "disk on fire" {
		t.Fatalf("unreadable cache: %v, cache error %v", err, res.CacheError)
	}
	sameResult(t, res, want)
	damaged := &memCache{}
	damaged.set(root, "skillgate scan cache 1\ngarbage")
	res, err = discover.Scan(ctx, r, discover.DefaultLimits, damaged)
	if err != nil {
		t.Fatal(err)
	}
	if wantErr := "scan cache of " + root + ": corrupt scan cache: not the record of root " + root + "; the root is walked and its cache written again"; res.CacheError == nil || res.CacheError.Error() != wantErr {
		t.Errorf("damaged record: cache error %v, want %q", res.CacheError, wantErr)
	}
	sameResult(t, res, want)
	// A record of an older format is replaced without a word.
	old := &memCache{}
	old.set(root, "skillgate walk state 3\n...")
	if res, err = discover.Scan(ctx, r, discover.DefaultLimits, old); err != nil || res.CacheError != nil {
		t.Errorf("older format: %v, cache error %v", err, res.CacheError)
	}
	if runtime.GOOS == "linux" && strings.HasPrefix(old.get(root), "skillgate walk state") {
		t.Error("the record of an older format was not replaced")
	}
	// A missing root keeps no record.
	gone := &memCache{}
	gone.set(filepath.Join(root, "nope"), "stale")
	if res, err = discover.Scan(ctx, discover.Root{Path: filepath.Join(root, "nope")}, discover.DefaultLimits, gone); err != nil || !res.Missing {
		t.Fatalf("missing root: %v, %+v", err, res)
	}
	if gone.get(filepath.Join(root, "nope")) != "" {
		t.Error("a missing root's record was kept")
	}
}

func writeTree2(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChanged checks why a root may no longer hold what the record of its
// last scan says, with stats only: no record, a walk too close to a
// change to keep a stamp, an edited file, a new skill, other limits, a
// record of another format and a damaged one.
func TestChanged(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the walk state is Linux-only")
	}
	root := writeTree(t, map[string]string{"a/SKILL.md": sk("a"), "a/scripts/run.sh": "echo"})
	ctx := context.Background()
	r := discover.Root{Path: root}
	lim := discover.DefaultLimits
	var c memCache
	changed := func(c *memCache, lim discover.Limits) string {
		t.Helper()
		why, err := discover.Changed(ctx, r, lim, c)
		if err != nil {
			t.Fatalf("Changed: %v", err)
		}
		return why
	}
	scan := func() {
		t.Helper()
		if _, err := discover.Scan(ctx, r, lim, &c); err != nil {
			t.Fatal(err)
		}
	}
	if got := changed(&c, lim); got != discover.NoStamp {
		t.Errorf("no record: %q, want %q", got, discover.NoStamp)
	}
	if why, err := discover.Changed(ctx, r, lim, nil); why != discover.NoStamp || err != nil {
		t.Errorf("nil cache: %q, %v", why, err)
	}
	// A time the walk cannot tell apart from a later change (one within
	// its racy window, here a future one): the walk keeps no stamp.
	run := filepath.Join(root, "a/scripts/run.sh")
	if err := os.Chtimes(run, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	scan()
	if got := changed(&c, lim); got != discover.NoStamp {
		t.Errorf("scanned right after a change: %q, want %q", got, discover.NoStamp)
	}
	if err := os.Chtimes(run, time.Now(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond) // past the racy window: the walk keeps a state
	scan()
	if got := changed(&c, lim); got != "" {
		t.Fatalf("just scanned: %q", got)
	}
	writes := c.writes
	other := lim
	other.MaxDirs++
	if got := changed(&c, other); got != discover.OtherLimits {
		t.Errorf("a record made with other limits: %q, want %q", got, discover.OtherLimits)
	}
	os.WriteFile(run, []byte("echo longer"), 0o644)
	if got := changed(&c, lim); got != discover.TreeChanged {
		t.Errorf("edited file: %q, want %q", got, discover.TreeChanged)
	}
	time.Sleep(150 * time.Millisecond)
	scan()
	if got := changed(&c, lim); got != "" {
		t.Fatalf("rescanned: %q", got)
	}
	writeTree2(t, root, map[string]string{"b/SKILL.md": sk("b")})
	if got := changed(&c, lim); got != discover.TreeChanged {
		t.Errorf("new skill: %q, want %q", got, discover.TreeChanged)
	}
	if c.writes != writes+1 {
		t.Errorf("Changed wrote the cache: %d writes, want %d", c.writes, writes+1)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if why, err := discover.Changed(canceled, r, lim, &c); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %q, %v; want context.Canceled", why, err)
	}
	old := &memCache{}
	old.set(root, "skillgate walk state 3\n...")
	if got := changed(old, lim); got != discover.RecordOtherFormat {
		t.Errorf("record of an older format: %q, want %q", got, discover.RecordOtherFormat)
	}
	damaged := &memCache{}
	damaged.set(root, "skillgate scan cache 1\ngarbage")
	why, err := discover.Changed(ctx, r, lim, damaged)
	if want := "scan cache of " + root + ": corrupt scan cache: not the record of root " + root; why != "" || err == nil || err.Error() != want {
		t.Errorf("damaged record: %q, %v, want error %q", why, err, want)
	}
}

// TestRecordedLimits: the limits of a root's last walk are read back from
// the head of its record; no record, or a record without a state, gives
// none, and a damaged head is an error, never limits.
func TestRecordedLimits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the walk state is Linux-only")
	}
	root := writeTree(t, map[string]string{"a/SKILL.md": sk("a")})
	time.Sleep(150 * time.Millisecond) // past the racy window: the walk keeps a state
	ctx := context.Background()
	var c memCache
	if lim, ok, err := discover.RecordedLimits(ctx, root, &c); ok || err != nil || lim != (discover.Limits{}) {
		t.Errorf("no record: %+v %v %v", lim, ok, err)
	}
	if _, ok, err := discover.RecordedLimits(ctx, root, nil); ok || err != nil {
		t.Errorf("nil cache: %v %v", ok, err)
	}
	lim := discover.DefaultLimits
	lim.MaxDirs, lim.MaxDepth, lim.Tree.MaxBytes = 123456, 9, 1<<30
	if _, err := discover.Scan(ctx, discover.Root{Path: root}, lim, &c); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := discover.RecordedLimits(ctx, root, &c); !ok || err != nil || got != lim {
		t.Errorf("after a walk: %+v %v %v, want %+v", got, ok, err, lim)
	}
	rec := c.recs[root]
	head := len("skillgate scan cache 1\n") + 1 + len(root) // magic, root
	_, n := binary.Uvarint([]byte(rec[head:]))              // the state's length
	for _, tc := range []struct {
		name, rec string
		ok        bool
		err       string
	}{
		{"another format", "skillgate scan cache 0\n", false, ""},
		{"another root", rec[:len("skillgate scan cache 1\n")] + "\x02/x", false, "scan cache of " + root + ": corrupt scan cache: not the record of root " + root},
		{"truncated in the limits", rec[:head+n+4+1], false, "scan cache of " + root + ": corrupt scan cache: limits"},
	} {
		c.recs[root] = tc.rec
		_, ok, err := discover.RecordedLimits(ctx, root, &c)
		if ok != tc.ok || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("%s: %v %v, want %v %q", tc.name, ok, err, tc.ok, tc.err)
		}
	}
}
