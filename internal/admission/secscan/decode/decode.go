// Package decode undoes the encodings a malicious script hides a payload
// in — base64 (standard and URL alphabets), hex, backslash escapes (\x41,
// \101, \u0041, as Python, JavaScript and printf write them) and ROT13 —
// so that the content scanner can read the payload with its rules (issue
// 31). It is pure (no I/O) and bounded: a chain of encodings is followed
// to a fixed depth, the output of each layer is bounded, and only layers
// that decode to text are returned (an image or a font in base64 decodes
// to binary data and stops there).
package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Encoding names what decoded a layer.
type Encoding string

// The encodings.
const (
	Base64    Encoding = "base64"
	Base64URL Encoding = "base64url"
	Hex       Encoding = "hex"
	Escapes   Encoding = "escapes" // \xHH, \NNN (octal), \uHHHH, \U00HHHHHH
	ROT13     Encoding = "rot13"
)

// Layer is one decoding: what decoded it and the text it gave.
type Layer struct {
	Encoding Encoding
	Text     string
}

// Limits bound a decoding.
type Limits struct {
	// Depth is how many layers are decoded at most (default 3).
	Depth int
	// MaxBytes bounds each layer's output; a longer one is cut there
	// (default 64 KiB).
	MaxBytes int
	// MinLen is the shortest input taken as base64 or hex (default 16):
	// shorter words decode by chance.
	MinLen int
	// ROT13, when set, also tries ROT13 on the input (the caller saw
	// codecs.decode(…, 'rot13') or the like: every text "decodes" as ROT13,
	// so it is never tried blind).
	ROT13 bool
}

func (l Limits) withDefaults() Limits {
	if l.Depth <= 0 {
		l.Depth = 3
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = 64 << 10
	}
	if l.MinLen <= 0 {
		l.MinLen = 16
	}
	return l
}

// Decode decodes s layer by layer, up to lim.Depth layers, and returns the
// layers that decoded to text, outermost first; none when s is not encoded
// (or decodes to binary data).
func Decode(s string, lim Limits) []Layer {
	lim = lim.withDefaults()
	var out []Layer
	cur := s
	for range lim.Depth {
		enc, text, ok := once(cur, lim)
		if !ok {
			break
		}
		out = append(out, Layer{Encoding: enc, Text: text})
		cur = text
		lim.ROT13 = false // ROT13 applies to what the caller named, not to layers under it
	}
	return out
}

// once decodes one layer of s.
func once(s string, lim Limits) (Encoding, string, bool) {
	if lim.ROT13 {
		if t := rot13(s); isText(t) {
			return ROT13, cut(t, lim.MaxBytes), true
		}
	}
	if bytes.IndexByte([]byte(s), '\\') >= 0 {
		if t, ok := unescape(s, lim.MaxBytes); ok && isText(t) {
			return Escapes, t, true
		}
	}
	if len(s) < lim.MinLen {
		return "", "", false
	}
	if isHex(s) {
		b, err := hex.DecodeString(s[:min(len(s), 2*lim.MaxBytes)])
		if err == nil && isText(string(b)) {
			return Hex, string(b), true
		}
		return "", "", false // a digest or binary data; no other encoding reads pure hex sensibly
	}
	for _, c := range []struct {
		enc Encoding
		std *base64.Encoding
		raw *base64.Encoding
	}{{Base64, base64.StdEncoding, base64.RawStdEncoding}, {Base64URL, base64.URLEncoding, base64.RawURLEncoding}} {
		in := s
		if max := c.std.EncodedLen(lim.MaxBytes); len(in) > max {
			in = in[:max]
		}
		e := c.std
		if len(in)%4 != 0 {
			e = c.raw
		}
		b, err := e.DecodeString(in)
		if err == nil && isText(string(b)) {
			return c.enc, string(b), true
		}
		if t, ok := fromUTF16LE(b); err == nil && ok {
			return c.enc, cut(t, lim.MaxBytes), true
		}
	}
	return "", "", false
}

