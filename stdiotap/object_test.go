package stdiotap

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestScanObject(t *testing.T) {
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
			ok := ScanObject([]byte(tc.in), keys, vals)
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

// FuzzScanObject checks ScanObject against encoding/json: it accepts
// exactly the JSON objects json.Valid accepts (short inputs cannot nest too
// deeply, nor does the key list make it refuse any), and when it accepts
// one with wanted keys, their values are the bytes encoding/json decodes.
func FuzzScanObject(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"skillgate-3","result":{"content":[{"type":"text","text":"{}"}]}}`,
		`{"id":null,"ID":2}`, `{"a":[1,-2.5E+7,"\u00e9"]}`, `[]`, `{"x":tru}`, "{\"\u017fd\":1}",
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
		if ok := ScanObject(data, nil, nil); len(data) <= maxScanDepth && ok != (json.Valid(data) && object) {
			t.Fatalf("ScanObject(%q) = %v, json.Valid %v", data, ok, json.Valid(data))
		}
		vals := make([][]byte, len(keys))
		if !ScanObject(data, keys, vals) {
			return
		}
		var w wanted
		if err := json.Unmarshal(data, &w); err != nil {
			t.Fatalf("ScanObject accepted %q; encoding/json: %v", data, err)
		}
		got := wanted{vals[0], vals[1], vals[2], vals[3], vals[4]}
		for i, pair := range [][2]json.RawMessage{{got.JSONRPC, w.JSONRPC}, {got.ID, w.ID}, {got.Method, w.Method}, {got.Params, w.Params}, {got.Result, w.Result}} {
			if !bytes.Equal(pair[0], pair[1]) || (pair[0] == nil) != (pair[1] == nil) {
				t.Fatalf("%q: %s = %q, encoding/json %q", data, keys[i], pair[0], pair[1])
			}
		}
	})
}

// FuzzDecodeResponse checks that decodeResponse decodes exactly what
// json.Unmarshal into a response does.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"skillgate-1","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":"skillgate-2","error":{"code":-32602,"message":"bad"}}`,
		`{"jsonrpc":"2.0","id":"skillgate-3","result":null,"error":null,"method":null}`,
		`{"jsonrpc":"2.0","id":"skill\u0067ate-4","result":{}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":"skillgate-6","method":"x"}`,
		`{"Id":"skillgate-7","result":1}`,
		"{\"id\":\"\xff\",\"result\":1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := decodeResponse(line)
		var want response
		err := json.Unmarshal(line, &want)
		if ok != (err == nil) {
			t.Fatalf("%q: decodeResponse ok %v, encoding/json %v", line, ok, err)
		}
		if ok && !reflect.DeepEqual(normal(got), normal(want)) {
			t.Fatalf("%q: decodeResponse %+v, encoding/json %+v", line, got, want)
		}
	})
}

// normal makes an absent and an empty raw result compare alike.
func normal(r response) response {
	if len(r.Result) == 0 {
		r.Result = nil
	}
	return r
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
