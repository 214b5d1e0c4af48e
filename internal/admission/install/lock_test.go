package install

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestStorageLockExcludes checks that the storage lock really excludes: while
// one open of the lock file holds it (as another skillgate process would),
// a second open cannot take it, and can once it is released. It runs on
// every platform with its own lockFile (flock on Unix, LockFileEx on
// Windows).
func TestStorageLockExcludes(t *testing.T) {
	t.Parallel()
	s := Storage{Root: filepath.Join(t.TempDir(), "imported")}
	unlock, err := s.lock()
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.OpenFile(filepath.Join(s.Root, ".lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := lockFile(other, false); !errors.Is(err, errLocked) {
		t.Fatalf("second open while the lock is held: got %v, want errLocked", err)
	}
	unlock()
	if err := lockFile(other, false); err != nil {
		t.Fatalf("second open after release: %v", err)
	}
	if err := unlockFile(other); err != nil {
		t.Fatal(err)
	}
	unlock2, err := s.lock()
	if err != nil {
		t.Fatalf("lock after both released: %v", err)
	}
	unlock2()
}