// fromUTF16LE is b read as UTF-16LE text (PowerShell's -EncodedCommand
// encodes its script so), when b has an even length of at least 8 bytes,
// at least 90 % of its odd bytes are 0 (ASCII written as UTF-16LE) and it
// reads as text; ok is false otherwise.
func fromUTF16LE(b []byte) (string, bool) {
	if len(b) < 8 || len(b)%2 != 0 {
		return "", false
	}
	zero := 0
	for i := 1; i < len(b); i += 2 {
		if b[i] == 0 {
			zero++
		}
	}
	if zero*10 < len(b)/2*9 {
		return "", false
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	t := string(utf16.Decode(u))
	return t, isText(t)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func isHex(s string) bool {
	if len(s)%2 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// isText reports whether b is text a rule can read: valid UTF-8, not
// empty, no NUL, and at least 95 % printable characters or white space.
func isText(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	n, bad := 0, 0
	for _, r := range s {
		n++
		switch {
		case r == 0:
			return false
		case r == '\n' || r == '\t' || r == '\r':
		case r < 0x20 || r == 0x7F || r == utf8.RuneError:
			bad++
		}
	}
	return bad*20 <= n
}

// rot13 rotates ASCII letters by 13.
func rot13(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		case 'A' <= c && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
		}
	}
	return string(b)
}

// unescape decodes backslash escapes: \xHH, \NNN (one to three octal
// digits), \uHHHH, \U00HHHHHH and the single-letter ones (\n, \t …), as
// printf, Python and JavaScript read them; it reports false when s holds
// no \x, octal or \u escape (a Windows path is not a payload). Bytes from
// \x and octal escapes are taken as bytes (UTF-8 when they form it).
func unescape(s string, maxBytes int) (string, bool) {
	var b []byte
	coded := false
	for i := 0; i < len(s) && len(b) < maxBytes; {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b = append(b, c)
			i++
			continue
		}
		d := s[i+1]
		switch {
		case d == 'x' && i+4 <= len(s) && isHex(s[i+2:i+4]):
			v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
			b = append(b, byte(v))
			i += 4
			coded = true
		case d >= '0' && d <= '7':
			j := i + 1
			for j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i+1:j], 8, 16)
			b = append(b, byte(v))
			i = j
			coded = true
		case (d == 'u' && i+6 <= len(s) && isHex(s[i+2:i+6])) || (d == 'U' && i+10 <= len(s) && isHex(s[i+2:i+10])):
			n := 4
			if d == 'U' {
				n = 8
			}
			v, _ := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
			b = utf8.AppendRune(b, rune(v))
			i += 2 + n
			coded = true
		default:
			switch d {
			case 'n':
				b = append(b, '\n')
			case 't':
				b = append(b, '\t')
			case 'r':
				b = append(b, '\r')
			default:
				b = append(b, d)
			}
			i += 2
		}
	}
	return string(b), coded
}

// UTF16Text is data, a file's contents, as UTF-8 when it is UTF-16 text:
// it starts with a UTF-16 byte-order mark (FF FE little-endian, FE FF
// big-endian; the mark is dropped), or it has no mark and its first 8 KiB
// are ASCII interleaved with NUL bytes (at least 90 % of the bytes at odd
// offsets are 0 and of those at even offsets not, or the reverse for
// big-endian), and it decodes to text. ok is false for anything else: a
// binary file stays binary.
func UTF16Text(data []byte) (text []byte, ok bool) {
	le := true
	switch {
	case len(data) >= 2 && data[0] == 0xFF && data[1] == 0xFE:
		data = data[2:]
	case len(data) >= 2 && data[0] == 0xFE && data[1] == 0xFF:
		data, le = data[2:], false
	default:
		head := data[:min(len(data), 8<<10)]
		if len(head) < 4 {
			return nil, false
		}
		var zero [2]int
		for i, c := range head {
			if c == 0 {
				zero[i%2]++
			}
		}
		half := len(head) / 2
		switch {
		case zero[1]*10 >= half*9 && zero[0]*10 <= half:
		case zero[0]*10 >= half*9 && zero[1]*10 <= half:
			le = false
		default:
			return nil, false
		}
	}
	if len(data)%2 != 0 {
		data = data[:len(data)-1]
	}
	u := make([]uint16, len(data)/2)
	for i := range u {
		if le {
			u[i] = uint16(data[2*i]) | uint16(data[2*i+1])<<8
		} else {
			u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
		}
	}
	t := string(utf16.Decode(u))
	if !isText(t[:len(cut(t, 8<<10))]) {
		return nil, false
	}
	return []byte(t), true
}
