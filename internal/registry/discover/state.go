package discover

import (
	"context"
	"sync/atomic"
)

// A walk's state (the state of its record, see record.go) is what it
// read, so that the next walk of the same root can tell with one stat per
// directory and file, and nothing else, that it would find exactly the
// same (see [Scan]).
//
// A walk that cannot promise that an unchanged state means an unchanged
// result makes no state: a directory or file changed within racyWindow of
// the walk (the clock may not tell a later change apart), a directory that
// could not be read, a file that could not be stat'ed.

// racyWindow is how recent a directory's or file's change may be for the
// walk to cache its listing or keep a state: a change within the same
// clock tick as the walk would leave the modification time unchanged.
const racyWindow = int64(100e6) // 100 ms

// stateBlockDirs is how many directories a block of the stat section holds.
const stateBlockDirs = 64

// stateBuilder records a walk's directories and files as it goes. The walk
// is breadth-first; the state lists them depth-first, each directory's
// subtree together, which makes the stats of a verification cheaper: the
// kernel resolves the paths of a subtree through the same few directories.
type stateBuilder struct {
	dirs   []stateDir
	files  []stateFile
	now    int64
	broken bool // the walk can make no state
}

// stateDir is a directory the walk read; its files are those from files
// to the next directory's.
type stateDir struct {
	rel          string
	mtime, ctime int64
	files        int32
	parent       int32 // -1 for the root
}

// stateFile is a regular file the walk stat'ed.
type stateFile struct {
	name               string
	size, mtime, ctime int64
}

func newStateBuilder(now int64) *stateBuilder {
	return &stateBuilder{now: now}
}

// fail records that the walk cannot make a state.
func (b *stateBuilder) fail() { b.broken = true }

// racy reports whether a time is too recent to be told apart from a later
// change.
func (b *stateBuilder) racy(t int64) bool { return t >= b.now-racyWindow }

// dir records a directory the walk read, found in the directory parent
// (a record dir returned, or -1 for the root), whose files (if any)
// follow; cacheable says its listing could be cached. It returns the
// directory's record.
func (b *stateBuilder) dir(rel string, parent int32, ds dirStat, cacheable bool) int32 {
	if b.broken {
		return -1
	}
	if !cacheable || b.racy(ds.mtime) || b.racy(ds.ctime) {
		b.fail()
		return -1
	}
	b.dirs = append(b.dirs, stateDir{rel: rel, mtime: ds.mtime, ctime: ds.ctime, files: int32(len(b.files)), parent: parent})
	return int32(len(b.dirs) - 1)
}

// file records a regular file the walk stat'ed in the last directory.
func (b *stateBuilder) file(e *entry) {
	if b.broken {
		return
	}
	if b.racy(e.mtime) || b.racy(e.ctime) {
		b.fail()
		return
	}
	b.files = append(b.files, stateFile{name: e.name, size: e.size, mtime: e.mtime, ctime: e.ctime})
}

// verify re-walks root (whose Path is absolute) cheaply after the walk
// with lim that made the state ps. When every directory and regular file
// the state records still has the same type, times and size, a walk would
// read the same listings and stat the same files: verify returns that
// walk's result, rebuilt from the state. It costs one stat per directory
// and file, spread over several goroutines, and stops at the first
// difference; an error means the root must be walked: it is nil when the
// state only describes a tree that changed since.
func verify(ctx context.Context, root Root, ps parsedState) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The result is decoded while the stats are verified.
	var stop atomic.Bool
	type decoded struct {
		res *Result
		err error
	}
	dc := make(chan decoded, 1)
	go func() {
		res, err := decodeResult(root, ps.result, &stop)
		dc <- decoded{res, err}
	}()
	verified, err := verifyStats(ctx, root.Path, ps.stats)
	if !verified {
		stop.Store(true)
	}
	d := <-dc
	switch {
	case err != nil:
		return nil, err
	case !verified:
		return nil, nil
	case d.err != nil:
		return nil, d.err
	}
	return d.res, nil
}

// validName reports whether name is one path element.
func validName[T string | []byte](name T) bool {
	n := len(name)
	if n == 0 || (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.') {
		return false
	}
	for i := 0; i < n; i++ {
		if c := name[i]; c == '/' || c == 0 {
			return false
		}
	}
	return true
}

// validRel reports whether rel is "." or a relative slash-separated path
// of valid elements (see validName), so that it stays below the root. It
// makes one pass: a rescan checks every path of a record.
func validRel[T string | []byte](rel T) bool {
	if len(rel) == 1 && rel[0] == '.' {
		return true
	}
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) {
			c := rel[i]
			if c == 0 {
				return false
			}
			if c != '/' {
				continue
			}
		}
		if n := i - start; n == 0 || (n == 1 && rel[start] == '.') || (n == 2 && rel[start] == '.' && rel[start+1] == '.') {
			return false
		}
		start = i + 1
	}
	return true
}
