package discover

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// verifyWorkers stat a state's records in parallel: the stats are bound by
// the kernel's path lookups, which overlap well even on two cores.
const verifyWorkers = 4

// verifyStats reports whether every directory and file the stat section
// of a state records under the root abs is unchanged; an error says the
// section is malformed. The root is opened without following a link, and
// each path is stat'ed relative to it without following a link at its
// end, as a walk stats what it lists; a directory on the way that was
// replaced by a link changed its parent, whose own record then differs.
// Nothing is opened or read below the root.
func verifyStats(ctx context.Context, abs string, stats string) (bool, error) {
	blocks, err := statBlocks(stats)
	if err != nil {
		return false, err
	}
	rootfd, err := openRoot(abs)
	if err != nil {
		return false, nil
	}
	defer unix.Close(rootfd)
	var failed atomic.Bool
	var firstErr atomic.Pointer[error]
	var next atomic.Int64
	work := func() {
		v := statVerifier{dirfd: rootfd}
		for !failed.Load() && ctx.Err() == nil {
			i := int(next.Add(1)) - 1
			if i >= len(blocks) {
				return
			}
			if ok, err := v.block(blocks[i]); !ok {
				if err != nil {
					firstErr.CompareAndSwap(nil, &err)
				}
				failed.Store(true)
				return
			}
		}
	}
	workers := min(verifyWorkers, len(blocks))
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	if p := firstErr.Load(); p != nil {
		return false, *p
	}
	return !failed.Load() && ctx.Err() == nil, nil
}

// statVerifier checks the records of a state's blocks.
type statVerifier struct {
	dirfd int
	br    blockReader
	path  []byte // the path being stat'ed, NUL-terminated while it is
	dir   int    // length of the directory's prefix of path ("" in the root)
	stx   unix.Statx_t
}

// block checks one block's records: false when one differs, or (with the
// error) is malformed.
func (v *statVerifier) block(b string) (bool, error) {
	v.br.reset(b)
	var rec statRecord
	for {
		ok, err := v.br.next(&rec)
		if !ok {
			return err == nil, err
		}
		if rec.dir {
			rel := v.br.rel
			v.path = append(v.path[:0], rel...)
			if !v.stat() || v.stx.Mode&unix.S_IFMT != unix.S_IFDIR ||
				nanos(v.stx.Mtime) != rec.mtime || nanos(v.stx.Ctime) != rec.ctime {
				return false, nil
			}
			// The directory's files are stat'ed as "rel/name", or "name"
			// in the root.
			if len(rel) == 1 && rel[0] == '.' {
				v.path = v.path[:0]
			} else {
				v.path = append(v.path, '/')
			}
			v.dir = len(v.path)
			continue
		}
		v.path = append(v.path[:v.dir], rec.name...)
		if !v.stat() || v.stx.Mode&unix.S_IFMT != unix.S_IFREG || int64(v.stx.Size) != rec.size ||
			nanos(v.stx.Mtime) != rec.mtime || nanos(v.stx.Ctime) != rec.ctime {
			return false, nil
		}
	}
}

// stat fills stx for path, relative to the root, without following a link.
// It passes the verifier's own NUL-terminated buffer to statx(2) instead
// of a string unix.Statx would copy into a new one: a no-change rescan
// makes one call per directory and file (about 570,000 at 100,000
// skills), and the copy was one allocation each. Measured with
// BenchmarkVerify (the 10,000-skill tree of bench/scan.sh, 2 cores,
// -count 6, shared machine): see the bench/README.md scan-cache row.
func (v *statVerifier) stat() bool {
	v.path = append(v.path, 0)
	p := unsafe.Pointer(&v.path[0])
	for {
		_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(v.dirfd), uintptr(p), unix.AT_SYMLINK_NOFOLLOW,
			unix.STATX_TYPE|unix.STATX_SIZE|unix.STATX_MTIME|unix.STATX_CTIME, uintptr(unsafe.Pointer(&v.stx)), 0)
		if errno == unix.EINTR {
			continue
		}
		v.path = v.path[:len(v.path)-1]
		const need = unix.STATX_TYPE | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME
		return errno == 0 && v.stx.Mask&need == need
	}
}

func nanos(t unix.StatxTimestamp) int64 { return t.Sec*1e9 + int64(t.Nsec) }
