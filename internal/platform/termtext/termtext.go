// Package termtext renders text that came from outside skillgate (a
// server's name and version, a tool's description, a SKILL.md field, an
// audit record, an error quoting any of them) for a terminal. A terminal
// acts on control characters: ESC starts sequences that set the window
// title, clear the screen, move the cursor or write the clipboard (OSC 52),
// and a carriage return lets later text overwrite a line. Bidi overrides
// and other invisible format characters reorder or hide what is shown.
// Printed raw, such text lets a hostile server rewrite what a human reads
// before approving it; rendered here, every one of those characters is
// shown as an escape instead.
//
// One rule renders, in two shapes: Escape for one field (the result is
// one line), and Writer for a command's whole output (its own line feeds
// and tabs keep the layout). The escapes are JSON string escapes (\n, \t,
// \r, \uXXXX, surrogate pairs above U+FFFF), so JSON passed through a
// Writer stays valid JSON with the same values; only a byte that is not
// UTF-8 is written \xNN, which JSON written by encoding/json never holds.
package termtext

import (
	"io"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Visible reports whether a terminal shows r as itself: false for the C0
// and C1 controls and DEL, the line and paragraph separators, and the
// invisible format characters (Unicode category Cf: bidi embeddings,
// overrides, isolates and marks, zero-width characters, the byte order
// mark, tag characters, …).
func Visible(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return false
	case r < 0x7f:
		return true
	case r == '\u2028', r == '\u2029':
		return false
	}
	return !unicode.Is(unicode.Cf, r)
}

// Escape renders s, one field of outside text, for one line of a
// terminal: every character Visible refuses, line feeds and tabs
// included, is written as its escape (\n, \t, \r, \u001b, \u202e, …)
// and every byte that is not UTF-8 as \xNN. The result holds only
// visible characters and spaces.
func Escape(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return string(appendEscaped(make([]byte, 0, len(s)+16), s, false))
		}
	}
	return s // plain ASCII: nothing to render
}

// appendEscaped is the one rendering: it appends s to dst with every
// character Visible refuses escaped; layout keeps line feeds and tabs.
func appendEscaped(dst []byte, s string, layout bool) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, '\\', 'x', hex[c>>4], hex[c&0xf])
		case Visible(r), layout && (r == '\n' || r == '\t'):
			dst = append(dst, s[i:i+size]...)
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r > 0xffff:
			r -= 0x10000
			dst = appendU(appendU(dst, 0xd800+(r>>10)), 0xdc00+(r&0x3ff))
		default:
			dst = appendU(dst, r)
		}
		i += size
	}
	return dst
}

const hex = "0123456789abcdef"

// appendU appends r (at most U+FFFF) as \uXXXX.
func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// Writer renders everything written through it as Escape does, except
// that line feeds and tabs pass: the command's own layout stays, and no
// control or invisible character reaches the terminal. A character split
// across two writes is rendered whole; Flush renders what is left of an
// incomplete one. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	tail []byte // the start of a character the next write completes
	buf  []byte
}

// NewWriter returns a Writer rendering to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Unwrap returns the writer rendered to, for the callers that must see
// the terminal itself (to ask whether it is one).
func (t *Writer) Unwrap() io.Writer { return t.w }

// Write renders p to the underlying writer. It reports len(p) written
// when the rendering was written whole.
func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(append(t.tail, p...))
	t.tail = t.tail[:0]
	// Keep back the start of a character the next write may complete.
	if cut := incompleteSuffix(s); cut > 0 {
		t.tail = append(t.tail, s[len(s)-cut:]...)
		s = s[:len(s)-cut]
	}
	t.buf = appendEscaped(t.buf[:0], s, true)
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush renders the start of a character left incomplete by the last
// write (each byte as \xNN).
func (t *Writer) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.tail) == 0 {
		return nil
	}
	t.buf = appendEscaped(t.buf[:0], string(t.tail), true)
	t.tail = t.tail[:0]
	_, err := t.w.Write(t.buf)
	return err
}

// incompleteSuffix returns the length of the valid start of a multi-byte
// character that ends s, or 0.
func incompleteSuffix(s string) int {
	for n := 1; n <= utf8.UTFMax-1 && n <= len(s); n++ {
		c := s[len(s)-n]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRuneInString(s[len(s)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}
