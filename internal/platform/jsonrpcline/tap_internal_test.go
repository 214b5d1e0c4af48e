package jsonrpcline

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
)

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

// FuzzTapDecides is the differential test of Calls.Tap's one-pass reading
// against encoding/json: a line is taken exactly when it names the prefix
// and decodes (as json.Unmarshal into a response) to a response, not a
// request, whose id is longer than the prefix and starts with it; and the
// result, error or failure the call gets is what encoding/json decodes.
func FuzzTapDecides(f *testing.F) {
	long := strings.Repeat(`abc \"quoted\"\n`, 40)
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"skillgate-1","result":{"content":[{"type":"text","text":"` + long + `"}]}}`,
		`{"result":{"content":[{"type":"text","text":"` + long + `"}]},"jsonrpc":"2.0","id":"skillgate-1"}`,
		`{"jsonrpc":"2.0","id":"skillgate-1","error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":"skill\u0067ate-1","result":{}}`,
		`{"jsonrpc":"2.0","id":"skillgate-1","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"skillgate-1","method":null,"result":1}`,
		`{"jsonrpc":"2.0","id":7,"result":{"text":"\"skillgate-1"}}`,
		`{"jsonrpc":"2.0","id":"skillgate-","result":{}}`,
		`{"jsonrpc":"2.0","id":"other","result":{"x":"skillgate-1"}}`,
		`{"id":"skillgate-1","result":{},"id":"skillgate-2"}`,
		"{\"id\":\"skillgate-1\xff\",\"result\":1}",
		`{"id":"skillgate-1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		const prefix = "skillgate-"
		var want response
		err := json.Unmarshal(line, &want)
		ours := bytes.Contains(line, []byte(`"`+prefix)) && err == nil && want.ID != nil && want.Method == nil &&
			len(*want.ID) > len(prefix) && strings.HasPrefix(*want.ID, prefix)
		if got := NewCalls(NewWriter(io.Discard), prefix).Tap(line); got != ours {
			t.Fatalf("Tap(%q) with no call pending = %v, want %v", line, got, ours)
		}
		if !ours {
			return
		}
		c := NewCalls(NewWriter(io.Discard), prefix)
		for range 3 {
			c.Go(context.Background(), "m", nil, func(Response) {})
		}
		var got Response
		called := false
		c.mu.Lock()
		if p := c.pending[*want.ID]; p != nil {
			p.done = func(r Response) {
				called = true
				got = Response{Result: bytes.Clone(r.Result), Error: r.Error, Err: r.Err}
			}
		}
		c.mu.Unlock()
		c.Tap(line)
		if _, pending := c.pending[*want.ID]; !called && (*want.ID == "skillgate-1" || *want.ID == "skillgate-2" || *want.ID == "skillgate-3") || pending {
			t.Fatalf("Tap(%q) did not end call %s", line, *want.ID)
		}
		if !called {
			return
		}
		switch {
		case want.Error != nil:
			if !reflect.DeepEqual(got.Error, want.Error) {
				t.Fatalf("Tap(%q): error %+v, encoding/json %+v", line, got.Error, want.Error)
			}
		case len(want.Result) == 0:
			if got.Err == nil {
				t.Fatalf("Tap(%q): no result yet no failure: %+v", line, got)
			}
		default:
			if !bytes.Equal(got.Result, want.Result) {
				t.Fatalf("Tap(%q): result %q, encoding/json %q", line, got.Result, want.Result)
			}
		}
	})
}
