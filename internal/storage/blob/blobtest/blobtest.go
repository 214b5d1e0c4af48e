// Package blobtest is the conformance suite every [blob.Store] must pass, in
// the manner of golang.org/x/net/nettest.TestConn: one suite, run unchanged
// against the local and the S3 implementation.
//
//	func TestConformance(t *testing.T) {
//		blobtest.TestStore(t, func(t testing.TB) blob.Store {
//			st, err := local.Open(t.TempDir(), &local.Options{MaxObjectSize: blobtest.MaxObjectSize})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { st.Close() })
//			return st
//		})
//	}
package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/bucket"
)

// MaxObjectSize is the maximum object size the stores under test must be
// configured with, so that the suite can check ErrTooLarge cheaply.
const MaxObjectSize = 1 << 20

// TestStore runs the conformance suite. newStore must return a new, empty
// store (a fresh directory, or a fresh prefix in a bucket) whose maximum
// object size is [MaxObjectSize]; it is called once per subtest and the
// subtests run in parallel.
func TestStore(t *testing.T, newStore func(t testing.TB) blob.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s blob.Store)
	}{
		{"InvalidKeys", testInvalidKeys},
		{"RoundTrip", testRoundTrip},
		{"NotFound", testNotFound},
		{"Overwrite", testOverwrite},
		{"SizeMismatch", testSizeMismatch},
		{"TooLarge", testTooLarge},
		{"List", testList},
		{"ListLimit", testListLimit},
		{"ListDir", testListDir},
		{"Delete", testDelete},
		{"Unicode", testUnicode},
		{"Layout", testLayout},
		{"Canceled", testCanceled},
		{"ConcurrentReadWrite", testConcurrent},
		{"DirOpener", testDirOpener},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

func put(t testing.TB, s blob.Store, key, content string) {
	t.Helper()
	if err := s.Put(context.Background(), key, strings.NewReader(content), int64(len(content))); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func get(t testing.TB, s blob.Store, key string) string {
	t.Helper()
	b, _, err := blob.ReadAll(context.Background(), s, key, 0)
	if err != nil {
		t.Fatalf("ReadAll(%q): %v", key, err)
	}
	return string(b)
}

func keys(infos []blob.Info) []string {
	out := make([]string, len(infos))
	for i, in := range infos {
		out[i] = in.Key
	}
	return out
}

func testInvalidKeys(t *testing.T, s blob.Store) {
	ctx := context.Background()
	bad := []string{
		"", "/abs", "a/", "a//b", "./a", "a/./b", "..", "../x", "a/../b", "a/..",
		"a\\b", "a\x00b", "a\nb", "a\x7fb", "\xff\xfe", strings.Repeat("x", blob.MaxKeyLen+1),
		strings.Repeat("y", blob.MaxSegmentLen+1),
	}
	for _, k := range bad {
		if _, err := s.Stat(ctx, k); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Stat(%q) = %v, want ErrInvalidKey", k, err)
		}
		if _, _, err := s.Get(ctx, k); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", k, err)
		}
		if err := s.Put(ctx, k, strings.NewReader("x"), 1); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", k, err)
		}
		if err := s.Delete(ctx, k); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
	for _, p := range []string{"a", "/a/", "a//", "../", "a/../b/", "a\\b/"} {
		if _, err := s.List(ctx, p, 0); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("List(%q) = %v, want ErrInvalidKey", p, err)
		}
		if _, err := blob.ListDir(ctx, s, p, 0); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("ListDir(%q) = %v, want ErrInvalidKey", p, err)
		}
	}
	all, err := s.List(ctx, "", 0)
	if err != nil || len(all) != 0 {
		t.Errorf("after refused writes List = %v, %v; want empty", keys(all), err)
	}
}

func testRoundTrip(t *testing.T, s blob.Store) {
	ctx := context.Background()
	cases := map[string]string{
		"a.txt":          "hello\n",
		"empty":          "",
		"dir/sub/x.md":   "# x\n",
		"bin/blob.bin":   "\x00\x01\x02\xff",
		"spaces in/n m":  "spaces",
		"dots/a..b/.env": "dots are fine inside names",
	}
	for k, v := range cases {
		put(t, s, k, v)
	}
	for k, v := range cases {
		if got := get(t, s, k); got != v {
			t.Errorf("Get(%q) = %q, want %q", k, got, v)
		}
		info, err := s.Stat(ctx, k)
		if err != nil {
			t.Fatalf("Stat(%q): %v", k, err)
		}
		if info.Key != k || info.Size != int64(len(v)) || info.ModTime.IsZero() {
			t.Errorf("Stat(%q) = %+v, want key %q size %d and a mod time", k, info, k, len(v))
		}
		rc, info2, err := s.Get(ctx, k)
		if err != nil {
			t.Fatalf("Get(%q): %v", k, err)
		}
		rc.Close()
		if info2.Key != k || info2.Size != int64(len(v)) {
			t.Errorf("Get(%q) info = %+v", k, info2)
		}
	}
}

