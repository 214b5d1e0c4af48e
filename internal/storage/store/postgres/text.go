package postgres

import (
	"strings"
	"unicode/utf8"
)

// PostgreSQL's text holds valid UTF-8 without NUL bytes only, while a
// scanned directory's name may be any bytes (a hostile root may hold one
// that is not UTF-8), and the registry must keep such a skill, rejected
// or not, exactly as SQLite does: one bad name must not fail a whole scan,
// and a rescan must find the same directory unchanged. The registry's
// text columns (paths, keys, names) therefore hold txt(s): s itself when
// it is valid UTF-8 without NUL bytes and does not start with textMark,
// else textMark followed by s with every byte that is not part of valid
// UTF-8, every NUL and every '%' written as %XX. The mapping is one to
// one, so equality filters work on encoded values, and untxt reverses it.
// (Encoded values sort before the others: listings order such skills
// first, where SQLite orders them by their bytes.)
const textMark = "\x01"

// txt encodes s for a text column (see textMark).
func txt(s string) string {
	if !strings.HasPrefix(s, textMark) && utf8.ValidString(s) && !strings.Contains(s, "\x00") {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(textMark) + len(s) + 16)
	b.WriteString(textMark)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r == 0 || r == '%' {
			b.WriteByte('%')
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xF])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// untxt decodes what txt encoded.
func untxt(s string) string {
	rest, ok := strings.CutPrefix(s, textMark)
	if !ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(rest))
	for i := 0; i < len(rest); i++ {
		if rest[i] == '%' && i+2 < len(rest) && unhex(rest[i+1]) >= 0 && unhex(rest[i+2]) >= 0 {
			b.WriteByte(byte(unhex(rest[i+1])<<4 | unhex(rest[i+2])))
			i += 2
			continue
		}
		b.WriteByte(rest[i])
	}
	return b.String()
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// txts encodes every string of ss.
func txts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = txt(s)
	}
	return out
}
