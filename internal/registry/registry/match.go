package registry

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// matcher tells whether a skill's name or description contains a page
// query's text, ignoring case: exactly what
//
//	strings.Contains(strings.ToLower(name+"\n"+description), strings.ToLower(query))
//
// says (TestMatcherDifferential, FuzzMatcher), without the snapshot
// keeping a lower-cased copy of every description (48 MB at 100,000
// skills). ASCII text, the common case, is searched in place, folding case
// as it compares; other text is lower-cased into a buffer the matcher
// reuses. A matcher is used by one goroutine.
type matcher struct {
	needle  string // the query, lower-cased
	ascii   bool   // needle is ASCII
	newline bool   // needle holds '\n', so it may span name and description
	buf     []byte
}

func newMatcher(query string) *matcher {
	n := strings.ToLower(query)
	return &matcher{needle: n, ascii: isASCII(n), newline: strings.IndexByte(n, '\n') >= 0}
}

// match reports whether name+"\n"+description, lower-cased, contains the
// needle. asciiText says that name and description are both ASCII.
func (m *matcher) match(name, description string, asciiText bool) bool {
	if m.needle == "" {
		return true
	}
	if asciiText && !m.newline {
		// The lower-cased text is ASCII: a needle that is not cannot be
		// in it, and one that is lies within the name or within the
		// description.
		return m.ascii && (containsFoldASCII(name, m.needle) || containsFoldASCII(description, m.needle))
	}
	// strings.ToLower is strings.Map(unicode.ToLower, s) once s is not
	// ASCII (and byte-wise lowering, the same, when it is): each rune
	// lower-cased, an invalid byte becoming U+FFFD.
	m.buf = appendLower(m.buf[:0], name)
	m.buf = append(m.buf, '\n')
	m.buf = appendLower(m.buf, description)
	return bytes.Contains(m.buf, []byte(m.needle))
}

// appendLower appends s lower-cased as strings.Map(unicode.ToLower, s)
// does.
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, unicode.ToLower(r))
		i += w
	}
	return b
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsFoldASCII reports whether the ASCII text s, lower-cased, contains
// needle, a non-empty lower-case ASCII string. Candidates are found with
// strings.IndexByte on both cases of the needle's first byte.
func containsFoldASCII(s, needle string) bool {
	n := len(needle)
	if n > len(s) {
		return false
	}
	c0 := needle[0]
	c1 := c0
	if 'a' <= c0 && c0 <= 'z' {
		c1 = c0 - ('a' - 'A')
	}
	last := len(s) - n // the last start a match can have
	// p0 and p1 are the next positions of c0 and c1 at or after i (or
	// past last when there is none).
	p0, p1 := -1, -1
	for i := 0; i <= last; {
		if p0 < i {
			p0 = nextByte(s, i, last, c0)
		}
		if c1 == c0 {
			p1 = p0
		} else if p1 < i {
			p1 = nextByte(s, i, last, c1)
		}
		j := min(p0, p1)
		if j > last {
			return false
		}
		if equalFoldASCII(s[j+1:j+n], needle[1:]) {
			return true
		}
		i = j + 1
	}
	return false
}

// nextByte returns the index of c in s at or after i and at most last, or
// last+1.
func nextByte(s string, i, last int, c byte) int {
	k := strings.IndexByte(s[i:last+1], c)
	if k < 0 {
		return last + 1
	}
	return i + k
}

// equalFoldASCII reports whether the ASCII text s, lower-cased, equals the
// lower-case t of the same length.
func equalFoldASCII(s, t string) bool {
	for i := 0; i < len(t); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != t[i] {
			return false
		}
	}
	return true
}
