package codescan

import (
	"bytes"
	"testing"
)

// FuzzTokenize feeds arbitrary source to both tokenizers and the analysis:
// none may panic, every token's text is the source's at its line and
// column, lines never go back, and every flow and capability is on a line
// of the source. The seed corpus is testdata/fuzz/FuzzTokenize plus the
// cases below.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"import base64, subprocess\nc = base64.b64decode(B)\nsubprocess.run(c, shell=True)\n",
		"f'{d[\"k\"]!r:>{w}}' + rb'\\x00' + '''a\n'''\n",
		"while True:\n    buf.append(buf[-1] * 2)\n",
		"const t = `a ${b + `c ${d}`} e` / 2 / /re[/]/g;\n",
		"fetch(u).then(r => r.text()).then(eval)\n",
		"x = \\\n  1\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, js bool) {
		lang := Python
		if js {
			lang = JavaScript
		}
		toks, _ := Tokenize(lang, src)
		lines := bytes.Count(src, []byte("\n")) + 1
		prev := 1
		for _, tk := range toks {
			if tk.Line < prev || tk.Line > lines || tk.Col < 0 {
				t.Fatalf("token %+v after line %d (of %d)", tk, prev, lines)
			}
			prev = tk.Line
			if tk.Kind == Newline {
				continue
			}
			line := lineOf(src, tk.Line)
			if !bytes.HasPrefix(append(line[tk.Col:len(line):len(line)], src[lineEnd(src, tk.Line):]...), []byte(tk.Text)) {
				t.Fatalf("token %+v is not the source's text at its place", tk)
			}
		}
		for _, fl := range Analyze(lang, src) {
			if fl.Line < 1 || fl.Line > lines {
				t.Fatalf("flow %+v outside the %d lines", fl, lines)
			}
		}
		for _, c := range Capabilities(lang, src) {
			if c.Line < 1 || c.Line > lines || c.Kind == "" {
				t.Fatalf("capability %+v outside the %d lines", c, lines)
			}
		}
	})
}

// lineOf is line n (1-based) of src without its line break.
func lineOf(src []byte, n int) []byte {
	start := lineStart(src, n)
	return src[start:lineEnd(src, n)]
}

func lineStart(src []byte, n int) int {
	off := 0
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src[off:], '\n')
		if j < 0 {
			return len(src)
		}
		off += j + 1
	}
	return off
}

func lineEnd(src []byte, n int) int {
	start := lineStart(src, n)
	if j := bytes.IndexByte(src[start:], '\n'); j >= 0 {
		return start + j
	}
	return len(src)
}
