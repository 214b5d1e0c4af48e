// Package jsonscan reads and writes the few JSON shapes on the relay's hot
// path (a JSON-RPC envelope, a plain string) without encoding/json. Each
// function answers exactly as encoding/json would, or declines and leaves
// the input to it; the fuzz tests beside them check that against
// encoding/json.
package jsonscan

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// maxScanDepth bounds how deeply Object follows nested values; deeper
// input is left to encoding/json (whose own bound is 10,000).
const maxScanDepth = 1000

// Object reads data as one JSON object (with optional surrounding
// whitespace) and sets vals[i] to the raw bytes of the value of member
// keys[i], or nil when the object has no such member. It is the small,
// allocation-free reader of the JSON-RPC envelope on the relay's hot path:
// encoding/json costs several times as much there, mostly in cold caches
// between two messages.
//
// It reports false, leaving the message to encoding/json, whenever its
// answer might differ from what json.Unmarshal into a struct with these
// keys would decode: data is not exactly one valid JSON object, is nested
// deeper than it follows, has a key with an escape sequence, has a wanted
// key twice, or has a key equal to a wanted key only when case is ignored
// (encoding/json matches keys case-insensitively). len(vals) must be at
// least len(keys).
func Object(data []byte, keys []string, vals [][]byte) bool {
	for i := range keys {
		vals[i] = nil
	}
	s := scanner{data: data}
	s.space()
	if !s.object(keys, vals) {
		return false
	}
	s.space()
	return s.pos == len(s.data)
}

