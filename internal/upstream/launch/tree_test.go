package launch_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// entry is one entry of a test tree: a file (with its content and mode)
// or, with link set, a symbolic link.
type entry struct {
	path    string
	content string
	mode    os.FileMode
	link    string
}

// baseTree is the tree the TreeDigest tests change one thing of.
var baseTree = []entry{
	{path: "package.json", content: `{"private":true}`, mode: 0o644},
	{path: "node_modules/echo/index.js", content: "console.log(1)\n", mode: 0o755},
	{path: "node_modules/echo/lib/a.js", content: "a", mode: 0o644},
	{path: "node_modules/echo/lib/b.js", content: "b", mode: 0o644},
	{path: "node_modules/.bin/echo", link: "../echo/index.js"},
}

// writeTree writes entries below a new directory, which it returns.
func writeTree(t *testing.T, entries []entry) string {
	t.Helper()
	dir := t.TempDir()
	for _, e := range entries {
		full := filepath.Join(dir, filepath.FromSlash(e.path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if e.link != "" {
			if err := os.Symlink(e.link, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(e.content), e.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, e.mode); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	return dir
}

// TestTreeDigestFormat pins the digest of a tree to an encoding computed
// here independently: for each entry in walk order, its kind (F a file,
// X an executable file, L a link), its path and size (and, for a link,
// its target), each length-prefixed big-endian, then a file's content. A
// change of it would make every approved tree drift.
func TestTreeDigestFormat(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, baseTree)
	h := sha256.New()
	put := func(kind byte, rel string, size int, target, content string) {
		var n [8]byte
		h.Write([]byte{kind})
		binary.BigEndian.PutUint64(n[:], uint64(len(rel)))
		h.Write(n[:])
		h.Write([]byte(rel))
		binary.BigEndian.PutUint64(n[:], uint64(size))
		h.Write(n[:])
		if kind == 'L' {
			binary.BigEndian.PutUint64(n[:], uint64(len(target)))
			h.Write(n[:])
			h.Write([]byte(target))
		}
		h.Write([]byte(content))
	}
	// Walk order: each directory's names sorted, ".bin" before "echo".
	put('L', "node_modules/.bin/echo", 0, "../echo/index.js", "")
	put('X', "node_modules/echo/index.js", 15, "", "console.log(1)\n")
	put('F', "node_modules/echo/lib/a.js", 1, "", "a")
	put('F', "node_modules/echo/lib/b.js", 1, "", "b")
	put('F', "package.json", 16, "", `{"private":true}`)
	want := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if got := treeOf(t, dir); got != want {
		t.Errorf("TreeDigest = %s, want %s", got, want)
	}
	// An empty tree is the digest of nothing.
	if got, want := treeOf(t, t.TempDir()), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Errorf("TreeDigest of an empty tree = %s, want %s", got, want)
	}
}

// TestTreeDigestChanges checks that the digest is the same for the same
// tree written anew, whatever its times, and changes with every change
// of a file's content, executable bit or name, or a link's target.
func TestTreeDigestChanges(t *testing.T) {
	t.Parallel()
	base := treeOf(t, writeTree(t, baseTree))
	cases := []struct {
		name   string
		change func(t *testing.T, dir string)
		same   bool
	}{
		{name: "written anew", change: func(*testing.T, string) {}, same: true},
		{name: "other times", same: true, change: func(t *testing.T, dir string) {
			old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := os.Chtimes(filepath.Join(dir, "package.json"), old, old); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "an empty directory added", same: true, change: func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a group read bit dropped", same: true, change: func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "package.json"), 0o604); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "content, same size", change: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "node_modules/echo/lib/a.js"), "A")
		}},
		{name: "content swapped between files", change: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "node_modules/echo/lib/a.js"), "b")
			writeFile(t, filepath.Join(dir, "node_modules/echo/lib/b.js"), "a")
		}},
		{name: "exec bit added", change: func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "node_modules/echo/lib/a.js"), 0o744); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "exec bit removed", change: func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "node_modules/echo/index.js"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file renamed", change: func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "node_modules/echo/lib/a.js"), filepath.Join(dir, "node_modules/echo/lib/c.js")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file moved to another directory", change: func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "node_modules/echo/lib/a.js"), filepath.Join(dir, "node_modules/echo/a.js")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file added", change: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "node_modules/echo/lib/c.js"), "")
		}},
		{name: "file removed", change: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "node_modules/echo/lib/b.js")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "link target", change: func(t *testing.T, dir string) {
			relink(t, filepath.Join(dir, "node_modules/.bin/echo"), "../echo/lib/a.js")
		}},
		{name: "link target spelt otherwise", change: func(t *testing.T, dir string) {
			relink(t, filepath.Join(dir, "node_modules/.bin/echo"), "../echo/./index.js")
		}},
		{name: "link replaced by its target's copy", change: func(t *testing.T, dir string) {
			link := filepath.Join(dir, "node_modules/.bin/echo")
			if err := os.Remove(link); err != nil {
				t.Fatal(err)
			}
			writeFile(t, link, "console.log(1)\n")
			if err := os.Chmod(link, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, baseTree)
			c.change(t, dir)
			got := treeOf(t, dir)
			if c.same && got != base {
				t.Errorf("digest %s, want the unchanged tree's %s", got, base)
			}
			if !c.same && got == base {
				t.Errorf("digest %s did not change", got)
			}
		})
	}
}

