package codescan

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// kinds renders tokens as KIND:TEXT, without line ends, for the tables.
func kinds(toks []Token) string {
	var b strings.Builder
	for _, t := range toks {
		if t.Kind == Newline {
			b.WriteString("NL ")
			continue
		}
		b.WriteString(map[TokKind]string{Name: "N", Number: "D", String: "S", Comment: "C", Op: "O", Regexp: "R", Template: "T"}[t.Kind])
		b.WriteString(":" + t.Text + " ")
	}
	return strings.TrimSpace(b.String())
}

func TestTokenizePython(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"comment not code", "x = 1  # os.system('rm')\n", "N:x O:= D:1 C:# os.system('rm') NL"},
		{"hash in string", "s = '# not a comment'\n", "N:s O:= S:'# not a comment' NL"},
		{"triple quotes", "d = \"\"\"a\n'b'\n# c\"\"\"\ny = 2\n", "N:d O:= S:\"\"\"a\n'b'\n# c\"\"\" NL N:y O:= D:2 NL"},
		{"raw and bytes", "r'\\d+' + rb\"\\x00\" + Br'\\'' \n", `S:r'\d+' O:+ S:rb"\x00" O:+ S:Br'\'' NL`},
		{"f-string with same quote", "f'{d['k']} {x!r}'\n", "S:f'{d['k']} {x!r}' NL"},
		{"f-string doubled braces", "f'{{literal}} {v}'\n", "S:f'{{literal}} {v}' NL"},
		{"f-string nested", "f\"{f'{a}'}\"\n", "S:f\"{f'{a}'}\" NL"},
		{"continuation", "x = 1 + \\\n    2\n", "N:x O:= D:1 O:+ D:2 NL"},
		{"brackets join lines", "f(a,\n  b)\n", "N:f O:( N:a O:, N:b O:) NL"},
		{"numbers", "n = 10**10 + 0x1F + 1e-3 + 1_000\n", "N:n O:= D:10 O:* O:* D:10 O:+ D:0x1F O:+ D:1e-3 O:+ D:1_000 NL"},
		{"name with prefix letters", "rb = br\n", "N:rb O:= N:br NL"},
	} {
		got, err := TokenizePython([]byte(tc.src))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if k := kinds(got); k != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, k, tc.want)
		}
	}
}

func TestTokenizePythonLines(t *testing.T) {
	toks, err := TokenizePython([]byte("a = '''x\ny'''\nb = \\\n  c\n  # d\n"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, tk := range toks {
		if tk.Kind != Newline {
			lines = append(lines, tk.Line)
		}
	}
	want := []int{1, 1, 1, 3, 3, 4, 5}
	if len(lines) != len(want) {
		t.Fatalf("lines %v, want %v", lines, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Fatalf("lines %v, want %v", lines, want)
		}
	}
	if toks[len(toks)-2].Col != 2 {
		t.Fatalf("comment column %d, want 2", toks[len(toks)-2].Col)
	}
}

func TestTokenizeJS(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"line comment", "a = 1 // eval(x)\n", "N:a O:= D:1 C:// eval(x) NL"},
		{"block comment", "/* exec(\n) */ b\n", "C:/* exec(\n) */ N:b NL"},
		{"template with substitution", "t = `a ${x + `in ${y}`} b`\n", "N:t O:= T:`a ${ N:x O:+ T:`in ${ N:y T:}` T:} b` NL"},
		{"regexp after operator", "r = /a\\/b[/]/g.test(s)\n", "N:r O:= R:/a\\/b[/]/g O:. N:test O:( N:s O:) NL"},
		{"division after name", "q = a / b / c\n", "N:q O:= N:a O:/ N:b O:/ N:c NL"},
		{"division after bracket", "q = (a) / 2\n", "N:q O:= O:( N:a O:) O:/ D:2 NL"},
		{"regexp after keyword", "return /x/.source\n", "N:return R:/x/ O:. N:source NL"},
		{"regexp after comment", "x = /* c */ /y/\n", "N:x O:= C:/* c */ R:/y/ NL"},
		{"strings", `s = 'it\'s' + "a\"b"` + "\n", `N:s O:= S:'it\'s' O:+ S:"a\"b" NL`},
		{"shebang", "#!/usr/bin/env node\nx\n", "N:x NL"},
		{"line continuation in string", "s = 'a\\\nb'\n", "N:s O:= S:'a\\\nb' NL"},
	} {
		got, err := TokenizeJS([]byte(tc.src))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if k := kinds(got); k != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, k, tc.want)
		}
	}
}

