//go:build unix

package session

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// TestTreeDirDifferential compares the one-directory-at-a-time fast path
// (OpenDir's handles, List, ListDir) with the plain path (Get, and a List
// made of one lstat per key from the skill directory's root) on a tree with
// the cases that matter: nested directories, a file and a directory swapped
// for symbolic links inside and outside the skill, a hard link, a removed
// file and directory, a FIFO, and keys that were never recorded.
func TestTreeDirDifferential(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recorded := []string{
		"SKILL.md", "a.md", "references/r1.md", "references/r2.md", "references/deep/d.md",
		"scripts/run.sh", "swapped/file.md", "escaped/file.md", "inlink/file.md", "linkfile.md",
		"hard.md", "removed.md", "gone/x.md", "fifo", "notadir/x.md",
	}
	for _, k := range recorded {
		write(k, "content of "+k+"\n")
	}
	os.WriteFile(filepath.Join(outside, "file.md"), []byte("outside\n"), 0o644)
	// swapped/ becomes a link to references/ (inside), escaped/ one to outside.
	os.RemoveAll(filepath.Join(dir, "swapped"))
	os.MkdirAll(filepath.Join(dir, "references", "file.md"), 0o755) // so swapped/file.md is a directory there
	os.Symlink("references", filepath.Join(dir, "swapped"))
	os.RemoveAll(filepath.Join(dir, "escaped"))
	os.Symlink(outside, filepath.Join(dir, "escaped"))
	os.RemoveAll(filepath.Join(dir, "inlink"))
	os.MkdirAll(filepath.Join(dir, "real"), 0o755)
	write("real/file.md", "real\n")
	os.Symlink("real", filepath.Join(dir, "inlink")) // a directory link inside the skill: followed
	os.Remove(filepath.Join(dir, "linkfile.md"))
	os.Symlink("a.md", filepath.Join(dir, "linkfile.md"))
	os.Link(filepath.Join(dir, "a.md"), filepath.Join(dir, "hard-second.md"))
	os.Remove(filepath.Join(dir, "hard.md"))
	os.Link(filepath.Join(dir, "SKILL.md"), filepath.Join(dir, "hard.md"))
	os.Remove(filepath.Join(dir, "removed.md"))
	os.RemoveAll(filepath.Join(dir, "gone"))
	os.Remove(filepath.Join(dir, "fifo"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Logf("no FIFO: %v", err)
	}
	os.RemoveAll(filepath.Join(dir, "notadir"))
	write("notadir", "a file where a directory was\n")

	var files []map[string]any
	for _, k := range recorded {
		files = append(files, map[string]any{"path": k, "size": 1})
	}
	filesJSON, _ := json.Marshal(files)
	ctx := context.Background()
	for _, hard := range []bool{false, true} {
		tr, err := newTree(dir, filesJSON)
		if err != nil {
			t.Fatal(err)
		}
		tr.allowHardLinks = hard
		keys := append(slices.Clone(recorded), "unrecorded.md", "references/unrecorded.md", "hard-second.md")
		for _, key := range keys {
			want, wantErr := readAll(tr.Get(ctx, key))
			prefix, name := "", key
			if i := strings.LastIndexByte(key, '/'); i >= 0 {
				prefix, name = key[:i+1], key[i+1:]
			}
			h, err := tr.OpenDir(ctx, prefix)
			if err != nil {
				t.Fatalf("OpenDir(%q): %v", prefix, err)
			}
			got, gotErr := readAll(h.Get(ctx, name))
			h.Close()
			if got != want || errText(gotErr) != errText(wantErr) || errors.Is(gotErr, blob.ErrNotFound) != errors.Is(wantErr, blob.ErrNotFound) {
				t.Errorf("hard links %v, %s: handle (%q, %v), Get (%q, %v)", hard, key, got, gotErr, want, wantErr)
			}
		}
		// List: the fast walker against one lstat per key from the root.
		for _, prefix := range []string{"", "references/", "swapped/", "escaped/", "inlink/", "gone/"} {
			got, err := tr.List(ctx, prefix, 0)
			if err != nil {
				t.Fatalf("List(%q): %v", prefix, err)
			}
			want := plainList(t, tr, prefix)
			if !slices.EqualFunc(got, want, func(a, b blob.Info) bool { return a.Key == b.Key && a.Size == b.Size && a.ModTime.Equal(b.ModTime) }) {
				t.Errorf("hard links %v, List(%q) = %v, plain %v", hard, prefix, keysOf(got), keysOf(want))
			}
			d, err := tr.ListDir(ctx, prefix, 0)
			if err != nil {
				t.Fatalf("ListDir(%q): %v", prefix, err)
			}
			var direct []blob.Info
			for _, fi := range want {
				if !strings.Contains(fi.Key[len(prefix):], "/") {
					direct = append(direct, fi)
				}
			}
			if !slices.EqualFunc(d.Files, direct, func(a, b blob.Info) bool { return a.Key == b.Key && a.Size == b.Size }) {
				t.Errorf("hard links %v, ListDir(%q) files = %v, plain %v", hard, prefix, keysOf(d.Files), keysOf(direct))
			}
		}
	}
	// A name with a slash is refused by a handle.
	tr, _ := newTree(dir, filesJSON)
	h, _ := tr.OpenDir(ctx, "")
	defer h.Close()
	if _, _, err := h.Get(ctx, "references/r1.md"); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("handle Get of a path = %v, want ErrInvalidKey", err)
	}
}

func plainList(t *testing.T, tr *tree, prefix string) []blob.Info {
	t.Helper()
	root, err := tr.open()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var out []blob.Info
	for _, k := range tr.keys {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		fi, err := tr.lstat(root, k)
		if errors.Is(err, blob.ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, blob.Info{Key: k, Size: fi.Size(), ModTime: fi.ModTime()})
	}
	return out
}

func keysOf(l []blob.Info) []string {
	var out []string
	for _, i := range l {
		out = append(out, i.Key)
	}
	return out
}

func readAll(rc io.ReadCloser, _ blob.Info, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