func testNotFound(t *testing.T, s blob.Store) {
	ctx := context.Background()
	put(t, s, "d/e/f.txt", "x")
	for _, k := range []string{"missing", "d", "d/e", "d/e/f.txt/g", "d/e/f.tx", "D/e/f.txt"} {
		if _, err := s.Stat(ctx, k); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want ErrNotFound", k, err)
		}
		if _, _, err := s.Get(ctx, k); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", k, err)
		}
	}
	got, err := s.List(ctx, "nothing/here/", 0)
	if err != nil || len(got) != 0 {
		t.Errorf("List(missing prefix) = %v, %v; want empty, nil", keys(got), err)
	}
	d, err := blob.ListDir(ctx, s, "nothing/", 0)
	if err != nil || len(d.Files)+len(d.Dirs) != 0 {
		t.Errorf("ListDir(missing prefix) = %+v, %v; want empty, nil", d, err)
	}
}

func testOverwrite(t *testing.T, s blob.Store) {
	put(t, s, "k", "first version, longer")
	put(t, s, "k", "second")
	if got := get(t, s, "k"); got != "second" {
		t.Errorf("after overwrite Get = %q, want %q", got, "second")
	}
	put(t, s, "k", "")
	if got := get(t, s, "k"); got != "" {
		t.Errorf("after overwrite with empty Get = %q", got)
	}
}

func testSizeMismatch(t *testing.T, s blob.Store) {
	ctx := context.Background()
	for _, tc := range []struct {
		content string
		size    int64
	}{{"short", 10}, {"longer than declared", 3}, {"x", -1}} {
		err := s.Put(ctx, "m", strings.NewReader(tc.content), tc.size)
		if !errors.Is(err, blob.ErrSizeMismatch) {
			t.Errorf("Put(%q, size %d) = %v, want ErrSizeMismatch", tc.content, tc.size, err)
		}
	}
	if _, err := s.Stat(ctx, "m"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("after refused puts Stat = %v, want ErrNotFound", err)
	}
}

func testTooLarge(t *testing.T, s blob.Store) {
	ctx := context.Background()
	big := bytes.Repeat([]byte("a"), MaxObjectSize+1)
	if err := s.Put(ctx, "big", bytes.NewReader(big), int64(len(big))); !errors.Is(err, blob.ErrTooLarge) {
		t.Errorf("Put(max+1) = %v, want ErrTooLarge", err)
	}
	ok := big[:MaxObjectSize]
	if err := s.Put(ctx, "max", bytes.NewReader(ok), int64(len(ok))); err != nil {
		t.Fatalf("Put(max): %v", err)
	}
	if b, _, err := blob.ReadAll(ctx, s, "max", 0); err != nil || len(b) != MaxObjectSize {
		t.Errorf("ReadAll(max) = %d bytes, %v", len(b), err)
	}
	if _, info, err := blob.ReadAll(ctx, s, "max", 1000); !errors.Is(err, blob.ErrTooLarge) || info.Size != MaxObjectSize {
		t.Errorf("ReadAll(max, limit 1000) = %+v, %v; want size and ErrTooLarge", info, err)
	}
}

func testList(t *testing.T, s blob.Store) {
	ctx := context.Background()
	for _, k := range []string{"a/b/c", "a/b-c", "a/b/d", "a-b", "ab/x", "a/z", "top"} {
		put(t, s, k, k)
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"a-b", "a/b-c", "a/b/c", "a/b/d", "a/z", "ab/x", "top"}},
		{"a/", []string{"a/b-c", "a/b/c", "a/b/d", "a/z"}},
		{"a/b/", []string{"a/b/c", "a/b/d"}},
		{"ab/", []string{"ab/x"}},
		{"top/", nil},
		{"a/b/c/", nil},
	}
	for _, tc := range tests {
		got, err := s.List(ctx, tc.prefix, 0)
		if err != nil {
			t.Fatalf("List(%q): %v", tc.prefix, err)
		}
		if !slices.Equal(keys(got), tc.want) {
			t.Errorf("List(%q) = %q, want %q", tc.prefix, keys(got), tc.want)
		}
		for _, in := range got {
			if in.Size != int64(len(in.Key)) {
				t.Errorf("List(%q): %q size %d, want %d", tc.prefix, in.Key, in.Size, len(in.Key))
			}
		}
	}
}