type scanner struct {
	data  []byte
	pos   int
	depth int
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// object reads an object at s.pos, filling vals for keys when keys is not
// nil.
func (s *scanner) object(keys []string, vals [][]byte) bool {
	if s.pos >= len(s.data) || s.data[s.pos] != '{' {
		return false
	}
	s.depth++
	if s.depth > maxScanDepth {
		return false
	}
	s.pos++
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.depth--
		return true
	}
	for {
		start := s.pos
		escaped, ok := s.str()
		if !ok {
			return false
		}
		key := s.data[start+1 : s.pos-1]
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return false
		}
		s.pos++
		s.space()
		want := -1
		if keys != nil {
			if escaped {
				return false
			}
			for i, k := range keys {
				if string(key) == k {
					want = i
					break
				}
				if strings.EqualFold(string(key), k) {
					return false
				}
			}
		}
		vstart := s.pos
		if !s.value() {
			return false
		}
		if want >= 0 {
			if vals[want] != nil {
				return false
			}
			vals[want] = s.data[vstart:s.pos]
		}
		s.space()
		if s.pos >= len(s.data) {
			return false
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.space()
		case '}':
			s.pos++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// value reads any JSON value at s.pos.
func (s *scanner) value() bool {
	if s.pos >= len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(nil, nil)
	case c == '[':
		return s.array()
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *scanner) array() bool {
	s.depth++
	if s.depth > maxScanDepth {
		return false
	}
	s.pos++ // '['
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		return true
	}
	for {
		if !s.value() {
			return false
		}
		s.space()
		if s.pos >= len(s.data) {
			return false
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.space()
		case ']':
			s.pos++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *scanner) literal(lit string) bool {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return false
	}
	s.pos += len(lit)
	return true
}

// str reads a string at s.pos, as encoding/json accepts it: no control
// characters, only JSON's escapes (bytes that are not valid UTF-8 are
// accepted, as there). escaped reports an escape sequence in it.
func (s *scanner) str() (escaped, ok bool) {
	d, i := s.data, s.pos
	if i >= len(d) || d[i] != '"' {
		return false, false
	}
	i++
	for {
		// Many bytes per step (plainRun) up to the next byte that ends the
		// string, is not allowed in it or starts an escape other than a
		// one-letter one; then one at a time where fewer than plainGroup
		// bytes are left.
		if len(d)-i >= plainGroup {
			n, esc := plainRun(d[i:])
			i += n
			escaped = escaped || esc
		}
		for i < len(d) && d[i] >= 0x20 && d[i] != '"' && d[i] != '\\' {
			i++
		}
		if i >= len(d) {
			return false, false
		}
		switch d[i] {
		case '"':
			s.pos = i + 1
			return escaped, true
		case '\\':
		default: // a control character
			return false, false
		}
		escaped = true
		if i+1 >= len(d) {
			return false, false
		}
		switch e := escapes[d[i+1]]; {
		case e == 1:
			i += 2
		case e == 2 && len(d)-i >= 6 && isHex(d[i+2]) && isHex(d[i+3]) && isHex(d[i+4]) && isHex(d[i+5]):
			i += 6
		default:
			return false, false
		}
	}
}

// escapes classifies the byte after a backslash: 1 for a one-letter
// escape, 2 for 'u' (four hex digits follow), 0 for none.
var escapes = [256]uint8{'"': 1, '\\': 1, '/': 1, 'b': 1, 'f': 1, 'n': 1, 'r': 1, 't': 1, 'u': 2}

// SWAR constants: one in every byte, and the top bit of every byte.
const (
	ones = 0x0101010101010101
	tops = 0x8080808080808080
)

// specialBytes returns w (eight bytes, the first in the low byte) with the
// top bit of a byte set where that byte is below 0x20, a '"' or a '\\'.
// Bytes above the lowest such byte may be flagged too (a borrow carries
// into them), but the lowest flagged byte is always a real one: a borrow
// only starts at a byte that matched, and only carries upwards. Bytes of
// 0x80 and above never match.
func specialBytes(w uint64) uint64 {
	q := w ^ (ones * '"')
	e := w ^ (ones * '\\')
	return ((w-ones*0x20)&^w | (q-ones)&^q | (e-ones)&^e) & tops
}

// plainRunGeneric returns how many leading bytes of b are the plain
// stretch of a JSON string's body: it stops at the first '"', control
// character, or backslash that does not start a one-letter escape (\" \\
// \/ \b \f \n \r \t), which it steps over, reporting in escaped that it
// did. It reads eight bytes per step instead of one (the relay reads every
// byte of every result it passes on, a file's text of tens of kilobytes,
// and this loop is most of that time) and stops where fewer than eight are
// left, possibly before the byte it looks for: the caller goes on from
// there one byte at a time. plainRun is this on most processors, with
// vector instructions on amd64; TestPlainRun holds both to the
// byte-at-a-time rule.
func plainRunGeneric(b []byte) (n int, escaped bool) {
	for len(b)-n >= 8 {
		m := specialBytes(binary.LittleEndian.Uint64(b[n:]))
		if m == 0 {
			n += 8
			continue
		}
		n += bits.TrailingZeros64(m) >> 3
		if b[n] != '\\' || n+1 >= len(b) || escapes[b[n+1]] != 1 {
			return n, escaped
		}
		n, escaped = n+2, true
	}
	return n, escaped
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number reads a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	if s.pos >= len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; {
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if !s.digits() {
			return false
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more decimal digits.
func (s *scanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}

// PlainString returns the value of the JSON string raw when it is written
// without escape sequences and is valid UTF-8: its bytes are then exactly
// what encoding/json decodes (which replaces invalid UTF-8).
func PlainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' || c == '"' {
			return "", false
		}
	}
	if !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// Plain reports whether encoding/json writes s between quotes as it is:
// printable ASCII without '"', '\\' or the characters it escapes for HTML
// ('<', '>', '&'). Encoders that append JSON by hand use it to skip
// json.Marshal for most strings.
func Plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// Quote returns s as a JSON string, exactly as json.Marshal writes it. A
// [Plain] string, such as a request id, a method or a tool name, is written
// without encoding/json.
func Quote(s string) []byte {
	if !Plain(s) {
		b, _ := json.Marshal(s)
		return b
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
