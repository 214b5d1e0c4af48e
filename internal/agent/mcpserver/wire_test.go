package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestParseWire(t *testing.T) {
	for _, tc := range []struct {
		name, in               string
		ok                     bool
		id, method, tool, args string
	}{
		{"call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mem__read_graph","arguments":{"a":[1]}}}` + "\n", true, "7", "tools/call", "mem__read_graph", `{"a":[1]}`},
		{"string id, no arguments", `{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"t"}}`, true, `"x-1"`, "tools/call", "t", ""},
		{"escaped method", `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"t","arguments":{}}}`, true, "1", "tools/call", "t", "{}"},
		{"upper-case key", `{"jsonrpc":"2.0","ID":3,"method":"tools/call","params":{"Name":"t"}}`, true, "3", "tools/call", "t", ""},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`, false, "", "", "", ""},
		{"not JSON", `{"jsonrpc":"2.0",`, false, "", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, ok := parseWire([]byte(tc.in))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if string(req.ID) != tc.id || req.Method != tc.method || req.Params.Name != tc.tool || string(req.Params.Arguments) != tc.args {
				t.Errorf("got id %s method %q tool %q args %s", req.ID, req.Method, req.Params.Name, req.Params.Arguments)
			}
		})
	}
}

// FuzzParseWire checks that parseWire decodes exactly what json.Unmarshal
// into a wireRequest does.
func FuzzParseWire(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mem__read_graph","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null,"arguments":[1]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0074","name":"u"}}`,
		`{"jsonrpc":"1.0","id":1,"method":5}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := parseWire(line)
		var want wireRequest
		err := json.Unmarshal(line, &want)
		if ok != (err == nil) {
			t.Fatalf("%q: parseWire ok %v, encoding/json %v", line, ok, err)
		}
		if !ok {
			return
		}
		same := func(a, b json.RawMessage) bool { return bytes.Equal(a, b) && (len(a) == 0) == (len(b) == 0) }
		if got.JSONRPC != want.JSONRPC || got.Method != want.Method || got.Params.Name != want.Params.Name ||
			!same(got.ID, want.ID) || !same(got.Params.Arguments, want.Params.Arguments) || !same(got.Params.RequestID, want.Params.RequestID) {
			t.Fatalf("%q: parseWire %+v, encoding/json %+v", line, got, want)
		}
	})
}
