//go:build !linux

package discover

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// dirReader reads the directories of one walk.
type dirReader struct{}

// newDirReader returns the dirReader for a walk of root.
func newDirReader(string) dirReader { return dirReader{} }

// close releases the dirReader.
func (dirReader) close() {}

// readDirCached lists the directory; this platform keeps no cache.
func (dirReader) readDirCached(path string, stat func([]entry) bool, _ *listing, _ int64) ([]entry, *listing, dirStat, error) {
	es, err := readDir(path, stat)
	return es, nil, dirStat{}, err
}

// readDir lists a directory and, when stat says so, lstats its regular
// files.
func readDir(path string, stat func([]entry) bool) ([]entry, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	es := make([]entry, 0, len(des))
	for _, d := range des {
		e := entry{name: d.Name()}
		switch t := d.Type(); {
		case t.IsDir():
			e.typ = fs.ModeDir
		case t.IsRegular():
			e.typ = 0
		case t&fs.ModeSymlink != 0:
			e.typ = fs.ModeSymlink
		default:
			e.typ = fs.ModeIrregular
		}
		es = append(es, e)
	}
	if stat(es) {
		for i := range es {
			e := &es[i]
			if !e.isRegular() || skill.Skip(e.name) {
				continue
			}
			fi, err := os.Lstat(filepath.Join(path, e.name))
			if err != nil {
				e.statErr = err
				continue
			}
			if !fi.Mode().IsRegular() {
				e.typ = fs.ModeIrregular
				continue
			}
			e.size, e.mtime = fi.Size(), fi.ModTime().UnixNano()
		}
	}
	return es, nil
}
