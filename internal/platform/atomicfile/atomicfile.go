// Package atomicfile writes files so that a crash at any moment leaves the
// old content or the new one, never a part of either: the data goes to a
// temporary file beside the target, is flushed to disk, then takes the
// target's name, and the directory holding the name is flushed too.
//
// It is skillgate's one crash-safe file writer: every file the program
// replaces in place (lock files, token files, credentials, install
// artefacts, signatures, caches) goes through it.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// tempPattern names the temporary file beside target: hidden, and named
// for the target so that a leftover after a crash says whose it was.
func tempPattern(target string) string {
	return "." + filepath.Base(target) + ".tmp-*"
}

// Write replaces path with data, mode perm: the old content or the new one
// survives a crash, never a mix. The temporary file is removed on failure.
func Write(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// WriteNew creates path with data, mode perm, and fails with an error
// matching fs.ErrExist when path already exists: the file appears whole or
// not at all, and an existing file is never replaced.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// writeTemp writes data to a new temporary file beside path, mode perm,
// flushed and closed, and returns its name.
func writeTemp(path string, data []byte, perm fs.FileMode) (name string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern(path))
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(perm); err != nil && runtime.GOOS != "windows" {
		f.Close()
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}

// SyncDir flushes the directory dir, so that a name created or renamed in
// it survives a crash. Systems that cannot flush a directory (Windows)
// are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) && runtime.GOOS != "windows" {
		return err
	}
	return nil
}
