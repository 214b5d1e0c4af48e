package install

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/platform/atomicfile"
	"github.com/skillgate/skillgate/internal/platform/flock"
)

// Storage is the managed directory of imported skills, under the data
// directory. Each version lives in its own content-addressed directory
// named after its digest:
//
//	imported/sha256-<hex>/skill/...            the skill tree as installed
//	imported/sha256-<hex>/manifest.proposed.json
//	imported/sha256-<hex>/manifest.json        once approved
//	imported/sha256-<hex>/install_report.json
//
// Trees are written into imported/.tmp-* and renamed into place; files are
// written to a temporary name, synced and renamed. A process-wide lock file
// (imported/.lock) serialises changes between skillgate processes.
type Storage struct {
	Root string
}

// SkillDir is the name of the skill tree inside a version directory.
const SkillDir = "skill"

const tmpPrefix = ".tmp-"

// VersionDir returns the directory of the version with the given digest.
func (s Storage) VersionDir(digest string) string {
	return filepath.Join(s.Root, strings.Replace(digest, ":", "-", 1))
}

// lock takes the storage lock, creating the directory if needed. It blocks
// while another skillgate process holds it.
func (s Storage) lock() (func(), error) {
	if err := os.MkdirAll(s.Root, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	f, err := os.OpenFile(filepath.Join(s.Root, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	if err := lockFile(f, true); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: lock %s: %w", ErrStorage, f.Name(), err)
	}
	return func() {
		_ = unlockFile(f) // closing the file releases the lock too
		f.Close()
	}, nil
}

// errLocked is lockFile's answer, when told not to wait, while another open
// file holds the lock.
var errLocked = flock.ErrLocked

// lockFile takes an exclusive lock on f (see package flock), waiting for
// it when wait is set.
func lockFile(f *os.File, wait bool) error { return flock.Lock(f, wait) }

// unlockFile releases the lock lockFile took.
func unlockFile(f *os.File) error { return flock.Unlock(f) }

// writeTree writes t into a temporary directory, syncs every file, moves
// in the packages fetched into staging (when not empty), and renames it to
// the version directory. An existing version directory is replaced.
func (s Storage) writeTree(t *Tree, digest, staging string, crash func(string)) (string, error) {
	if err := os.MkdirAll(s.Root, 0o700); err != nil {
		return "", fmt.Errorf("%w: %w", ErrStorage, err)
	}
	tmp, err := os.MkdirTemp(s.Root, tmpPrefix)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrStorage, err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	paths := make([]string, 0, len(t.Files))
	for p := range t.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for i, p := range paths {
		dst := filepath.Join(tmp, SkillDir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return "", fmt.Errorf("%w: %w", ErrStorage, err)
		}
		if err := writeSync(dst, t.Files[p]); err != nil {
			return "", err
		}
		if i == len(paths)/2 {
			crash("copy-midway")
		}
	}
	if err := syncDir(filepath.Join(tmp, SkillDir)); err != nil {
		return "", err
	}
	if staging != "" {
		if err := os.Rename(filepath.Join(staging, PackagesDir), filepath.Join(tmp, PackagesDir)); err != nil {
			return "", fmt.Errorf("%w: %w", ErrStorage, err)
		}
	}
	dir := s.VersionDir(digest)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("%w: %w", ErrStorage, err)
	}
	crash("copy-before-rename")
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("%w: %w", ErrStorage, err)
	}
	if err := syncDir(s.Root); err != nil {
		return "", err
	}
	ok = true
	return dir, nil
}

// writeFileAtomic writes data to path crash-safely (atomicfile.Write), so
// a reader sees the old content or the new, never a part.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrStorage, path, err)
	}
	return nil
}

func writeSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrStorage, path, err)
	}
	return nil
}

func syncDir(dir string) error {
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("%w: sync %s: %w", ErrStorage, dir, err)
	}
	return nil
}
