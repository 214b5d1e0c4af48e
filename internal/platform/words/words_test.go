package words_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/platform/words"
)

func TestAppend(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		in         string
		text, name []string
	}{
		{"pdf_tools", []string{"pdf", "tools"}, []string{"pdf", "tools"}},
		{"pdf-tools", []string{"pdf", "tools"}, []string{"pdf", "tools"}},
		{"PDF tools", []string{"pdf", "tools"}, []string{"pdf", "tools"}},
		{"perPage", []string{"perpage"}, []string{"per", "page"}},
		{"issue_number", []string{"issue", "number"}, []string{"issue", "number"}},
		{"utf8Name v2", []string{"utf8name", "v2"}, []string{"utf8", "name", "v2"}},
		{"HTTPServer", []string{"httpserver"}, []string{"httpserver"}},
		{"GitHub's repositories.", []string{"github", "s", "repositories"}, []string{"git", "hub", "s", "repositories"}},
		{"Ünïcode ÉTÉ 東京", []string{"ünïcode", "été", "東京"}, []string{"ünïcode", "été", "東京"}},
		{"x\xffy", []string{"x", "y"}, []string{"x", "y"}},
		{"  -_ ", nil, nil},
		{"", nil, nil},
		{long + "Abc", []string{strings.Repeat("x", 64)}, []string{strings.Repeat("x", 64), "abc"}},
		{strings.Repeat("é", 40), []string{strings.Repeat("é", 32)}, []string{strings.Repeat("é", 32)}},
	}
	for _, tc := range tests {
		if got := words.AppendText(nil, tc.in); !reflect.DeepEqual(got, tc.text) {
			t.Errorf("AppendText(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := words.AppendName(nil, tc.in); !reflect.DeepEqual(got, tc.name) {
			t.Errorf("AppendName(%q) = %q, want %q", tc.in, got, tc.name)
		}
	}
	if got, want := words.AppendName([]string{"kept"}, "a_b"), []string{"kept", "a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("AppendName appends: got %q, want %q", got, want)
	}
}

func TestSingular(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"queries", "query"},
		{"repositories", "repository"},
		{"carries", "carry"},
		{"pies", "pie"}, // "ies" of five bytes or fewer loses the s only
		{"classes", "class"},
		{"addresses", "address"},
		{"docs", "doc"},
		{"labels", "label"},
		{"issues", "issue"},
		{"class", "class"},
		{"status", "status"},
		{"analysis", "analysis"},
		{"this", "this"},
		{"its", "its"},
		{"bus", "bus"},
		{"naïves", "naïves"},
		{"Docs", "Docs"},
		{"", ""},
	} {
		if got := words.Singular(tc.in); got != tc.want {
			t.Errorf("Singular(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestIsLowerASCII(t *testing.T) {
	for in, want := range map[string]bool{"": true, "abc1_": true, "aBc": false, "é": false, "\xff": false} {
		if got := words.IsLowerASCII(in); got != want {
			t.Errorf("IsLowerASCII(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzWords checks that any text (a query, a description, an argument
// name from an upstream server's schema) gives non-empty, bounded, valid
// words of letters and digits, each its own lower case; that a name's
// words are the text's words split further; and that Singular is
// idempotent.
func FuzzWords(f *testing.F) {
	f.Add("issue_number perPage HTTPServer")
	f.Fuzz(func(t *testing.T, s string) {
		text, name := words.AppendText(nil, s), words.AppendName(nil, s)
		for _, ws := range [][]string{text, name} {
			for _, w := range ws {
				if w == "" || len(w) > words.MaxBytes || !utf8.ValidString(w) {
					t.Fatalf("word %q of %q", w, s)
				}
				for _, r := range w {
					if !unicode.IsLetter(r) && !unicode.IsDigit(r) || unicode.ToLower(r) != r {
						t.Fatalf("word %q of %q holds %q", w, s, r)
					}
				}
				if once := words.Singular(w); words.Singular(once) != once || len(once) > len(w) {
					t.Fatalf("Singular(%q) = %q, again %q", w, once, words.Singular(once))
				}
			}
		}
		cut := false
		for _, w := range text {
			cut = cut || len(w) >= words.MaxBytes-utf8.UTFMax
		}
		if !cut && strings.Join(text, "") != strings.Join(name, "") {
			t.Fatalf("%q: name words %q do not split text words %q", s, name, text)
		}
	})
}
