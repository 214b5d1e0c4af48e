package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQueryTerms bounds the terms a query is scored on: a query longer than
// that is cut (the first terms kept), so that a pasted paragraph costs
// what a sentence does.
const MaxQueryTerms = 32

// maxTermBytes bounds one term: a longer run of letters is cut there.
const maxTermBytes = 64

// stopwords are the English words too common in task phrasings and skill
// descriptions to tell skills apart ("use this skill when …").
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by can do does for from how i if in into is it its
		me my of on or our so that the their them then there these this those to use used using want was we what
		when where which who will with you your should would could need needs help any all some`) {
		m[w] = true
	}
	return m
}()

// Terms appends the terms of s to dst and returns it: s split at every
// rune that is not a letter or a digit (so "pdf-tools", "pdf_tools" and
// "PDF tools" give the same terms), lower-cased, stop words dropped, each
// term stemmed ([Stem]) and cut to 64 bytes.
func Terms(dst []string, s string) []string {
	var buf []byte
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := s[start:end]
		start = -1
		if !isLowerASCII(w) {
			buf = buf[:0]
			for _, r := range w {
				buf = utf8.AppendRune(buf, unicode.ToLower(r))
			}
			w = string(buf)
		}
		if len(w) > maxTermBytes {
			w = w[:maxTermBytes]
			for !utf8.ValidString(w) {
				w = w[:len(w)-1]
			}
		}
		if stopwords[w] {
			return
		}
		dst = append(dst, Stem(w))
	}
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
	return dst
}

// isLowerASCII reports whether w holds no upper-case letter and no byte
// outside ASCII, so that it is its own lower case.
func isLowerASCII(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// Stem reduces a lower-case English word to a stem shared by its common
// inflections, so that "images", "imaging" and "image" meet, and
// "visualize", "visualizing" and "visualization" do: a light suffix
// stripper (plurals, -ation, -ing, -ed, a final e), not Porter's
// algorithm. Words of three bytes or fewer, and words with a non-ASCII
// byte, are left alone; words of four lose a plural s only.
func Stem(w string) string {
	if len(w) <= 3 || !isLowerASCII(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 5:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	if len(w) <= 4 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ization") && len(w) > 9:
		w = w[:len(w)-5] + "e"
	case strings.HasSuffix(w, "ation") && len(w) > 7:
		w = w[:len(w)-3] + "e"
	case strings.HasSuffix(w, "ing") && len(w) > 5 && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4 && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	}
	if strings.HasSuffix(w, "e") && len(w) > 4 {
		w = w[:len(w)-1]
	}
	return w
}

// hasVowel reports whether w holds a vowel (or y), so that "string" and
// "bed" keep their endings.
func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

// undouble drops the last letter of a stem ending in a doubled consonant
// other than l, s or z ("running" → "run", "debugged" → "debug").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}
