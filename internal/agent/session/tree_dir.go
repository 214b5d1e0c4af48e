package session

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// The fast path of reading many files of a skill tree (grep over loaded
// skills, listings): the directory of a file is opened once, as an os.Root
// inside the skill directory's root, and each file of it is then one
// lookup in it instead of one per path segment (os.Root resolves "a/b/c"
// by opening a, then b). The rules are those of [tree.Get] and [tree.List]:
// os.Root follows a symbolic link only while it stays inside the skill
// directory, so a directory swapped for a link that leaves it is not
// found, and the same checks run on each file. TestTreeDirDifferential
// compares every outcome with the plain path.

// dirWalker looks up recorded files one directory at a time, keeping the
// directory of the last file open: sorted keys bring a directory's files
// together.
type dirWalker struct {
	t    *tree
	root *os.Root // the skill directory
	dir  string   // the directory sub was opened for ("" is root itself)
	sub  *os.Root
	err  error // the error opening dir: its files are looked up from root
	open bool  // dir, sub and err are set
}

// at returns the directory root a key's file is in, and its name there.
func (w *dirWalker) at(key string) (*os.Root, string) {
	dir, name := "", key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		dir, name = key[:i], key[i+1:]
	}
	if !w.open || dir != w.dir {
		w.close()
		w.dir, w.open = dir, true
		if dir == "" {
			w.sub = w.root
		} else {
			w.sub, w.err = w.root.OpenRoot(dir)
		}
	}
	if w.err != nil {
		// The directory did not open (gone, not a directory, a link out
		// of the skill…): the plain lookup from the skill directory gives
		// the file's outcome and its error, exactly as Get would.
		return w.root, key
	}
	return w.sub, name
}

func (w *dirWalker) lstat(key string) (fs.FileInfo, error) {
	r, name := w.at(key)
	return w.t.lstatIn(r, key, name)
}

// close releases the directory root (not the skill directory's).
func (w *dirWalker) close() {
	if w.sub != nil && w.sub != w.root {
		w.sub.Close()
	}
	w.sub, w.err, w.open = nil, nil, false
}

// OpenDir implements [blob.DirOpener].
func (t *tree) OpenDir(ctx context.Context, prefix string) (blob.DirHandle, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := blob.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	root, err := t.open()
	if err != nil {
		return nil, err
	}
	return &treeDir{t: t, prefix: prefix, w: dirWalker{t: t, root: root}}, nil
}

// treeDir is a [blob.DirHandle] on one directory of a tree.
type treeDir struct {
	t      *tree
	prefix string
	w      dirWalker
}

// Get implements [blob.DirHandle].
func (d *treeDir) Get(ctx context.Context, name string) (io.ReadCloser, blob.Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, blob.Info{}, err
	}
	key := d.prefix + name
	if strings.IndexByte(name, '/') >= 0 {
		return nil, blob.Info{}, fmt.Errorf("%w: %q: a name, not a path, is wanted", blob.ErrInvalidKey, name)
	}
	if err := d.t.check(key); err != nil {
		return nil, blob.Info{}, err
	}
	r, n := d.w.at(key)
	return d.t.getIn(r, key, n)
}

// Close implements [blob.DirHandle].
func (d *treeDir) Close() error {
	d.w.close()
	return d.w.root.Close()
}
