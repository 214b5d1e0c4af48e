package audit

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// This file is a fast RFC 8785 canonicaliser for HashArgs. It writes the
// canonical form of the JSON it understands in one pass over the input and
// reports false for anything else: invalid JSON, duplicate keys, nesting
// deeper than maxArgsDepth, a number strconv cannot parse. HashArgs then
// canonicalises the input with jcs.Transform, so for every input the result
// (bytes or error) is exactly jcs.Transform's. The fast path only ever
// produces what jcs would: each rule below mirrors the jcs code it replaces.

// maxArgsDepth bounds the fast path's recursion; deeper input (jcs allows
// 10000 levels) goes to jcs.
const maxArgsDepth = 1000

// maxExactInt is 2^53 in decimal: an integer literal of at most this many
// digits, no greater, is exactly a double and ECMAScript prints it as the
// same digits.
const maxExactInt = "9007199254740992"

// stringPlain marks the ASCII bytes a JSON string holds as they are:
// everything but '"', '\' and control characters.
var stringPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Bytes repeated through a word, for testing eight string bytes at once.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// Flags of a string written by argsCanon.str.
const (
	strEscaped  = 1 << iota // the canonical form holds a backslash escape
	strNonASCII             // the string holds a byte >= 0x80
)

// Flags of an object member.
const (
	keyInArena       = 1 << iota // the decoded key is in argsCanon.keys, not in out
	keySupplementary             // the key holds a character beyond U+FFFF
)

// argsMember is one object member written to argsCanon.out.
type argsMember struct {
	start, end     int    // `"key":value` is out[start:end]
	keyOff, keyLen int    // the decoded key, in out or (keyInArena) in keys
	prefix         uint64 // the key's first eight bytes, big-endian, zero-padded
	flags          uint8
}

// argsCanon is the state of one canonicalisation, pooled between calls.
type argsCanon struct {
	in      []byte
	pos     int
	out     []byte
	members []argsMember // members of the objects being written, innermost last
	keys    []byte       // decoded keys whose canonical form has escapes
	scratch []byte       // an object's members while they are reordered
	moved   int          // bytes copied by reordering so far
	budget  int          // limit on moved, past which jcs is cheaper
}

var argsCanonPool = sync.Pool{New: func() any { return new(argsCanon) }}

// maxPooledBuffer caps the buffers kept in the pool, so one huge call does
// not pin its memory.
const maxPooledBuffer = 1 << 20

// canonicalArgs returns the RFC 8785 canonical form of args as
// jcs.Transform gives it, and whether the fast path wrote it (for tests).
// The bytes are valid until c.release.
func canonicalArgs(args []byte) (c *argsCanon, canon []byte, fast bool, err error) {
	c = argsCanonPool.Get().(*argsCanon)
	if out, ok := c.canonical(args); ok {
		return c, out, true, nil
	}
	canon, err = jcs.Transform(args)
	return c, canon, false, err
}

// release returns c to the pool.
func (c *argsCanon) release() {
	c.in = nil
	if cap(c.out) <= maxPooledBuffer && cap(c.scratch) <= maxPooledBuffer && cap(c.keys) <= maxPooledBuffer {
		argsCanonPool.Put(c)
	}
}

// canonical writes the canonical form of in, or reports false.
func (c *argsCanon) canonical(in []byte) ([]byte, bool) {
	c.in, c.pos = in, 0
	if cap(c.out) < len(in) {
		c.out = make([]byte, 0, len(in)+len(in)/8+64)
	}
	c.out = c.out[:0]
	c.members = c.members[:0]
	c.keys = c.keys[:0]
	c.moved, c.budget = 0, 8*len(in)+4096
	if !c.value(0) {
		return nil, false
	}
	c.skipSpace()
	return c.out, c.pos == len(in)
}

func (c *argsCanon) skipSpace() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value writes the value after optional whitespace at c.pos. depth is the
// number of arrays and objects it is inside.
func (c *argsCanon) value(depth int) bool {
	c.skipSpace()
	if c.pos >= len(c.in) {
		return false
	}
	switch c.in[c.pos] {
	case '{':
		return c.object(depth + 1)
	case '[':
		return c.array(depth + 1)
	case '"':
		_, ok := c.str()
		return ok
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	case 'n':
		return c.literal("null")
	default:
		return c.number()
	}
}

// literal writes true, false or null. What may follow it is left to the
// caller's grammar, which accepts only what ends a jcs token (whitespace,
// ',', ']', '}' or the end).
func (c *argsCanon) literal(lit string) bool {
	if !bytes.HasPrefix(c.in[c.pos:], []byte(lit)) {
		return false
	}
	c.pos += len(lit)
	c.out = append(c.out, lit...)
	return true
}

