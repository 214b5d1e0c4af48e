// Package hostpath removes the host's paths (the data directory, the
// sandbox state directories in it, the scanned skill roots, mounted
// directories) from text bound for agents. An agent sees skills under
// /skills and its files under /workspace; where those live on the host is
// not its business, and an upstream server's error or a storage error that
// names them would tell it (a username, a project layout, where the
// credential key is). [Scrubber.String] is the one function that does it;
// package gateway applies it where results and errors leave for an agent.
package hostpath

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Placeholder replaces a host path (and a file:// URI of one) in text an
// agent receives; what follows the path (its subpath) is kept.
const Placeholder = "[host path]"

// Scrubber removes a fixed set of host paths from text. The zero value and
// nil remove nothing. A Scrubber is immutable and safe for concurrent use.
type Scrubber struct {
	// paths are the absolute paths to remove, longest first, so that a
	// path inside another is replaced whole.
	paths []string
	// raw are paths as bytes, for the cheap check of JSON documents.
	raw [][]byte
	// runes are the characters of the paths, ascii those below 0x80: an
	// escape in a JSON document that spells none of them cannot be part
	// of a path (the cheap check of [Scrubber.JSON]).
	runes map[rune]bool
	ascii [128]bool
}

// New returns a scrubber of paths: each made absolute and clean, and also
// with its symbolic links resolved when that differs. Empty paths and the
// root directory are ignored (every path would match).
func New(paths ...string) *Scrubber {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		p = filepath.Clean(p)
		if p == "." || p == string(filepath.Separator) || !filepath.IsAbs(p) || seen[p] {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		add(abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			add(real)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	s := &Scrubber{paths: out, runes: map[rune]bool{}}
	for _, p := range out {
		s.raw = append(s.raw, []byte(p))
		for _, r := range p {
			if r < utf8.RuneSelf {
				s.ascii[r] = true
			} else {
				s.runes[r] = true
			}
		}
	}
	return s
}

// Paths returns the paths the scrubber removes, longest first.
func (s *Scrubber) Paths() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.paths)
}

// String returns text with every occurrence of a host path replaced by
// [Placeholder]: the path itself, or a file:// URI of it, where it stands
// as a whole path (not inside a longer name: /srv/app does not match in
// /srv/apple, nor in /data/srv/app). What follows the path is kept.
func (s *Scrubber) String(text string) string {
	if s == nil {
		return text
	}
	for _, p := range s.paths {
		if !strings.Contains(text, p) {
			continue
		}
		text = replacePath(text, p)
	}
	return text
}

// replacePath replaces each whole occurrence of p in text.
func replacePath(text, p string) string {
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, p)
		if i < 0 {
			break
		}
		end := i + len(p)
		whole := (i == 0 || !nameByte(rest[i-1])) && (end == len(rest) || !nameByte(rest[end]))
		if !whole {
			b.WriteString(rest[:end])
			rest = rest[end:]
			continue
		}
		start := i
		if strings.HasSuffix(rest[:i], "file://") {
			start -= len("file://")
		}
		b.WriteString(rest[:start])
		b.WriteString(Placeholder)
		rest = rest[end:]
	}
	if b.Len() == 0 {
		return text
	}
	b.WriteString(rest)
	return b.String()
}

// nameByte reports whether c may continue a file name, so that a match
// next to it is part of a longer name.
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c >= 0x80
}

// JSON returns the JSON document raw with [Scrubber.String] applied to
// every string in it (keys included). When no host path can be in it (the
// common case, found without decoding) raw itself is returned, so a result
// relayed byte for byte stays so. A document that does not decode is
// returned as it is: its reader refuses it anyway.
func (s *Scrubber) JSON(raw []byte) []byte {
	if s == nil || !s.mayHold(raw) {
		return raw
	}
	return s.decodeJSON(raw)
}

// decodeJSON is [Scrubber.JSON] without the cheap check: the document is
// decoded, scrubbed, and encoded again when a string changed.
func (s *Scrubber) decodeJSON(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	changed := false
	v = s.value(v, &changed)
	if !changed {
		return raw // an escape, but no host path: the bytes as they came
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// mayHold reports whether raw, a JSON document, may hold a host path in
// one of its strings. A decoded string holds a path only if each of the
// path's characters came from raw either literally or from an escape, so
// raw may hold one only when it holds a path's bytes as they are, or an
// escape that spells one of the paths' characters (\/ for "/", \u0061
// for "a"). Escapes of other characters, such as the \u003c and \u0026
// that Go's encoder writes for "<" and "&" in every text, do not count.
func (s *Scrubber) mayHold(raw []byte) bool {
	if len(s.paths) == 0 {
		return false
	}
	for _, p := range s.raw {
		if bytes.Contains(raw, p) {
			return true
		}
	}
	// The decoder turns invalid UTF-8 into U+FFFD.
	if s.runes[utf8.RuneError] && !utf8.Valid(raw) {
		return true
	}
	for i := 0; ; {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return false
		}
		i += j + 1
		if i == len(raw) {
			return false
		}
		c := raw[i]
		i++
		var r rune
		switch c {
		case '"', '\\', '/':
			r = rune(c)
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			if i+4 > len(raw) {
				return true // not a document the decoder reads: be safe
			}
			for _, h := range raw[i : i+4] {
				switch {
				case '0' <= h && h <= '9':
					r = r<<4 | rune(h-'0')
				case 'a' <= h && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case 'A' <= h && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return true
				}
			}
			i += 4
			if utf16.IsSurrogate(r) {
				// Half of a pair, or U+FFFD when unpaired: either may
				// spell a character outside the basic plane.
				return s.astral() || s.runes[utf8.RuneError]
			}
		default:
			return true
		}
		if r < utf8.RuneSelf && s.ascii[r] || r >= utf8.RuneSelf && s.runes[r] {
			return true
		}
	}
}

// astral reports whether a path holds a character outside Unicode's basic
// plane (one a JSON escape writes as a surrogate pair).
func (s *Scrubber) astral() bool {
	for r := range s.runes {
		if r > 0xFFFF {
			return true
		}
	}
	return false
}

// value scrubs every string in v, setting *changed when one changed.
func (s *Scrubber) value(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		out := s.String(x)
		if out != x {
			*changed = true
		}
		return out
	case []any:
		for i := range x {
			x[i] = s.value(x[i], changed)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[s.value(k, changed).(string)] = s.value(e, changed)
		}
		return out
	}
	return v
}
