package discover

import (
	"io/fs"
	"sort"
)

// entry is one directory entry as the walk needs it: its name, its type
// (without following links) and, for the regular files of a skill, the
// size and modification time the fingerprint is made of.
type entry struct {
	name    string
	typ     fs.FileMode // fs.ModeDir, 0 for a regular file, fs.ModeSymlink, or fs.ModeIrregular
	size    int64
	mtime   int64 // nanoseconds since the epoch
	ctime   int64 // status change time, nanoseconds since the epoch (Linux only)
	statErr error
}

// dirStat is what a walk records of a directory it read (see State): its
// modification and status change times in nanoseconds since the epoch.
type dirStat struct {
	mtime, ctime int64
}

func (e *entry) isDir() bool     { return e.typ == fs.ModeDir }
func (e *entry) isRegular() bool { return e.typ == 0 }
func (e *entry) isSymlink() bool { return e.typ == fs.ModeSymlink }

func sortEntries(es []entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
}

// needStat reports whether a directory's files must be stat'ed: it is
// inside a skill, or is a skill itself.
func needStat(inSkill, isRoot bool) func([]entry) bool {
	return func(es []entry) bool { return inSkill || (!isRoot && skillFile(es) != "") }
}
