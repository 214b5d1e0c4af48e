package constraint

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestASCIIHelpers checks the byte-wise helpers of urlHost against the
// standard library functions they stand for, on edge cases and random
// strings (ASCII, controls, UTF-8, invalid UTF-8).
func TestASCIIHelpers(t *testing.T) {
	cases := []string{
		"", " ", "\x00", "\t\n\r", " \x1fhttp://x \x00", "\x7f", "\x80", "\xff ", " \xc3\xa9 ",
		"é", "ſ", "K", "HTTP", "hTtPs", "httpſ", "wss", "ws ", "a\rb", "a\nb", "a\tb",
		"\u2028", "\u00a0x\u00a0", "\xc3", " \xe2\x80",
	}
	alphabet := []string{"a", "Z", "s", "S", "ſ", "K", "K", " ", "\t", "\n", "\r", "\x00", "\x1f", "\x7f", "\x80", "\xc3", "\xa9", "é", "/", ":", "\u00a0"}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got, want := trimControlSpace(s), strings.TrimFunc(s, func(r rune) bool { return r <= ' ' }); got != want {
			t.Fatalf("trimControlSpace(%q) = %q, strings.TrimFunc gives %q", s, got, want)
		}
		if got, want := hasTabOrNewline(s), strings.ContainsAny(s, "\t\n\r"); got != want {
			t.Fatalf("hasTabOrNewline(%q) = %v, strings.ContainsAny gives %v", s, got, want)
		}
		isASCII := true
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				isASCII = false
			}
		}
		for _, sp := range specialSchemes {
			// urlHost compares only ASCII schemes; beyond ASCII, EqualFold
			// folds more (ſ is s, K is k) and the helper must say no.
			got, want := equalFoldASCII(s, sp), strings.EqualFold(s, sp)
			if isASCII && got != want || !isASCII && got {
				t.Fatalf("equalFoldASCII(%q, %q) = %v, strings.EqualFold gives %v", s, sp, got, want)
			}
		}
	}
}
