package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestObject(t *testing.T) {
	keys := []string{"id", "method", "result"}
	for _, tc := range []struct {
		name, in string
		ok       bool
		want     []string // raw values; "-" for absent
	}{
		{"response", `{"jsonrpc":"2.0","id":"skillgate-1","result":{"content":[]}}` + "\n", true, []string{`"skillgate-1"`, "-", `{"content":[]}`}},
		{"spaces", " \t{ \"id\" : 7 , \"result\" : [1, 2.5e-3, true, false, null, \"x\"] }\r\n", true, []string{"7", "-", `[1, 2.5e-3, true, false, null, "x"]`}},
		{"empty", `{}`, true, []string{"-", "-", "-"}},
		{"nested keys are not read", `{"a":{"id":1},"b":[{"method":"m"}]}`, true, []string{"-", "-", "-"}},
		{"escapes in values", `{"id":"a\"b\\c\/\b\f\n\r\t\u00e9"}`, true, []string{`"a\"b\\c\/\b\f\n\r\t\u00e9"`, "-", "-"}},
		{"any escaped key", `{"\u0078":1,"id":2}`, false, nil},
		{"escaped wanted key", `{"i\u0064":1}`, false, nil},
		{"case differs", `{"ID":1}`, false, nil},
		{"folds to a key", "{\"\u017fesult\":1}", true, []string{"-", "-", "-"}},
		{"folds to a wanted key", "{\"re\u017fult\":1}", false, nil},
		{"duplicate wanted key", `{"id":1,"id":2}`, false, nil},
		{"duplicate other key", `{"x":1,"x":2}`, true, []string{"-", "-", "-"}},
		{"not an object", `[1]`, false, nil},
		{"trailing data", `{} {}`, false, nil},
		{"trailing comma", `{"id":1,}`, false, nil},
		{"missing colon", `{"id" 1}`, false, nil},
		{"unquoted key", `{id:1}`, false, nil},
		{"control character", "{\"id\":\"a\x01\"}", false, nil},
		{"bad escape", `{"id":"\x"}`, false, nil},
		{"short unicode escape", `{"id":"\u12"}`, false, nil},
		{"leading zero", `{"id":01}`, false, nil},
		{"bare minus", `{"id":-}`, false, nil},
		{"dot without digits", `{"id":1.}`, false, nil},
		{"exponent without digits", `{"id":1e+}`, false, nil},
		{"bad literal", `{"id":nul}`, false, nil},
		{"unterminated", `{"id":"x`, false, nil},
		{"invalid UTF-8 kept", "{\"id\":\"\xff\"}", true, []string{"\"\xff\"", "-", "-"}},
		{"too deep", `{"id":` + strings.Repeat("[", maxScanDepth) + strings.Repeat("]", maxScanDepth) + `}`, false, nil},
		{"deep enough", `{"id":` + strings.Repeat("[", maxScanDepth-1) + strings.Repeat("]", maxScanDepth-1) + `}`, true, []string{strings.Repeat("[", maxScanDepth-1) + strings.Repeat("]", maxScanDepth-1), "-", "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := make([][]byte, len(keys))
			ok := Object([]byte(tc.in), keys, vals)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			for i, w := range tc.want {
				got := string(vals[i])
				if vals[i] == nil {
					got = "-"
				}
				if got != w {
					t.Errorf("%s = %q, want %q", keys[i], got, w)
				}
			}
		})
	}
}

func TestPlainString(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{`"tools/call"`, "tools/call", true},
		{`""`, "", true},
		{`"é"`, "é", true},
		{`"a\nb"`, "", false},
		{"\"\xff\"", "", false},
		{`7`, "", false},
		{`"`, "", false},
		{`null`, "", false},
	} {
		got, ok := PlainString([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("PlainString(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzObject checks Object against encoding/json: it accepts
// exactly the JSON objects json.Valid accepts (short inputs cannot nest too
// deeply, nor does the key list make it refuse any), and when it accepts
// one with wanted keys, their values are the bytes encoding/json decodes.
func FuzzObject(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"skillgate-3","result":{"content":[{"type":"text","text":"{}"}]}}`,
		`{"id":null,"ID":2}`, `{"a":[1,-2.5E+7,"\u00e9"]}`, `[]`, `{"x":tru}`, "{\"\u017fd\":1}",
		// Strings long enough for the two-groups-a-step reader, with a byte
		// it must stop at in the first group, in the second, and after both.
		`{"result":{"text":"0123456789abcdef0123456789abcdef\n0123456789abcdef\"0123456789\\u00e9"}}`,
		"{\"result\":{\"text\":\"0123456789\tabcdef0123456789abcdef\"}}",
		"{\"result\":{\"text\":\"0123456789abcdef0123\x1f456789abcdef\"}}",
		"{\"result\":{\"text\":\"0123456789abcdef0123456789abcdef0123456\x00\"}}",
	} {
		f.Add([]byte(s))
	}
	keys := []string{"jsonrpc", "id", "method", "params", "result"}
	type wanted struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		object := bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
		if ok := Object(data, nil, nil); len(data) <= maxScanDepth && ok != (json.Valid(data) && object) {
			t.Fatalf("Object(%q) = %v, json.Valid %v", data, ok, json.Valid(data))
		}
		vals := make([][]byte, len(keys))
		if !Object(data, keys, vals) {
			return
		}
		var w wanted
		if err := json.Unmarshal(data, &w); err != nil {
			t.Fatalf("Object accepted %q; encoding/json: %v", data, err)
		}
		got := wanted{vals[0], vals[1], vals[2], vals[3], vals[4]}
		for i, pair := range [][2]json.RawMessage{{got.JSONRPC, w.JSONRPC}, {got.ID, w.ID}, {got.Method, w.Method}, {got.Params, w.Params}, {got.Result, w.Result}} {
			if !bytes.Equal(pair[0], pair[1]) || (pair[0] == nil) != (pair[1] == nil) {
				t.Fatalf("%q: %s = %q, encoding/json %q", data, keys[i], pair[0], pair[1])
			}
		}
	})
}

// FuzzQuote checks Quote against json.Marshal.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"skillgate-1", "tools/call", `a"b`, "<&>", "é", "\x00", "\xff", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Quote(s); !bytes.Equal(got, want) {
			t.Fatalf("Quote(%q) = %s, json.Marshal %s", s, got, want)
		}
	})
}

