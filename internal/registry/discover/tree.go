package discover

import (
	"context"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// TreeFS is a read-only view of one skill directory that never resolves a
// symbolic link, at any depth: what a walk listed is what is read, even if
// the tree is changed into a trap in between. Close releases it.
type TreeFS interface {
	fs.FS
	io.Closer
}

// OpenTree opens dir as a [TreeFS].
func OpenTree(dir string) (TreeFS, error) { return openTree(dir) }

// Trees opens the skill trees found under one root. On Linux the root is
// opened once and each tree is a view of it (no system call per skill);
// reads are still refused if any component of the path is a link, so a
// tree's reads cannot leave it. Close releases the root.
type Trees struct {
	root string
	impl treesImpl
}

// OpenTrees prepares to open the skill trees under root, a clean absolute
// path. It never fails: when the root cannot be opened, each tree is
// opened on its own (and reports the problem).
func OpenTrees(root string) *Trees { return &Trees{root: root, impl: openTrees(root)} }

// Open opens the skill directory dir as a [TreeFS].
func (t *Trees) Open(dir string) (TreeFS, error) {
	if rel, ok := under(t.root, dir); ok {
		if tree, ok := t.impl.tree(dir, rel); ok {
			return tree, nil
		}
	}
	return openTree(dir)
}

// Close releases the root.
func (t *Trees) Close() error { return t.impl.close() }

// under returns dir relative to root when dir is strictly below it and its
// relative path is clean (no ".", ".." or empty element).
func under(root, dir string) (string, bool) {
	prefix := root
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if !strings.HasPrefix(dir, prefix) {
		return "", false
	}
	rel := dir[len(prefix):]
	if !fs.ValidPath(rel) || rel == "." {
		return "", false
	}
	return rel, true
}

// TreeDigest is the content digest of the skill tree in dir as a scan
// computes it (skill.Digest over the files a scan lists: dot files,
// node_modules and nested skills left out), listing without following
// links and reading through [OpenTree].
func TreeDigest(ctx context.Context, dir string) (string, error) {
	files, err := skill.ListFiles(ctx, os.DirFS(dir), skill.DefaultTreeLimits)
	if err != nil {
		return "", err
	}
	tree, err := OpenTree(dir)
	if err != nil {
		return "", err
	}
	defer tree.Close()
	return skill.DigestWith(ctx, tree, files, "", nil)
}