// number writes a number matching RFC 8259's grammar (jcs's numberPattern)
// as jcs does: strconv.ParseFloat, then jcs.NumberToJSON (appendNumber
// here). An integer of at most 2^53 in magnitude is already in that form
// (less the sign of -0) and is copied.
func (c *argsCanon) number() bool {
	in, i := c.in, c.pos
	start := i
	neg := i < len(in) && in[i] == '-'
	if neg {
		i++
	}
	switch {
	case i >= len(in):
		return false
	case in[i] == '0':
		i++
	case in[i] >= '1' && in[i] <= '9':
		for i++; i < len(in) && isDigit(in[i]); i++ {
		}
	default:
		return false
	}
	integer := in[start:i]
	if i < len(in) && in[i] == '.' {
		if i++; i >= len(in) || !isDigit(in[i]) {
			return false
		}
		for i++; i < len(in) && isDigit(in[i]); i++ {
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		if i++; i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if i >= len(in) || !isDigit(in[i]) {
			return false
		}
		for i++; i < len(in) && isDigit(in[i]); i++ {
		}
	}
	tok := in[start:i]
	c.pos = i
	if len(tok) == len(integer) {
		digits := tok
		if neg {
			digits = tok[1:]
		}
		if len(digits) < len(maxExactInt) || len(digits) == len(maxExactInt) && string(digits) <= maxExactInt {
			if neg && digits[0] == '0' {
				tok = digits // -0 is 0
			}
			c.out = append(c.out, tok...)
			return true
		}
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return false // out of range: jcs reports it
	}
	c.out = appendNumber(c.out, f)
	return true
}

// appendNumber appends a finite f as jcs.NumberToJSON writes it (the
// ECMAScript form of a double), without its allocations: the shortest
// decimal that reads back as f, in plain notation from 1e-6 up to but not
// including 1e21 and in exponent notation outside it, "-0" as "0".
func appendNumber(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0')
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	if f < 1e21 && f >= 1e-6 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	// Go writes at least two exponent digits, "1e+09"; ECMAScript "1e+9".
	if e := start + bytes.IndexByte(b[start:], 'e'); b[e+2] == '0' {
		b = append(b[:e+2], b[e+3:]...)
	}
	return b
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// str writes the string at c.pos (at its opening quote) in canonical form:
// escapes decoded, then '"', '\' and control characters escaped as
// \" \\ \b \t \n \f \r or \u00xx, everything else literal. It rejects
// what jcs rejects: raw control characters, invalid UTF-8, unknown escapes,
// malformed \u escapes and unpaired surrogates.
//
// The escapes \" \\ \b \f \n \r \t are their own canonical form, so runs
// of input holding only those and literal characters are copied as they
// are; only \/ and \uXXXX are rewritten.
func (c *argsCanon) str() (flags uint8, ok bool) {
	in, i := c.in, c.pos+1
	c.out = append(c.out, '"')
	start := i // the run of input not yet copied
	for {
		var escaped bool
		if i, escaped = plainRun(in, i); escaped {
			flags |= strEscaped
		}
		if i >= len(in) {
			return 0, false // unterminated
		}
		switch c := in[i]; {
		case c == '"':
		case c == '\\':
			if i+1 >= len(in) {
				return 0, false
			}
			if e := in[i+1]; e != '/' && e != 'u' {
				return 0, false
			}
		case c >= utf8.RuneSelf:
			// Non-ASCII characters, kept as they are if valid UTF-8.
			// Two-byte sequences (U+0080 to U+07FF) and the three-byte ones
			// whose second byte may be any continuation byte (U+1000 to
			// U+CFFF, U+E000 to U+FFFF) are checked here, the rest by
			// utf8.DecodeRune.
			for i < len(in) && in[i] >= utf8.RuneSelf {
				switch c := in[i]; {
				case c > 0xe0 && c < 0xf0 && c != 0xed && i+2 < len(in) && in[i+1]&0xc0 == 0x80 && in[i+2]&0xc0 == 0x80:
					i += 3
				case c >= 0xc2 && c < 0xe0 && i+1 < len(in) && in[i+1]&0xc0 == 0x80:
					i += 2
				default:
					r, n := utf8.DecodeRune(in[i:])
					if r == utf8.RuneError && n == 1 {
						return 0, false
					}
					i += n
				}
			}
			flags |= strNonASCII
			continue
		default:
			return 0, false // a raw control character
		}
		c.out = append(c.out, in[start:i]...)
		if in[i] == '"' {
			c.out = append(c.out, '"')
			c.pos = i + 1
			return flags, true
		}
		if in[i+1] == '/' {
			c.out = append(c.out, '/')
			i += 2
			start = i
			continue
		}
		r, ok := hex4(in, i+2)
		if !ok {
			return 0, false
		}
		i += 6
		if utf16.IsSurrogate(r) {
			if r >= 0xdc00 || i+6 > len(in) || in[i] != '\\' || in[i+1] != 'u' {
				return 0, false
			}
			lo, ok := hex4(in, i+2)
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return 0, false
			}
			i += 6
			r = utf16.DecodeRune(r, lo)
		}
		switch {
		case r >= utf8.RuneSelf:
			c.out = utf8.AppendRune(c.out, r)
			flags |= strNonASCII
		case r < 0x20 || r == '"' || r == '\\':
			c.out = appendEscapedASCII(c.out, byte(r))
			flags |= strEscaped
		default:
			c.out = append(c.out, byte(r))
		}
		start = i
	}
}

// plainRun returns the index of the first byte from in[i:] on that is
// '"', a control character, non-ASCII, or a '\\' that does not start one of
// the escapes \" \\ \b \f \n \r \t; or len(in). It reports whether it
// passed any of those escapes.
func plainRun(in []byte, i int) (j int, escaped bool) {
	for {
		j = i
		for ; j+16 <= len(in); j += 16 {
			w := in[j : j+16 : j+16]
			m0, m1 := stopBytes(binary.LittleEndian.Uint64(w)), stopBytes(binary.LittleEndian.Uint64(w[8:]))
			if m0 != 0 {
				j += bits.TrailingZeros64(m0) >> 3
				goto stop
			}
			if m1 != 0 {
				j += 8 + bits.TrailingZeros64(m1)>>3
				goto stop
			}
		}
		for j < len(in) && stringPlain[in[j]] {
			j++
		}
	stop:
		if j+1 < len(in) && in[j] == '\\' && escapeKept[in[j+1]] {
			i, escaped = j+2, true
			continue
		}
		return j, escaped
	}
}

// stopBytes has the top bit set in the lowest byte of x (as a little-endian
// word) that is '"', '\\', a control character or non-ASCII, and maybe in
// bytes above it: (v - 0x01…) &^ v has it in the lowest byte of v that is
// zero, (x - 0x20…) &^ x in the lowest byte below 0x20, and x in bytes
// >= 0x80.
func stopBytes(x uint64) uint64 {
	q, b := x^(lsb*'"'), x^(lsb*'\\')
	return ((q-lsb)&^q | (b-lsb)&^b | (x-lsb*0x20)&^x | x) & msb
}

// escapeKept marks the escape letters whose escape is its own canonical
// form: \" \\ \b \f \n \r \t.
var escapeKept = [256]bool{'"': true, '\\': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// hex4 decodes the four hex digits at in[i:].
func hex4(in []byte, i int) (rune, bool) {
	if i+4 > len(in) {
		return 0, false
	}
	var r rune
	for _, h := range in[i : i+4] {
		switch {
		case h >= '0' && h <= '9':
			h -= '0'
		case h >= 'a' && h <= 'f':
			h -= 'a' - 10
		case h >= 'A' && h <= 'F':
			h -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(h)
	}
	return r, true
}

// appendEscapedASCII appends '"', '\' or a control character escaped as
// RFC 8785 writes it.
func appendEscapedASCII(b []byte, c byte) []byte {
	const hexDigits = "0123456789abcdef"
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\t':
		return append(b, '\\', 't')
	case '\n':
		return append(b, '\\', 'n')
	case '\f':
		return append(b, '\\', 'f')
	case '\r':
		return append(b, '\\', 'r')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendUnescaped appends the string whose canonical form (between the
// quotes) is s: the inverse of the escaping str does.
func appendUnescaped(b, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b = append(b, '\b')
		case 't':
			b = append(b, '\t')
		case 'n':
			b = append(b, '\n')
		case 'f':
			b = append(b, '\f')
		case 'r':
			b = append(b, '\r')
		case 'u':
			r, _ := hex4(s, i+1)
			b = append(b, byte(r))
			i += 4
		default: // '"' or '\'
			b = append(b, s[i])
		}
	}
	return b
}

func (c *argsCanon) array(depth int) bool {
	if depth > maxArgsDepth {
		return false
	}
	c.pos++
	c.out = append(c.out, '[')
	c.skipSpace()
	if c.pos < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		return true
	}
	for {
		if !c.value(depth) {
			return false
		}
		c.skipSpace()
		if c.pos >= len(c.in) {
			return false
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
		case ']':
			c.pos++
			c.out = append(c.out, ']')
			return true
		default:
			return false
		}
	}
}

// object writes an object's members in document order, then, unless they
// already are, sorts them by key as RFC 8785 does (UTF-16 code units) and
// rewrites them in that order in place.
func (c *argsCanon) object(depth int) bool {
	if depth > maxArgsDepth {
		return false
	}
	c.pos++
	open := len(c.out)
	c.out = append(c.out, '{')
	c.skipSpace()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, '}')
		return true
	}
	base := len(c.members)
	sorted := true
	for {
		c.skipSpace()
		if c.pos >= len(c.in) || c.in[c.pos] != '"' {
			return false
		}
		m := argsMember{start: len(c.out), keyOff: len(c.out) + 1}
		flags, ok := c.str()
		if !ok {
			return false
		}
		m.keyLen = len(c.out) - 1 - m.keyOff
		key := c.out[m.keyOff : m.keyOff+m.keyLen]
		if flags&strNonASCII != 0 && hasSupplementary(key) {
			m.flags |= keySupplementary
		}
		if flags&strEscaped != 0 {
			off := len(c.keys)
			c.keys = appendUnescaped(c.keys, key)
			m.keyOff, m.keyLen = off, len(c.keys)-off
			m.flags |= keyInArena
		}
		m.prefix = keyPrefix(c.key(&m))
		c.skipSpace()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return false
		}
		c.pos++
		c.out = append(c.out, ':')
		if !c.value(depth) {
			return false
		}
		m.end = len(c.out)
		if sorted && len(c.members) > base && c.compareKeys(&c.members[len(c.members)-1], &m) >= 0 {
			sorted = false // out of order, or a duplicate
		}
		c.members = append(c.members, m)
		c.skipSpace()
		if c.pos >= len(c.in) {
			return false
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
			continue
		case '}':
			c.pos++
			c.out = append(c.out, '}')
		default:
			return false
		}
		break
	}
	members := c.members[base:]
	c.members = c.members[:base]
	if sorted {
		return true
	}
	if len(members) <= 12 {
		for i := 1; i < len(members); i++ {
			for j := i; j > 0 && c.compareKeys(&members[j-1], &members[j]) > 0; j-- {
				members[j-1], members[j] = members[j], members[j-1]
			}
		}
	} else {
		slices.SortFunc(members, func(a, b argsMember) int { return c.compareKeys(&a, &b) })
	}
	for i := 1; i < len(members); i++ {
		if c.compareKeys(&members[i-1], &members[i]) == 0 {
			return false // a duplicate key: jcs rejects it
		}
	}
	// Each reordering copies the object once; nested unsorted objects are
	// copied once per level. Past the budget, jcs's tree is cheaper.
	body := c.out[open+1 : len(c.out)-1]
	if c.moved += len(body); c.moved > c.budget {
		return false
	}
	c.scratch = append(c.scratch[:0], body...)
	w := open + 1
	for i, m := range members {
		if i > 0 {
			c.out[w] = ','
			w++
		}
		w += copy(c.out[w:], c.scratch[m.start-open-1:m.end-open-1])
	}
	return true
}

