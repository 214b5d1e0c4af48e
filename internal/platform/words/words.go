// Package words splits names and text into lower-case words and folds
// English plurals, for the parts that compare what names say rather than
// how they are spelled: ranked search over skills (registry/search) and
// the promotion drafter's argument matcher (admission/promote). Each
// caller adds its own steps on top (stop words and stemming in search,
// synonyms in the matcher); the split and the plural folding are here
// once, so that "pdf_tools", "pdf-tools" and "PDF tools" give the same
// words everywhere.
package words

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBytes bounds one word: a longer run of letters and digits (outside
// text: a description, a query, a schema's argument name) is cut there,
// on a rune boundary.
const MaxBytes = 64

// AppendText appends the words of s to dst and returns it: s split at
// every rune that is neither a letter nor a digit ("pdf-tools",
// "pdf_tools" and "PDF tools" give "pdf", "tools"), each word lower-cased
// and cut to [MaxBytes]. A capital inside a word does not split it, so
// that prose keeps "GitHub" one word.
func AppendText(dst []string, s string) []string { return appendWords(dst, s, false) }

// AppendName appends the words of a name to dst and returns it: as
// [AppendText], and also split where a capital follows a small letter
// or a digit (camelCase: "perPage" and "per_page" give "per", "page";
// "utf8Name" gives "utf8", "name"). A run of capitals stays one word
// ("HTTPServer" gives "httpserver").
func AppendName(dst []string, s string) []string { return appendWords(dst, s, true) }

// appendWords is AppendText, or AppendName when camel is set.
func appendWords(dst []string, s string, camel bool) []string {
	var buf []byte
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := s[start:end]
		start = -1
		if !IsLowerASCII(w) {
			buf = buf[:0]
			for _, r := range w {
				buf = utf8.AppendRune(buf, unicode.ToLower(r))
			}
			w = string(buf)
		}
		if len(w) > MaxBytes {
			w = w[:MaxBytes]
			for !utf8.ValidString(w) {
				w = w[:len(w)-1]
			}
		}
		dst = append(dst, w)
	}
	prevLower := false // the rune before was a letter or digit that is not a capital
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) { // an invalid byte is utf8.RuneError: no letter
			flush(i)
			prevLower = false
			continue
		}
		if camel {
			upper := unicode.IsUpper(r)
			if upper && prevLower {
				flush(i)
			}
			prevLower = !upper
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return dst
}

// Singular folds an English plural onto its singular: "queries" →
// "query" (when more than five bytes), "classes" → "class", "docs" →
// "doc". A word ending in "ss", "us" or "is" ("class", "status",
// "analysis") is left alone, as are words of three bytes or fewer and
// words holding anything but lower-case ASCII, which w is expected to be
// (a word of [AppendText] or [AppendName]). Folding is idempotent.
func Singular(w string) string {
	if len(w) <= 3 || w[len(w)-1] != 's' || !IsLowerASCII(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 5:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// IsLowerASCII reports whether w holds no capital and no byte outside
// ASCII, so that it is its own lower case: the words [Singular] folds,
// and those a caller's own English rules (search's stemming) apply to.
func IsLowerASCII(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}