func testListLimit(t *testing.T, s blob.Store) {
	ctx := context.Background()
	var all []string
	for i := range 25 {
		k := fmt.Sprintf("p/%02d/f", i)
		put(t, s, k, "x")
		all = append(all, k)
	}
	for _, limit := range []int{1, 7, 25, 26} {
		got, err := s.List(ctx, "p/", limit)
		if err != nil {
			t.Fatalf("List(limit %d): %v", limit, err)
		}
		want := all[:min(limit, len(all))]
		if !slices.Equal(keys(got), want) {
			t.Errorf("List(limit %d) = %q, want %q", limit, keys(got), want)
		}
	}
}

func testListDir(t *testing.T, s blob.Store) {
	ctx := context.Background()
	for _, k := range []string{"r/SKILL.md", "r/resources/a.pdf", "r/resources/b.md", "r/z/deep/er", "r/b-file", "r/b/x"} {
		put(t, s, k, "x")
	}
	d, err := blob.ListDir(ctx, s, "r/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(d.Files), []string{"r/SKILL.md", "r/b-file"}; !slices.Equal(got, want) {
		t.Errorf("ListDir files = %q, want %q", got, want)
	}
	if want := []string{"b", "resources", "z"}; !slices.Equal(d.Dirs, want) {
		t.Errorf("ListDir dirs = %q, want %q", d.Dirs, want)
	}
	d, err = blob.ListDir(ctx, s, "", 0)
	if err != nil || len(d.Files) != 0 || !slices.Equal(d.Dirs, []string{"r"}) {
		t.Errorf("ListDir(root) = %+v, %v", d, err)
	}
	d, err = blob.ListDir(ctx, s, "r/", 2)
	if err != nil || len(d.Files)+len(d.Dirs) != 2 {
		t.Errorf("ListDir(limit 2) = %+v, %v; want 2 entries", d, err)
	}
}

func testDelete(t *testing.T, s blob.Store) {
	ctx := context.Background()
	put(t, s, "x/y/z", "1")
	put(t, s, "x/keep", "2")
	if err := s.Delete(ctx, "x/y/z"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "x/y/z"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat after Delete = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "x/y/z"); err != nil {
		t.Errorf("second Delete = %v, want nil", err)
	}
	if err := s.Delete(ctx, "never/existed"); err != nil {
		t.Errorf("Delete(missing) = %v, want nil", err)
	}
	got, err := s.List(ctx, "", 0)
	if err != nil || !slices.Equal(keys(got), []string{"x/keep"}) {
		t.Errorf("List after Delete = %q, %v", keys(got), err)
	}
	d, err := blob.ListDir(ctx, s, "x/", 0)
	if err != nil || len(d.Dirs) != 0 {
		t.Errorf("ListDir after Delete = %+v, %v; want no directories left", d, err)
	}
	// The key can be reused.
	put(t, s, "x/y/z", "3")
	if got := get(t, s, "x/y/z"); got != "3" {
		t.Errorf("Get after re-Put = %q", got)
	}
}

func testUnicode(t *testing.T, s blob.Store) {
	for _, k := range []string{"escrituras/compraventa/cláusulas.md", "日本/語.txt", "emoji/🙂.md"} {
		put(t, s, k, k)
		if got := get(t, s, k); got != k {
			t.Errorf("Get(%q) = %q", k, got)
		}
	}
	got, err := s.List(context.Background(), "日本/", 0)
	if err != nil || !slices.Equal(keys(got), []string{"日本/語.txt"}) {
		t.Errorf("List(unicode prefix) = %q, %v", keys(got), err)
	}
}