// key is a member's decoded key.
func (c *argsCanon) key(m *argsMember) []byte {
	if m.flags&keyInArena != 0 {
		return c.keys[m.keyOff : m.keyOff+m.keyLen]
	}
	return c.out[m.keyOff : m.keyOff+m.keyLen]
}

// keyPrefix is the first eight bytes of key as a big-endian number, zero
// padded: when two keys' prefixes differ, they order as the keys do.
func keyPrefix(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var p uint64
	for i, b := range key {
		p |= uint64(b) << (56 - 8*i)
	}
	return p
}

// compareKeys orders members by their keys' UTF-16 code units. Without
// characters beyond U+FFFF that is the byte order of the UTF-8 keys.
func (c *argsCanon) compareKeys(a, b *argsMember) int {
	if (a.flags|b.flags)&keySupplementary != 0 {
		return compareUTF16(c.key(a), c.key(b))
	}
	if a.prefix != b.prefix {
		return cmp.Compare(a.prefix, b.prefix)
	}
	return bytes.Compare(c.key(a), c.key(b))
}

// hasSupplementary reports whether valid UTF-8 s holds a character beyond
// U+FFFF (a four-byte sequence).
func hasSupplementary(s []byte) bool {
	for _, b := range s {
		if b >= 0xf0 {
			return true
		}
	}
	return false
}

// compareUTF16 compares valid UTF-8 strings by their UTF-16 code units. Up
// to the first character where they differ the order is the same; there,
// characters U+E000 to U+FFFF sort after those beyond U+FFFF, whose
// surrogates are 0xD800 to 0xDFFF.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmp.Compare(len(a), len(b))
	}
	// Equal prefixes put the character boundaries of a and b in the same
	// places, so both differing characters start here.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return cmp.Compare(utf16Order(ra), utf16Order(rb))
}

// utf16Order maps a character to a number ordered as its UTF-16 code units.
func utf16Order(r rune) rune {
	if r >= 0xe000 && r <= 0xffff {
		return r + 0x200000
	}
	return r
}
