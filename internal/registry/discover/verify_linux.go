package discover

import (
	"bytes"
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
	return verifyStatsWith(ctx, abs, stats, true)
}

// verifyStatsWith is verifyStats; based says whether a block whose
// directories share a directory below the root is stat'ed relative to it
// (see statVerifier.base), or every path relative to the root, the plain
// path that TestVerifyBasedSameAsPlain compares it with.
func verifyStatsWith(ctx context.Context, abs string, stats string, based bool) (bool, error) {
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
		v := statVerifier{rootfd: rootfd, raw: raw, based: based}
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
	rootfd int
	dirfd  int // rootfd, or the block's base directory (see base)
	strip  int // how much of a directory's path the base stands for
	based  bool
	br     blockReader
	path   []byte // the path being stat'ed, NUL-terminated while it is
	dir    int    // length of the directory's prefix of path ("" in the root)
	stx    unix.Statx_t
	raw    bool // see statxAt
}

// block checks one block's records: false when one differs, or (with the
// error) is malformed.
func (v *statVerifier) block(b string) (bool, error) {
	v.dirfd, v.strip = v.rootfd, 0
	if v.based {
		if fd, strip := v.base(b); fd >= 0 {
			defer unix.Close(fd)
			v.dirfd, v.strip = fd, strip
		}
	}
	v.br.reset(b)
	var rec statRecord
	for {
		ok, err := v.br.next(&rec)
		if !ok {
			return err == nil, err
		}
		if rec.dir {
			rel := v.br.rel
			switch {
			case v.strip == 0:
			case len(rel) < v.strip:
				rel = dot // the base itself (base checked that it is)
			default:
				rel = rel[v.strip:]
			}
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

// dot is the path of a directory relative to itself.
var dot = []byte{'.'}

// minBasedRecords is how many records a block needs for base to open its
// base directory: the open and the close are two more system calls, each
// stat of the block one path element shorter.
const minBasedRecords = 16

// base opens the deepest directory below the root that every directory of
// block b is in or is (its base), when b holds at least minBasedRecords
// records, so that the block's paths are looked up from there: one path
// element or more fewer per stat. A tree of categories of skills has most
// blocks within one category. It returns the base's descriptor and the
// length of its path plus the separator after it (the prefix of the
// block's directories it stands for), or -1 when the block has no base
// below the root, is too small, is malformed (block reports it) or the
// base cannot be opened (the block is then stat'ed from the root, which
// sees what a failed open means for each path). The base is opened
// without following a link, as a path: its own record, if in the block,
// is stat'ed as "." from it, so its times are checked on what was opened.
func (v *statVerifier) base(b string) (fd, strip int) {
	var br blockReader
	br.reset(b)
	var rec statRecord
	var prefix []byte
	records, first := 0, true
	for {
		ok, err := br.next(&rec)
		if err != nil {
			return -1, 0
		}
		if !ok {
			break
		}
		records++
		if !rec.dir {
			continue
		}
		rel := br.rel
		if len(rel) == 1 && rel[0] == '.' {
			return -1, 0 // the root is in the block
		}
		if first {
			prefix, first = append([]byte(nil), rel...), false
			continue
		}
		for len(prefix) > 0 && !inDir(rel, prefix) {
			i := bytes.LastIndexByte(prefix, '/')
			if i < 0 {
				return -1, 0 // no common directory below the root
			}
			prefix = prefix[:i]
		}
	}
	if len(prefix) == 0 || records < minBasedRecords {
		return -1, 0
	}
	fd, err := openat(v.rootfd, string(prefix), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, 0
	}
	return fd, len(prefix) + 1
}

// inDir reports whether the directory rel is dir or below it.
func inDir(rel, dir []byte) bool {
	return bytes.HasPrefix(rel, dir) && (len(rel) == len(dir) || rel[len(dir)] == '/')
}
