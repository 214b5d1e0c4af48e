package search

import (
	"strings"

	"github.com/skillgate/skillgate/internal/platform/words"
)

// MaxQueryTerms bounds the terms a query is scored on: a query longer than
// that is cut (the first terms kept), so that a pasted paragraph costs
// what a sentence does.
const MaxQueryTerms = 32

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

// Terms appends the terms of s to dst and returns it: the words of s
// ([words.AppendText]: split at every rune that is not a letter or a
// digit, so "pdf-tools", "pdf_tools" and "PDF tools" give the same
// terms; lower-cased; cut to 64 bytes), stop words dropped, each term
// stemmed ([Stem]).
func Terms(dst []string, s string) []string {
	n := len(dst)
	ws := words.AppendText(dst, s)
	out := ws[:n] // terms overwrite the words they come from, in place
	for _, w := range ws[n:] {
		if !stopwords[w] {
			out = append(out, Stem(w))
		}
	}
	if len(out) == n {
		return dst // no term: dst as given (nil stays nil)
	}
	return out
}

// Stem reduces a lower-case English word to a stem shared by its common
// inflections, so that "images", "imaging" and "image" meet, and
// "visualize", "visualizing" and "visualization" do: a light suffix
// stripper (plurals, folded by [words.Singular], then -ation, -ing, -ed,
// a final e), not Porter's algorithm. Words of three bytes or fewer, and
// words with a non-ASCII byte, are left alone; words of four lose a
// plural s only.
func Stem(w string) string {
	if len(w) <= 3 || !words.IsLowerASCII(w) {
		return w
	}
	if w = words.Singular(w); len(w) <= 4 {
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
