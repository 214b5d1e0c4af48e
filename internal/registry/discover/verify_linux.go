package discover

import (
	"context"
	"sync"
	"sync/atomic"

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
	raw := rawOK(rootfd)
	var failed atomic.Bool
	var firstErr atomic.Pointer[error]
	var next atomic.Int64
	work := func() {
		v := statVerifier{dirfd: rootfd, raw: raw}
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
	raw   bool // see statxAt
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

// stat fills stx for path, relative to the root, without following a link
// and without allocating (see statxAt).
func (v *statVerifier) stat() bool {
	v.path = append(v.path, 0)
	errno := statxAt(v.dirfd, v.path, &v.stx, v.raw)
	v.path = v.path[:len(v.path)-1]
	const need = unix.STATX_TYPE | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME
	return errno == 0 && v.stx.Mask&need == need
}

func nanos(t unix.StatxTimestamp) int64 { return t.Sec*1e9 + int64(t.Nsec) }
