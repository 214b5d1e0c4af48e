package registry

// The catalog snapshot keeps its strings in a text arena and its entries
// as offsets into it, so that the snapshot holds no pointer per skill:
// the garbage collector marks a few large objects instead of some ten
// strings per skill (a million objects at 100,000 skills, marked on every
// cycle while agents page), and no string pays a header or a size class.

// arenaChunkBits sizes the arena's chunks (1 MiB): strings are copied into
// the current chunk, and a chunk is never reallocated, so building costs
// one copy of the text.
const (
	arenaChunkBits = 20
	arenaChunk     = 1 << arenaChunkBits
)

// span is a string in an arena: its offset (chunk index in the high bits)
// and length.
type span struct {
	off, n uint32
}

// arena holds the snapshot's text in chunks.
type arena struct {
	chunks []string
	cur    []byte // the chunk being filled; becomes a string when full
}

// add copies s into the arena. A string longer than a chunk gets a chunk
// of its own.
func (a *arena) add(s string) span {
	if len(s) == 0 {
		return span{}
	}
	if len(a.cur)+len(s) > min(cap(a.cur), arenaChunk) {
		a.seal()
		a.cur = make([]byte, 0, max(arenaChunk, len(s)))
	}
	sp := span{off: uint32(len(a.chunks))<<arenaChunkBits | uint32(len(a.cur)), n: uint32(len(s))}
	a.cur = append(a.cur, s...)
	return sp
}

// seal turns the chunk being filled into a string.
func (a *arena) seal() {
	if a.cur != nil {
		a.chunks = append(a.chunks, string(a.cur))
		a.cur = nil
	}
}

// str returns the string sp names: a slice of its chunk, no copy.
func (a *arena) str(sp span) string {
	if sp.n == 0 {
		return ""
	}
	c := a.chunks[sp.off>>arenaChunkBits]
	o := sp.off & (arenaChunk - 1)
	return c[o : o+sp.n]
}
