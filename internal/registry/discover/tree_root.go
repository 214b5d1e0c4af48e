package discover

import (
	"io/fs"
	"os"
)

// rootTree is the portable TreeFS: os.Root keeps reads inside the
// directory (links that stay inside are followed).
type rootTree struct {
	fs.FS
	root *os.Root
}

func openRootTree(dir string) (TreeFS, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &rootTree{FS: r.FS(), root: r}, nil
}

func (t *rootTree) Close() error { return t.root.Close() }