// TestObjectLongStrings is the differential test of the eight-bytes-at-
// a-time string reader (plainRun) against encoding/json: strings of every
// length up to 40 with each byte that ends, escapes or is not allowed in a
// string (and some that are) at every position, so that each lands in
// every lane of a group of eight and in the tail after the last group.
func TestObjectLongStrings(t *testing.T) {
	specials := []string{`"`, `\`, `\"`, `\\`, `\n`, `\u00e9`, `\x`, "\x00", "\x1f", "\n", " ", "\x7f", "\x80", "é", "\xff", "~", "!", "#", "[", "]"}
	keys := []string{"id", "result"}
	vals := make([][]byte, 2)
	for n := 0; n <= 40; n++ {
		for _, sp := range specials {
			for at := 0; at <= n; at++ {
				body := strings.Repeat("a", at) + sp + strings.Repeat("b", n-at)
				line := []byte(`{"id":"skillgate-1","result":{"text":"` + body + `"}}`)
				ok := Object(line, keys, vals)
				var w struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				err := json.Unmarshal(line, &w)
				if ok != (err == nil) {
					t.Fatalf("%q: Object %v, encoding/json %v", line, ok, err)
				}
				if ok && (!bytes.Equal(vals[0], w.ID) || !bytes.Equal(vals[1], w.Result)) {
					t.Fatalf("%q: Object %q %q, encoding/json %q %q", line, vals[0], vals[1], w.ID, w.Result)
				}
			}
		}
	}
}

// TestPlainRun checks plainRun (SSE2 on amd64, eight bytes a step
// elsewhere) and plainRunGeneric against the byte-at-a-time rule they
// shortcut: in groups of plainGroup bytes, stop exactly at the first '"',
// control character or backslash that does not start a one-letter escape,
// step over one-letter escapes (reporting that), and stop where fewer than
// plainGroup bytes are left. Every byte is tried in every lane of the
// groups of a step, every pair of bytes in every two lanes of a group (a
// byte that matches makes the ones above it look like matches too in the
// portable version: a borrow carries), and random strings of the bytes
// that matter at every length up to 100.
func TestPlainRun(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	// model is the byte-at-a-time rule for groups of g bytes.
	model := func(b []byte, g int) (int, bool) {
		p, esc := 0, false
		for len(b)-p >= g {
			q := p
			for q < p+g && !special(b[q]) {
				q++
			}
			if q == p+g {
				p = q
				continue
			}
			if b[q] != '\\' || q+1 >= len(b) || escapes[b[q+1]] != 1 {
				return q, esc
			}
			p, esc = q+2, true
		}
		return p, esc
	}
	check := func(b []byte, what string) {
		t.Helper()
		for _, f := range []struct {
			name string
			run  func([]byte) (int, bool)
			g    int
		}{{"plainRun", plainRun, plainGroup}, {"plainRunGeneric", plainRunGeneric, 8}} {
			n, esc := f.run(b)
			wn, wesc := model(b, f.g)
			if n != wn || esc != wesc {
				t.Fatalf("%s: %s(%q) = %d, %v; want %d, %v", what, f.name, b, n, esc, wn, wesc)
			}
		}
	}
	for _, size := range []int{8, 15, 16, 24, 31, 32, 40, 47, 48, 63, 64, 65, 100} {
		for c := range 256 {
			for at := range size {
				b := []byte(strings.Repeat("x", size))
				b[at] = byte(c)
				check(b, fmt.Sprintf("%d bytes, byte %#x at %d", size, c, at))
			}
		}
	}
	b := make([]byte, 16)
	for c := range 256 {
		for d := range 256 {
			for i := range 8 {
				for j := i + 1; j < 8; j++ {
					copy(b, "xxxxxxxxxxxxxxxx")
					b[i], b[j] = byte(c), byte(d)
					check(b, fmt.Sprintf("bytes %#x at %d and %#x at %d", c, i, d, j))
				}
			}
		}
	}
	alphabet := []byte{'a', '"', '\\', 'n', 'u', 't', 'x', 0x1f, 0x00, 0x20, 0x7f, 0xc3, 0xa9}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		b := make([]byte, r.IntN(101))
		for i := range b {
			if r.IntN(4) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = 'a'
			}
		}
		check(b, "random")
	}
}

func TestPlain(t *testing.T) {
	t.Parallel()
	// Plain may say no to a string encoding/json keeps as is (non-ASCII),
	// never yes to one it changes.
	for s, want := range map[string]bool{"": true, "abc/def.md": true, "a b-c_d~": true, "é": false, "a\"b": false, `a\b`: false,
		"<": false, ">": false, "&": false, "\x7f": false, "\n": false, "\xff": false} {
		if got := Plain(s); got != want {
			t.Errorf("Plain(%q) = %v; want %v", s, got, want)
		}
		if enc, _ := json.Marshal(s); want && string(enc) != `"`+s+`"` {
			t.Errorf("Plain(%q), but json.Marshal gives %s", s, enc)
		}
	}
}