func writeFile(t *testing.T, file, content string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func relink(t *testing.T, link, target string) {
	t.Helper()
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestTreeDigestRefuses checks that a tree holding a link that leads out
// of it, or an entry that is neither a file nor a link, has no digest,
// and says why, word for word.
func TestTreeDigestRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		add  func(t *testing.T, dir string)
		err  string
	}{
		{name: "absolute link", err: "node_modules/.bin/evil links to the absolute path /etc/passwd, outside the fetched tree",
			add: func(t *testing.T, dir string) {
				mustSymlink(t, "/etc/passwd", filepath.Join(dir, "node_modules/.bin/evil"))
			}},
		{name: "link up and out", err: "node_modules/.bin/evil links to ../../../x, outside the fetched tree",
			add: func(t *testing.T, dir string) {
				mustSymlink(t, "../../../x", filepath.Join(dir, "node_modules/.bin/evil"))
			}},
		{name: "link out at the top", err: "evil links to .., outside the fetched tree",
			add: func(t *testing.T, dir string) { mustSymlink(t, "..", filepath.Join(dir, "evil")) }},
		{name: "link out through a subdirectory", err: "evil links to node_modules/../../x, outside the fetched tree",
			add: func(t *testing.T, dir string) { mustSymlink(t, "node_modules/../../x", filepath.Join(dir, "evil")) }},
		{name: "named pipe", err: "node_modules/echo/fifo is a named pipe, not a file or a link",
			add: func(t *testing.T, dir string) {
				mkfifo(t, filepath.Join(dir, "node_modules/echo/fifo"))
			}},
		{name: "socket", err: "s is a socket, not a file or a link",
			add: func(t *testing.T, dir string) {
				l, err := net.Listen("unix", filepath.Join(dir, "s"))
				if err != nil {
					t.Skip(err)
				}
				l.(*net.UnixListener).SetUnlinkOnClose(false)
				l.Close()
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, baseTree)
			c.add(t, dir)
			got, err := launch.TreeDigest(context.Background(), dir)
			if err == nil || err.Error() != c.err {
				t.Errorf("TreeDigest = %q, %v; want error %s", got, err, c.err)
			}
			// The Verifier says the same, as drift.
			var v launch.Verifier
			want := "fetched package changed: " + dir + ": " + c.err
			if err := v.Verify(context.Background(), dir, "sha256:x"); err == nil || err.Error() != want || !errors.Is(err, launch.ErrDrift) {
				t.Errorf("Verify = %v, want %s", err, want)
			}
		})
	}
	t.Run("links that stay inside", func(t *testing.T) {
		t.Parallel()
		dir := writeTree(t, baseTree)
		mustSymlink(t, "../../package.json", filepath.Join(dir, "node_modules/echo/pkg"))
		mustSymlink(t, "echo/lib/../../echo", filepath.Join(dir, "node_modules/self"))
		mustSymlink(t, "missing", filepath.Join(dir, "dangling"))
		if _, err := launch.TreeDigest(context.Background(), dir); err != nil {
			t.Error(err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := launch.TreeDigest(ctx, writeTree(t, baseTree)); !errors.Is(err, context.Canceled) {
			t.Errorf("TreeDigest with a cancelled context: %v", err)
		}
	})
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// agedTree is writeTree with every file's times set an hour back, so that
// a write now changes its modification time even where the file system's
// clock is coarser than the test.
func agedTree(t *testing.T) string {
	t.Helper()
	dir := writeTree(t, baseTree)
	old := time.Now().Add(-time.Hour)
	for _, e := range baseTree {
		if e.link == "" {
			if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(e.path)), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// cancelled is a context already cancelled: a Verify with it that hashes
// the tree fails with context.Canceled, one that does not hash succeeds.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestVerifier checks that Verify accepts an unchanged tree, hashing it
// only the first time, and that every change since (content of the same
// size, mode, a file added, the tree gone) is drift, word for word.
func TestVerifier(t *testing.T) {
	t.Parallel()
	t.Run("unchanged, hashed once", func(t *testing.T) {
		t.Parallel()
		dir := agedTree(t)
		want := treeOf(t, dir)
		var v launch.Verifier
		// Before a good hash, Verify hashes: a cancelled context fails it.
		if err := v.Verify(cancelled(), dir, want); !errors.Is(err, context.Canceled) || errors.Is(err, launch.ErrDrift) {
			t.Fatalf("first Verify with a cancelled context: %v, want context.Canceled", err)
		}
		if err := v.Verify(context.Background(), dir, want); err != nil {
			t.Fatal(err)
		}
		// Now it does not hash again: the cancelled context is never asked.
		for range 3 {
			if err := v.Verify(cancelled(), dir, want); err != nil {
				t.Fatalf("Verify of an unchanged tree hashed it again: %v", err)
			}
		}
		// Another Verifier knows nothing of it.
		var other launch.Verifier
		if err := other.Verify(cancelled(), dir, want); !errors.Is(err, context.Canceled) {
			t.Errorf("a new Verifier did not hash: %v", err)
		}
		// Another approved digest for the same tree is hashed, and drift.
		err := v.Verify(context.Background(), dir, "sha256:other")
		checkErr(t, err, "fetched package changed: "+dir+" hashes to "+want+", approved sha256:other", launch.ErrDrift)
		if err := v.Verify(cancelled(), dir, want); err != nil {
			t.Errorf("the failed check of another digest forgot the good one: %v", err)
		}
	})
	changes := []struct {
		name   string
		change func(t *testing.T, dir string)
		drift  bool
	}{
		{name: "a byte flipped, same size", drift: true, change: func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "node_modules/echo/index.js"), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("C"), 0); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a byte flipped, times set back", drift: true, change: func(t *testing.T, dir string) {
			file := filepath.Join(dir, "node_modules/echo/lib/a.js")
			st, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, file, "z")
			if err := os.Chtimes(file, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "exec bit", drift: true, change: func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "node_modules/echo/lib/a.js"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file added", drift: true, change: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "node_modules/echo/extra.js"), "")
		}},
		{name: "replaced by the same bytes", drift: false, change: func(t *testing.T, dir string) {
			file := filepath.Join(dir, "package.json")
			writeFile(t, file+".new", `{"private":true}`)
			if err := os.Rename(file+".new", file); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := agedTree(t)
			want := treeOf(t, dir)
			var v launch.Verifier
			if err := v.Verify(context.Background(), dir, want); err != nil {
				t.Fatal(err)
			}
			c.change(t, dir)
			got := treeOf(t, dir)
			// The change is noticed: Verify hashes again.
			if err := v.Verify(cancelled(), dir, want); !errors.Is(err, context.Canceled) {
				t.Errorf("Verify after the change did not hash: %v", err)
			}
			err := v.Verify(context.Background(), dir, want)
			if !c.drift {
				if err != nil {
					t.Errorf("Verify = %v, want nil", err)
				}
				return
			}
			checkErr(t, err, "fetched package changed: "+dir+" hashes to "+got+", approved "+want, launch.ErrDrift)
			// It stays drift.
			checkErr(t, v.Verify(context.Background(), dir, want), "fetched package changed: "+dir+" hashes to "+got+", approved "+want, launch.ErrDrift)
		})
	}
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		dir := agedTree(t)
		want := treeOf(t, dir)
		var v launch.Verifier
		if err := v.Verify(context.Background(), dir, want); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		checkErr(t, v.Verify(context.Background(), dir, want), "fetched package changed: "+dir+": the fetched tree is missing", launch.ErrDrift)
		var fresh launch.Verifier
		missing := filepath.Join(t.TempDir(), "never")
		checkErr(t, fresh.Verify(context.Background(), missing, want), "fetched package changed: "+missing+": the fetched tree is missing", launch.ErrDrift)
	})
	t.Run("concurrent", func(t *testing.T) {
		t.Parallel()
		dirs := []string{agedTree(t), agedTree(t)}
		wants := []string{treeOf(t, dirs[0]), treeOf(t, dirs[1])}
		var v launch.Verifier
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := v.Verify(context.Background(), dirs[i%2], wants[i%2]); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	})
}
