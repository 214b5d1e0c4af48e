package termtext_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/platform/termtext"
)

// hostile holds what a server was seen to send in its name, version and
// tool descriptions to rewrite an operator's terminal.
var hostile = []struct{ name, in, want string }{
	{"plain", "server-everything 1.2.3", "server-everything 1.2.3"},
	{"title OSC ended by BEL", "evil\x1b]0;approved\x07", `evil\u001b]0;approved\u0007`},
	{"title OSC ended by ST", "\x1b]2;t\x1b\\", `\u001b]2;t\u001b\`},
	{"clear screen", "\x1b[2J\x1b[H", `\u001b[2J\u001b[H`},
	{"clipboard OSC 52", "\x1b]52;c;cm0gLXJmIH4=\x07", `\u001b]52;c;cm0gLXJmIH4=\u0007`},
	{"overwrite the line", "bad\r\x1b[2Kgood", `bad\r\u001b[2Kgood`},
	{"line feed and tab", "a\nnext: approve\tb", `a\nnext: approve\tb`},
	{"DEL and C1 CSI", "a\x7fb\u009b2Jc\u0085", `a\u007fb\u009b2Jc\u0085`},
	{"bidi override", "abc\u202egnp.exe", `abc\u202egnp.exe`},
	{"bidi isolates and marks", "\u2066x\u2069\u200e\u200f\u061c", `\u2066x\u2069\u200e\u200f\u061c`},
	{"zero width and BOM", "ad\u200bmin\ufeff", `ad\u200bmin\ufeff`},
	{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	{"tag character above U+FFFF", "x\U000e0041", `x\udb40\udc41`},
	{"not UTF-8", "a\xffb\xe2\x80", `a\xffb\xe2\x80`},
	{"visible non-ASCII kept", "compraventa — título 日本 🙂 \ufffd", "compraventa — título 日本 🙂 \ufffd"},
	{"backslash kept", `C:\path\u001b`, `C:\path\u001b`},
}

func TestEscape(t *testing.T) {
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			if got := termtext.Escape(tc.in); got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestWriterKeepsLayout(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"own layout", "NAME\tSTATE\nfs\tenabled\n", "NAME\tSTATE\nfs\tenabled\n"},
		{"escapes", "name: evil\x1b]0;t\x07\r\x1b[2K\n", `name: evil\u001b]0;t\u0007\r\u001b[2K` + "\n"},
		{"bidi", "\u202eabc\n", `\u202eabc` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := termtext.NewWriter(&b)
			if n, err := w.Write([]byte(tc.in)); err != nil || n != len(tc.in) {
				t.Fatalf("Write = %d, %v", n, err)
			}
			if got := b.String(); got != tc.want {
				t.Errorf("Writer(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestWriterSplitCharacter: a character split across writes is rendered
// whole, and Flush renders an incomplete one left at the end.
func TestWriterSplitCharacter(t *testing.T) {
	var b bytes.Buffer
	w := termtext.NewWriter(&b)
	for _, p := range []string{"a\xe2\x80", "\xae", "b\xe2", "\x80\x8b", "é", "\xf0\x9f"} {
		w.Write([]byte(p))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), `a\u202eb\u200bé\xf0\x9f`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// visible fails t when s holds a character a terminal would act on or
// hide, other than those allowed.
func visible(t *testing.T, s string, allowed string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("output %q is not UTF-8", s)
	}
	for _, r := range s {
		if !termtext.Visible(r) && !strings.ContainsRune(allowed, r) {
			t.Fatalf("output %q holds %U", s, r)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, tc := range hostile {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := termtext.Escape(s)
		visible(t, out, "")
		if utf8.ValidString(s) && !strings.Contains(s, `\`) {
			// The escapes are JSON's: decoding the output as a JSON string
			// gives the input back.
			var back string
			if err := json.Unmarshal([]byte(`"`+strings.ReplaceAll(out, `"`, `\"`)+`"`), &back); err != nil || back != s {
				t.Fatalf("Escape(%q) = %q reads back as %q, %v", s, out, back, err)
			}
		}
	})
}

// FuzzWriter: whatever is written, in whatever pieces, no control or
// invisible character but line feed and tab comes out; and JSON written
// through a Writer is the same JSON value.
func FuzzWriter(f *testing.F) {
	for _, tc := range hostile {
		f.Add(tc.in, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		var b bytes.Buffer
		w := termtext.NewWriter(&b)
		at := int(cut)
		if at > len(s) {
			at = len(s)
		}
		w.Write([]byte(s[:at]))
		w.Write([]byte(s[at:]))
		w.Flush()
		visible(t, b.String(), "\n\t")

		js, err := json.Marshal(map[string]string{"v": s})
		if err != nil {
			t.Fatal(err)
		}
		b.Reset()
		w = termtext.NewWriter(&b)
		w.Write(js)
		w.Flush()
		var back, want map[string]string
		json.Unmarshal(js, &want)
		if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["v"] != want["v"] {
			t.Fatalf("JSON %s through a Writer is %s: %v, %v", js, b.Bytes(), back, err)
		}
	})
}

// TestJSONEscapes records what encoding/json does with outside text, which
// the CLI's --json output relies on: C0 controls and U+2028/U+2029 are
// escaped; DEL, C1 controls and bidi characters are left raw, which is
// valid JSON, and which a Writer renders as \u escapes on the way out.
func TestJSONEscapes(t *testing.T) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as the CLI's writeJSON
	enc.Encode("\x1b\r\n\u2028\u2029\x7f\u009b\u202e")
	if got, want := b.String(), `"\u001b\r\n\u2028\u2029`+"\x7f\u009b\u202e"+`"`+"\n"; got != want {
		t.Fatalf("encoding/json wrote %q, want %q", got, want)
	}
	var out bytes.Buffer
	w := termtext.NewWriter(&out)
	w.Write(b.Bytes())
	if got, want := out.String(), `"\u001b\r\n\u2028\u2029\u007f\u009b\u202e"`+"\n"; got != want {
		t.Fatalf("through a Writer: %q, want %q", got, want)
	}
}