func testLayout(t *testing.T, s blob.Store) {
	ctx := context.Background()
	cv, err := bucket.SkillPrefix("acme", "escrituras", "compraventa")
	if err != nil {
		t.Fatal(err)
	}
	other, err := bucket.SkillPrefix("acme", "contratos", "compraventa")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := bucket.SkillPrefix("acme", "", "hipoteca")
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, cv+"SKILL.md", "cv")
	put(t, s, other+"SKILL.md", "other")
	put(t, s, plain+"SKILL.md", "plain")
	got, err := s.List(ctx, cv, 0)
	if err != nil || !slices.Equal(keys(got), []string{"acme/skills/escrituras/compraventa/SKILL.md"}) {
		t.Errorf("List(%q) = %q, %v", cv, keys(got), err)
	}
	all, err := bucket.TenantSkillsPrefix("acme")
	if err != nil {
		t.Fatal(err)
	}
	got, err = s.List(ctx, all, 0)
	if err != nil || len(got) != 3 {
		t.Errorf("List(%q) = %q, %v; want 3 skills", all, keys(got), err)
	}
}

func testCanceled(t *testing.T, s blob.Store) {
	put(t, s, "c", "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Stat(ctx, "c"); !errors.Is(err, context.Canceled) {
		t.Errorf("Stat(canceled) = %v, want context.Canceled", err)
	}
	if _, _, err := s.Get(ctx, "c"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get(canceled) = %v, want context.Canceled", err)
	}
	if _, err := s.List(ctx, "", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("List(canceled) = %v, want context.Canceled", err)
	}
	if err := s.Put(ctx, "c", strings.NewReader("y"), 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Put(canceled) = %v, want context.Canceled", err)
	}
	if got := get(t, s, "c"); got != "x" {
		t.Errorf("canceled Put changed the object to %q", got)
	}
}

// testConcurrent checks atomic replacement: readers racing a writer that
// alternates two contents always see one of them in full.
func testConcurrent(t *testing.T, s blob.Store) {
	ctx := context.Background()
	a := strings.Repeat("A", 64<<10)
	b := strings.Repeat("B", 32<<10)
	put(t, s, "hot", a)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20 {
			v := a
			if i%2 == 0 {
				v = b
			}
			if err := s.Put(ctx, "hot", strings.NewReader(v), int64(len(v))); err != nil {
				errs <- err
				return
			}
		}
	}()
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				got, _, err := blob.ReadAll(ctx, s, "hot", 0)
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", r, err)
					return
				}
				if string(got) != a && string(got) != b {
					errs <- fmt.Errorf("reader %d saw a torn object of %d bytes", r, len(got))
					return
				}
			}
		}()
	}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := fmt.Sprintf("par/%d", i)
			if err := s.Put(ctx, k, strings.NewReader(k), int64(len(k))); err != nil {
				errs <- err
				return
			}
			got, _, err := blob.ReadAll(ctx, s, k, 0)
			if err != nil || string(got) != k {
				errs <- fmt.Errorf("Get(%q) = %q, %v", k, got, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.List(ctx, "par/", 0)
	if err != nil || len(got) != 8 {
		t.Errorf("List(par/) = %q, %v; want 8", keys(got), err)
	}
}

// testDirOpener checks the optional DirOpener extension against Get.
func testDirOpener(t *testing.T, s blob.Store) {
	opener, ok := s.(blob.DirOpener)
	if !ok {
		t.Skip("store does not implement blob.DirOpener")
	}
	ctx := context.Background()
	put(t, s, "d/one.md", "one")
	put(t, s, "d/two.md", "two!")
	put(t, s, "d/sub/x", "x")
	h, err := opener.OpenDir(ctx, "d/")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for name, want := range map[string]string{"one.md": "one", "two.md": "two!"} {
		rc, info, err := h.Get(ctx, name)
		if err != nil {
			t.Fatalf("Get(%q): %v", name, err)
		}
		got, _, err := blob.ReadBody(rc, info, 0, nil)
		if err != nil || string(got) != want || info.Key != "d/"+name || info.Size != int64(len(want)) {
			t.Errorf("Get(%q) = %q, %+v, %v", name, got, info, err)
		}
	}
	for _, name := range []string{"missing", "sub"} {
		if _, _, err := h.Get(ctx, name); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", name, err)
		}
	}
	for _, name := range []string{"sub/x", "..", "", "a\\b"} {
		if _, _, err := h.Get(ctx, name); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", name, err)
		}
	}
	if _, err := opener.OpenDir(ctx, "d"); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("OpenDir(no slash) = %v, want ErrInvalidKey", err)
	}
}
