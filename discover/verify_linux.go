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
// of a state records under the root abs is unchanged. The root is opened
// without following a link, and each path is stat'ed relative to it
// without following a link at its end, as a walk stats what it lists; a
// directory on the way that was replaced by a link changed its parent,
// whose own record then differs. Nothing is opened or read below the root.
func verifyStats(ctx context.Context, abs string, stats string) bool {
	var blocks []string
	for len(stats) > 0 {
		if len(stats) < 4 {
			return false
		}
		n := uint32(stats[0]) | uint32(stats[1])<<8 | uint32(stats[2])<<16 | uint32(stats[3])<<24
		if uint64(n) > uint64(len(stats)-4) {
			return false
		}
		blocks = append(blocks, stats[4:4+n])
		stats = stats[4+n:]
	}
	if len(blocks) == 0 {
		return false
	}
	rootfd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer unix.Close(rootfd)
	var raw bool
	var sfs unix.Statfs_t
	if unix.Fstatfs(rootfd, &sfs) == nil {
		raw = localFS(int64(sfs.Type))
	}
	var failed atomic.Bool
	var next atomic.Int64
	work := func() {
		var v statVerifier
		v.dirfd, v.raw = rootfd, raw
		for !failed.Load() && ctx.Err() == nil {
			i := int(next.Add(1)) - 1
			if i >= len(blocks) {
				return
			}
			if !v.block(blocks[i]) {
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
	return !failed.Load() && ctx.Err() == nil
}

// statVerifier checks the records of a state's blocks.
type statVerifier struct {
	dirfd    int
	path     []byte // the path being stat'ed
	rel      []byte // the block's current directory
	dir      int    // length of the directory's prefix of path ("" in the root)
	dirMtime int64
	stx      unix.Statx_t
	raw      bool // make the calls raw (see sysCalls)
}

// block checks one block's records.
func (v *statVerifier) block(b string) bool {
	r := stateReader{s: b}
	v.rel = v.rel[:0]
	seenDir := false
	for len(r.s) > 0 && !r.bad {
		switch r.byte() {
		case 'D':
			shared := r.uvarint()
			rest := r.str()
			mtime := r.varint()
			ctime := mtime + r.varint()
			if r.bad || shared > uint64(len(v.rel)) {
				return false
			}
			v.rel = append(v.rel[:shared], rest...)
			if !validRel(v.rel) {
				return false
			}
			seenDir = true
			v.path = append(v.path[:0], v.rel...)
			if !v.stat() || v.stx.Mode&unix.S_IFMT != unix.S_IFDIR ||
				nanos(v.stx.Mtime) != mtime || nanos(v.stx.Ctime) != ctime {
				return false
			}
			// The directory's files are stat'ed as "rel/name", or "name"
			// in the root.
			if len(v.rel) == 1 && v.rel[0] == '.' {
				v.path = v.path[:0]
			} else {
				v.path = append(v.path, '/')
			}
			v.dir, v.dirMtime = len(v.path), mtime
		case 'F':
			name := r.str()
			size := r.varint()
			mtime := v.dirMtime + r.varint()
			ctime := mtime + r.varint()
			if r.bad || !seenDir || !validName(name) {
				return false
			}
			v.path = append(v.path[:v.dir], name...)
			if !v.stat() || v.stx.Mode&unix.S_IFMT != unix.S_IFREG || int64(v.stx.Size) != size ||
				nanos(v.stx.Mtime) != mtime || nanos(v.stx.Ctime) != ctime {
				return false
			}
		default:
			return false
		}
	}
	return !r.bad
}

// stat fills stx for path, relative to the root, without following a link
// and without allocating.
func (v *statVerifier) stat() bool {
	v.path = append(v.path, 0)
	p := unsafe.Pointer(&v.path[0])
	for {
		call := unix.Syscall6
		if v.raw {
			call = unix.RawSyscall6
		}
		_, _, errno := call(unix.SYS_STATX, uintptr(v.dirfd), uintptr(p), unix.AT_SYMLINK_NOFOLLOW,
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