func TestTokenizeErrors(t *testing.T) {
	for _, tc := range []struct {
		lang Lang
		src  string
		want error
	}{
		{Python, "s = 'open\n", ErrUnterminated},
		{Python, "s = '''never", ErrUnterminated},
		{Python, "f(a]", ErrUnbalanced},
		{Python, strings.Repeat("(", MaxDepth+1), ErrTooDeep},
		{Python, "f'" + strings.Repeat("{f\"{f'", MaxDepth), ErrTooDeep},
		{JavaScript, "`a ${b", ErrUnbalanced},
		{JavaScript, "/* never", ErrUnterminated},
		{JavaScript, "x = 'open\n", ErrUnterminated},
		{JavaScript, strings.Repeat("[", MaxDepth+1), ErrTooDeep},
	} {
		toks, err := Tokenize(tc.lang, []byte(tc.src))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s %.40q: error %v, want %v (tokens %d)", tc.lang, tc.src, err, tc.want, len(toks))
		}
	}
}

// TestHostileInputIsLinear: inputs built to make a tokenizer or the
// analysis backtrack, recurse or rescan take time in proportion to their
// size (the analysis' per-call argument scans included).
func TestHostileInputIsLinear(t *testing.T) {
	inputs := map[string]func(n int) string{
		"comments then slashes": func(n int) string { return strings.Repeat("/*c*/ ", n) + strings.Repeat("a / ", n) },
		"nested f-strings":      func(n int) string { return strings.Repeat("f'{f\"{", n/4) },
		"many calls":            func(n int) string { return strings.Repeat("os.system(x)\n", n/2) },
		"deep call": func(n int) string {
			return strings.Repeat("f(", 400) + strings.Repeat("x,", n) + strings.Repeat(")", 400)
		},
		"long assignment chain": func(n int) string { return strings.Repeat("a = b = c = d\n", n/2) },
		"unclosed brackets":     func(n int) string { return strings.Repeat("exec(a ", n/2) },
		"nested download callbacks": func(n int) string {
			return "const https = require('https');\n" + strings.Repeat("https.get(u, (r) => { ", 200) + strings.Repeat("b += r; f(b);\n", n/4) + strings.Repeat("});", 200)
		},
	}
	for name, gen := range inputs {
		for _, lang := range []Lang{Python, JavaScript} {
			small, large := []byte(gen(2000)), []byte(gen(16000))
			ts := timeIt(func() { Analyze(lang, small); Capabilities(lang, small) })
			tl := timeIt(func() { Analyze(lang, large); Capabilities(lang, large) })
			t.Logf("%s %s: %v for %d bytes, %v for %d", name, lang, ts, len(small), tl, len(large))
			if tl > 30*ts+50*time.Millisecond {
				t.Errorf("%s %s: %v for %d bytes, %v for %d: not linear", name, lang, ts, len(small), tl, len(large))
			}
		}
	}
}

// timeIt is the least time of three runs of f: CPU time of the thread
// where it can be read ([elapsed]), so that a busy machine does not make
// a linear run look superlinear.
func timeIt(f func()) time.Duration {
	best := time.Duration(1 << 62)
	for range 3 {
		best = min(best, elapsed(f))
	}
	return best
}
