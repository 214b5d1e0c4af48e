package discover

import (
	"io"
	"io/fs"
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
