package constraint

import (
	"encoding/json"
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

// passSets are constraint sets for the fast-path tests: URL checks on every
// argument or on named ones, path globs on the default or named arguments,
// argument values, and all of them at once.
func passSets(t testing.TB) []*Compiled {
	t.Helper()
	var out []*Compiled
	for _, s := range []Set{
		{AllowedDomains: []string{"api.github.com", "*.example.com", "10.0.0.1"}},
		{AllowedDomains: []string{"api.github.com"}, URLArgs: []string{"url", "endpoint"}},
		{PathGlobs: []string{"/srv/data/**", "/tmp/*.txt"}},
		{PathGlobs: []string{"/srv/**"}, PathArgs: []string{"src", "dst"}},
		{ArgValues: map[string][]string{"client": {"github", "git*"}, "mode": {"ro"}}},
		{AllowedDomains: []string{"api.github.com", "*.example.com"}, PathGlobs: []string{"/srv/data/**"},
			ArgValues: map[string][]string{"client": {"github"}}},
	} {
		c, err := s.Compile()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestPassAgrees checks the one-walk fast path of Check against the full
// listing: pass says yes exactly when there is nothing to list.
func TestPassAgrees(t *testing.T) {
	sets := passSets(t)
	values := []any{
		"https://api.github.com/x", "http://evil.com", "https://a.example.com", "is:open", "HTTP:\\\\evil.com",
		"/srv/data/a.csv", "/srv/../etc/passwd", "/tmp/x.txt", "relative", "github", "gitlab", "ro", "rw",
		float64(3), true, nil, []any{"/srv/data/a", "/srv/data/b"}, []any{"/srv/data/a", 7.0}, []string{"/tmp/a.txt"},
		map[string]any{"u": "http://evil.com"}, []any{"https://api.github.com"}, json.Number("12"),
	}
	names := []string{"url", "endpoint", "path", "paths", "file", "src", "dst", "client", "mode", "q"}
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 20000 {
		args := map[string]any{}
		for range rng.IntN(5) {
			args[names[rng.IntN(len(names))]] = values[rng.IntN(len(values))]
		}
		for j, c := range sets {
			if got, want := c.pass(args), c.violations(args) == nil; got != want {
				t.Fatalf("case %d, set %d, args %v: pass %v, violations %v", i, j, args, got, c.violations(args))
			}
		}
	}
}

// FuzzPass is TestPassAgrees on arguments from the fuzzer.
func FuzzPass(f *testing.F) {
	f.Add([]byte(`{"url":"https://api.github.com@evil.com","path":"/srv/../etc","client":"github"}`))
	f.Add([]byte(`{"paths":["/srv/data/a",1],"src":"/srv/x","endpoint":"http://a.example.com"}`))
	f.Add([]byte(`{"x":[[[["http:\\\\evil.com"]]]],"mode":"ro","client":"gitx"}`))
	sets := passSets(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var args map[string]any
		if json.Unmarshal(data, &args) != nil {
			return
		}
		for j, c := range sets {
			if got, want := c.pass(args), c.violations(args) == nil; got != want {
				t.Fatalf("set %d, args %s: pass %v, violations %v", j, data, got, c.violations(args))
			}
		}
	})
}
