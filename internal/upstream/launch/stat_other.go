//go:build !linux

package launch

import (
	"os"
	"path/filepath"
)

// statAt reads the metadata of name in the directory dir without
// following a link.
func statAt(_ *os.File, dir, name string) (entryMeta, error) {
	info, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		return entryMeta{}, err
	}
	return entryMeta{size: uint64(info.Size()), mode: uint64(info.Mode()), mtime: uint64(info.ModTime().UnixNano())}, nil
}
