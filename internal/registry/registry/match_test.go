package registry

import (
	"strings"
	"testing"
)

// referenceMatch is what a page query matched before the matcher: the
// name and description, lower-cased, contain the query, lower-cased.
func referenceMatch(name, description, query string) bool {
	return strings.Contains(strings.ToLower(name+"\n"+description), strings.ToLower(query))
}

var matcherCases = []struct{ name, description, query string }{
	{"pdf-tools", "Fill PDF forms", "pdf"},
	{"pdf-tools", "Fill PDF forms", "PDF F"},
	{"pdf-tools", "Fill PDF forms", "fill pdf forms"},
	{"pdf-tools", "Fill PDF forms", "forms!"},
	{"pdf-tools", "Fill PDF forms", ""},
	{"pdf-tools", "Fill PDF forms", "tools\nfill"},  // spans name and description
	{"pdf-tools", "Fill PDF forms", "tools\nforms"}, // a newline, no match
	{"pdf-tools", "Fill PDF forms", "s"},
	{"a", "", "a\n"},
	{"", "", "\n"},
	{"AAA", "aaaa", "aaaaa"},
	{"abc", "xyzABC", "zab"},
	{"abc", "xyzABC", "XYZABC"},
	{"q", "Q[q{Q@", "q@"}, // bytes next to the letters in ASCII
	{"q", "[{@`", "@"},
	{"kelvin", "20 \u212a above", "20 k"},             // KELVIN SIGN lower-cases to ASCII k
	{"kelvin", "20 K above", "20 \u212a"},             // and so does the query's
	{"istanbul", "\u0130stanbul", "i\u0307stanbul"},   // İ lower-cases to i + combining dot
	{"istanbul", "\u0130stanbul", "istanbul"},         // which plain i does not match
	{"straße", "STRASSE", "strasse"},                  // no full case folding, as ToLower
	{"σοφία", "ΣΟΦΊΑ and more", "σοφία"},              // Greek
	{"naïve", "Naïve Bayes — fast", "ÏVE"},            // non-ASCII query, non-ASCII text
	{"naive", "Naive Bayes", "ÏVE"},                   // non-ASCII query, ASCII text
	{"bad", "invalid \xff byte", "\ufffd"},            // an invalid byte lower-cases to U+FFFD
	{"bad", "invalid \xff byte", "d \ufffd b"},        // in context
	{"bad", "invalid \xffbyte", "invalid \ufffdbyte"}, // no space
	{"emoji", "Ship it 🚀 now", "🚀 NOW"},
}

// TestMatcherDifferential holds the matcher to referenceMatch.
func TestMatcherDifferential(t *testing.T) {
	for _, tc := range matcherCases {
		want := referenceMatch(tc.name, tc.description, tc.query)
		got := newMatcher(tc.query).match(tc.name, tc.description, isASCII(tc.name) && isASCII(tc.description))
		if got != want {
			t.Errorf("match(%q, %q, query %q) = %v, want %v", tc.name, tc.description, tc.query, got, want)
		}
	}
}

// FuzzMatcher holds the matcher to referenceMatch on arbitrary text; the
// seed corpus is matcherCases.
func FuzzMatcher(f *testing.F) {
	for _, tc := range matcherCases {
		f.Add(tc.name, tc.description, tc.query)
	}
	f.Fuzz(func(t *testing.T, name, description, query string) {
		m := newMatcher(query)
		// Twice, so that the reused buffer is exercised.
		for range 2 {
			want := referenceMatch(name, description, query)
			if got := m.match(name, description, isASCII(name) && isASCII(description)); got != want {
				t.Fatalf("match(%q, %q, query %q) = %v, want %v", name, description, query, got, want)
			}
		}
	})
}
