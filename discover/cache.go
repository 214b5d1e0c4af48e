package discover

import (
	"io/fs"
	"strings"

	"github.com/skillgate/skillgate/store"
)

// Listing is a directory's entries as they were when the directory had
// modification time MTime. Adding, removing or renaming an entry changes a
// directory's modification time, so a listing whose MTime still matches
// can stand in for reading the directory again. Files are still stat'ed on
// every walk: editing a file in place does not touch its directory.
//
// Entries encodes the entries: per entry a type byte ('d' directory, 'f'
// regular file, 'l' link, 'o' other), the name, and a NUL byte. Listing is
// the store's record, so the listings a store keeps are a Cache as they are.
type Listing = store.Listing

// Cache holds listings by absolute directory path.
type Cache map[string]Listing

// racyWindow is how recent a directory's modification may be for its
// listing to be cached: a change within the same clock tick as the listing
// would leave the modification time unchanged.
const racyWindow = int64(100e6) // 100 ms

func encodeEntries(es []entry) string {
	var b strings.Builder
	for _, e := range es {
		switch {
		case e.isDir():
			b.WriteByte('d')
		case e.isRegular():
			b.WriteByte('f')
		case e.isSymlink():
			b.WriteByte('l')
		default:
			b.WriteByte('o')
		}
		b.WriteString(e.name)
		b.WriteByte(0)
	}
	return b.String()
}

func decodeEntries(s string) []entry {
	es := make([]entry, 0, strings.Count(s, "\x00"))
	for len(s) > 1 {
		i := strings.IndexByte(s, 0)
		if i < 1 {
			break
		}
		e := entry{name: s[1:i]}
		switch s[0] {
		case 'd':
			e.typ = fs.ModeDir
		case 'f':
			e.typ = 0
		case 'l':
			e.typ = fs.ModeSymlink
		default:
			e.typ = fs.ModeIrregular
		}
		es = append(es, e)
		s = s[i+1:]
	}
	return es
}
