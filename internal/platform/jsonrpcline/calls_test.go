package jsonrpcline_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
)

const waitLimit = 10 * time.Second

// outcome records the calls of one request's done callback.
type outcome struct {
	mu    sync.Mutex
	calls int
	resp  jsonrpcline.Response // Result copied: it is only valid during done
	ch    chan struct{}        // closed by the first call
}

func newOutcome() *outcome { return &outcome{ch: make(chan struct{})} }

func (o *outcome) done(r jsonrpcline.Response) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls++
	if o.calls == 1 {
		r.Result = bytes.Clone(r.Result)
		o.resp = r
		close(o.ch)
	}
}

func (o *outcome) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls
}

func (o *outcome) called() bool {
	select {
	case <-o.ch:
		return true
	default:
		return false
	}
}

func (o *outcome) wait(t *testing.T) jsonrpcline.Response {
	t.Helper()
	select {
	case <-o.ch:
	case <-time.After(waitLimit):
		t.Fatal("done was not called")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.resp
}

// want describes the expected outcome of a call.
type want struct {
	result string         // the raw result, when not empty
	error  *jsonrpc.Error // the peer's error
	err    error          // Err, compared with errors.Is
	errMsg string         // Err's message, when not empty
}

func checkResponse(t *testing.T, got jsonrpcline.Response, w want) {
	t.Helper()
	if string(got.Result) != w.result {
		t.Errorf("Result %q, want %q", got.Result, w.result)
	}
	switch {
	case w.error == nil && got.Error != nil:
		t.Errorf("Error %+v, want none", got.Error)
	case w.error != nil && got.Error == nil:
		t.Errorf("no Error, want %+v", w.error)
	case w.error != nil && (got.Error.Code != w.error.Code || got.Error.Message != w.error.Message || string(got.Error.Data) != string(w.error.Data)):
		t.Errorf("Error {%d %q %s}, want {%d %q %s}", got.Error.Code, got.Error.Message, got.Error.Data, w.error.Code, w.error.Message, w.error.Data)
	}
	wantErr := w.err != nil || w.errMsg != ""
	switch {
	case !wantErr && got.Err != nil:
		t.Errorf("Err %v, want none", got.Err)
	case wantErr && got.Err == nil:
		t.Errorf("no Err, want %v %q", w.err, w.errMsg)
	case w.err != nil && !errors.Is(got.Err, w.err):
		t.Errorf("Err %v, want %v", got.Err, w.err)
	case w.errMsg != "" && got.Err.Error() != w.errMsg:
		t.Errorf("Err %q, want %q", got.Err, w.errMsg)
	}
}

// failWriter fails every Write and counts them.
type failWriter struct {
	err    error
	writes atomic.Int32
}

func (f *failWriter) Write([]byte) (int, error) {
	f.writes.Add(1)
	return 0, f.err
}

func TestCallsRequestBytes(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		method string
		params json.RawMessage
		want   string
	}{
		{"tools/call", "t-", "tools/call", json.RawMessage(`{"name":"echo","arguments":{"x":1}}`), `{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`},
		{"params verbatim", "t-", "m", json.RawMessage(`{ "a" : [1, 2.50] }`), `{"jsonrpc":"2.0","id":"t-1","method":"m","params":{ "a" : [1, 2.50] }}`},
		{"array params", "t-", "m", json.RawMessage(`[1,"2"]`), `{"jsonrpc":"2.0","id":"t-1","method":"m","params":[1,"2"]}`},
		{"nil params", "t-", "ping", nil, `{"jsonrpc":"2.0","id":"t-1","method":"ping"}`},
		{"empty params", "t-", "ping", json.RawMessage{}, `{"jsonrpc":"2.0","id":"t-1","method":"ping"}`},
		{"method escaped", "t-", `a"b\<c>é`, nil, `{"jsonrpc":"2.0","id":"t-1","method":"a\"b\\\u003cc\u003eé"}`},
		{"other prefix", "skillgate-", "tools/list", json.RawMessage(`{}`), `{"jsonrpc":"2.0","id":"skillgate-1","method":"tools/list","params":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), tt.prefix)
			o := newOutcome()
			c.Go(context.Background(), tt.method, tt.params, o.done)
			if got := rec.get(); !equalStrings(got, []string{tt.want + "\n"}) {
				t.Fatalf("wrote %q, want %q", got, tt.want+"\n")
			}
			if !json.Valid([]byte(tt.want)) {
				t.Fatalf("expected request is not JSON")
			}
			if o.count() != 0 || c.Pending() != 1 {
				t.Fatalf("done called %d times, %d pending", o.count(), c.Pending())
			}
		})
	}
}

func TestCallsIDsIncrease(t *testing.T) {
	rec := &recorder{}
	c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
	for range 12 {
		c.Go(context.Background(), "ping", nil, func(jsonrpcline.Response) {})
	}
	got := rec.get()
	for i, l := range got {
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":"t-%d","method":"ping"}`+"\n", i+1); l != want {
			t.Fatalf("request %d: %q, want %q", i, l, want)
		}
	}
	if c.Pending() != 12 {
		t.Fatalf("%d pending", c.Pending())
	}
}

// TestCallsTap feeds one line to the Tap of a Calls with one pending call,
// t-1.
func TestCallsTap(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		taken bool
		ended bool // t-1's done is called
		want  want
	}{
		{name: "result", line: `{"jsonrpc":"2.0","id":"t-1","result":{"content":[{"type":"text","text":"hi"}],"isError":false}}`, taken: true, ended: true,
			want: want{result: `{"content":[{"type":"text","text":"hi"}],"isError":false}`}},
		{name: "result verbatim", line: `{"jsonrpc":"2.0","id":"t-1","result": { "a" : [1, 2.50, "\u00e9", 1e3] ,"b":null, "_meta":{"x":{}}} }`, taken: true, ended: true,
			want: want{result: `{ "a" : [1, 2.50, "\u00e9", 1e3] ,"b":null, "_meta":{"x":{}}}`}},
		{name: "members in another order", line: `{"result":{"x":1},"id":"t-1","jsonrpc":"2.0"}`, taken: true, ended: true, want: want{result: `{"x":1}`}},
		{name: "whitespace around members", line: ` { "jsonrpc" : "2.0" , "id" : "t-1" , "result" : [ ] } `, taken: true, ended: true, want: want{result: `[ ]`}},
		{name: "null result", line: `{"jsonrpc":"2.0","id":"t-1","result":null}`, taken: true, ended: true, want: want{result: `null`}},
		{name: "string result", line: `{"jsonrpc":"2.0","id":"t-1","result":"t-1"}`, taken: true, ended: true, want: want{result: `"t-1"`}},
		{name: "extra members", line: `{"jsonrpc":"2.0","id":"t-1","result":{},"extra":[1]}`, taken: true, ended: true, want: want{result: `{}`}},
		{name: "error", line: `{"jsonrpc":"2.0","id":"t-1","error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}}`, taken: true, ended: true,
			want: want{error: &jsonrpc.Error{Code: -32601, Message: "Method not found", Data: json.RawMessage(`{"method":"x"}`)}}},
		{name: "error without data", line: `{"jsonrpc":"2.0","id":"t-1","error":{"code":-32000,"message":"tool failed"}}`, taken: true, ended: true,
			want: want{error: &jsonrpc.Error{Code: -32000, Message: "tool failed"}}},
		{name: "error wins over result", line: `{"jsonrpc":"2.0","id":"t-1","result":{},"error":{"code":1,"message":"m"}}`, taken: true, ended: true,
			want: want{error: &jsonrpc.Error{Code: 1, Message: "m"}}},
		{name: "null error and a result", line: `{"jsonrpc":"2.0","id":"t-1","error":null,"result":{"ok":true}}`, taken: true, ended: true, want: want{result: `{"ok":true}`}},
		{name: "neither result nor error", line: `{"jsonrpc":"2.0","id":"t-1"}`, taken: true, ended: true,
			want: want{errMsg: "response to t-1 has neither result nor error"}},
		{name: "null error and no result", line: `{"jsonrpc":"2.0","id":"t-1","error":null}`, taken: true, ended: true,
			want: want{errMsg: "response to t-1 has neither result nor error"}},
		{name: "request of the peer with our id", line: `{"jsonrpc":"2.0","id":"t-1","method":"ping"}`},
		{name: "request of the peer with our id and a result", line: `{"jsonrpc":"2.0","id":"t-1","method":"x","result":{}}`},
		{name: "notification naming our id", line: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t-1"}}`},
		{name: "numeric id", line: `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{name: "numeric id and our id in the result", line: `{"jsonrpc":"2.0","id":1,"result":{"text":"t-1"}}`},
		{name: "other string id and our id in the result", line: `{"jsonrpc":"2.0","id":"x-1","result":{"text":"t-1"}}`},
		{name: "id ending in our prefix", line: `{"jsonrpc":"2.0","id":"at-1","result":{}}`},
		{name: "id that is only the prefix", line: `{"jsonrpc":"2.0","id":"t-","result":{}}`},
		{name: "null id", line: `{"jsonrpc":"2.0","id":null,"result":{"t":"t-1"}}`},
		{name: "truncated", line: `{"jsonrpc":"2.0","id":"t-1","result":`},
		{name: "trailing garbage", line: `{"jsonrpc":"2.0","id":"t-1","result":{}}x`},
		{name: "not an object", line: `["t-1"]`},
		{name: "string", line: `"t-1"`},
		{name: "empty line", line: ``},
		{name: "unknown id of ours is consumed", line: `{"jsonrpc":"2.0","id":"t-2","result":{}}`, taken: true},
		{name: "unknown longer id of ours is consumed", line: `{"jsonrpc":"2.0","id":"t-10","error":{"code":1,"message":"m"}}`, taken: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
			o := newOutcome()
			c.Go(context.Background(), "tools/call", json.RawMessage(`{"name":"x"}`), o.done)
			if taken := c.Tap([]byte(tt.line)); taken != tt.taken {
				t.Fatalf("Tap = %v, want %v", taken, tt.taken)
			}
			if !tt.ended {
				if o.count() != 0 || c.Pending() != 1 {
					t.Fatalf("done called %d times, %d pending; want 0 and 1", o.count(), c.Pending())
				}
				return
			}
			if o.count() != 1 || c.Pending() != 0 {
				t.Fatalf("done called %d times, %d pending; want 1 and 0", o.count(), c.Pending())
			}
			checkResponse(t, o.resp, tt.want)
			// The same answer again is consumed, and ends nothing.
			if !c.Tap([]byte(tt.line)) || o.count() != 1 {
				t.Fatalf("second answer: done called %d times", o.count())
			}
			if got := rec.get(); len(got) != 1 {
				t.Fatalf("wrote %q", got)
			}
		})
	}
}

// session is a client and a fake peer joined by two pipes, the client's side
// set up as in a real stdio connection: a Writer, a Calls and a Reader whose
// tap is Calls.Tap and whose end fails the Calls. Lines not taken are what
// the SDK would read.
type session struct {
	calls   *jsonrpcline.Calls
	writer  *jsonrpcline.Writer
	fromC   chan string // lines the client wrote, as the peer reads them
	toSDK   chan string // lines the tap did not take
	peerOut *io.PipeWriter
	ended   chan error // the Reader's end
}

func newSession(t *testing.T) *session {
	t.Helper()
	c2pR, c2pW := io.Pipe()
	p2cR, p2cW := io.Pipe()
	s := &session{
		fromC:   make(chan string, 1024),
		toSDK:   make(chan string, 1024),
		peerOut: p2cW,
		ended:   make(chan error, 1),
	}
	s.writer = jsonrpcline.NewWriter(c2pW)
	s.calls = jsonrpcline.NewCalls(s.writer, "t-")
	r := jsonrpcline.NewReader(p2cR, 0, s.calls.Tap, func(err error) {
		s.calls.Fail(err)
		s.ended <- err
	})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the peer's reading side
		defer wg.Done()
		defer close(s.fromC)
		br := bufio.NewReader(c2pR)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			s.fromC <- l
		}
	}()
	go func() { // the SDK's reading side
		defer wg.Done()
		defer close(s.toSDK)
		br := bufio.NewReader(r)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				s.toSDK <- l
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		p2cW.Close()
		c2pR.Close()
		c2pW.Close()
		wg.Wait()
	})
	return s
}

func (s *session) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.peerOut, l+"\n"); err != nil {
			t.Fatalf("peer write: %v", err)
		}
	}
}

func next(t *testing.T, ch chan string, what string) string {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatalf("%s: closed", what)
		}
		return l
	case <-time.After(waitLimit):
		t.Fatalf("%s: nothing came", what)
	}
	return ""
}

func expect(t *testing.T, ch chan string, what string, want string) {
	t.Helper()
	if got := next(t, ch, what); got != want+"\n" {
		t.Fatalf("%s: %q, want %q", what, got, want+"\n")
	}
}

func TestCallsRoundTrip(t *testing.T) {
	s := newSession(t)
	o1 := newOutcome()
	s.calls.Go(context.Background(), "tools/call", json.RawMessage(`{"name":"echo","arguments":{"x":1}}`), o1.done)
	expect(t, s.fromC, "peer", `{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`)
	o2 := newOutcome()
	s.calls.Go(context.Background(), "ping", nil, o2.done)
	expect(t, s.fromC, "peer", `{"jsonrpc":"2.0","id":"t-2","method":"ping"}`)
	if n := s.calls.Pending(); n != 2 {
		t.Fatalf("%d pending", n)
	}

	// The peer answers the SDK, asks something with an id like ours,
	// notifies, and answers both calls (the second with an error), in a
	// mix of line ends.
	s.send(t,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":"t-1","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"t-2","error":{"code":-32601,"message":"Method not found"}}`+"\r",
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"t-1"}}`,
		`{"jsonrpc":"2.0","id":"t-1","result": {"content":[{"type":"text","text":"{\"x\":1}"}]} }`,
		`{"jsonrpc":"2.0","method":"sentinel"}`,
	)
	checkResponse(t, o1.wait(t), want{result: `{"content":[{"type":"text","text":"{\"x\":1}"}]}`})
	checkResponse(t, o2.wait(t), want{error: &jsonrpc.Error{Code: -32601, Message: "Method not found"}})
	for _, w := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":"t-1","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"t-1"}}`,
		`{"jsonrpc":"2.0","method":"sentinel"}`,
	} {
		expect(t, s.toSDK, "SDK", w)
	}
	if o1.count() != 1 || o2.count() != 1 || s.calls.Pending() != 0 {
		t.Fatalf("done calls %d and %d, %d pending", o1.count(), o2.count(), s.calls.Pending())
	}
}

// TestCallsConcurrent makes many calls from many goroutines; the peer
// answers them all in reverse order, and each done gets its own answer.
func TestCallsConcurrent(t *testing.T) {
	const n = 200
	s := newSession(t)
	outs := make([]*outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		outs[i] = newOutcome()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.calls.Go(context.Background(), "tools/call", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), outs[i].done)
		}()
	}
	wg.Wait()
	type req struct {
		ID     string `json:"id"`
		Params struct {
			N int `json:"n"`
		} `json:"params"`
	}
	var reqs []req
	ids := map[string]bool{}
	for range n {
		l := next(t, s.fromC, "peer")
		var r req
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("request %q: %v", l, err)
		}
		if ids[r.ID] {
			t.Fatalf("id %s used twice", r.ID)
		}
		ids[r.ID] = true
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"n":%d}}`+"\n", r.ID, r.Params.N); l != want {
			t.Fatalf("request %q, want %q", l, want)
		}
		reqs = append(reqs, r)
	}
	if p := s.calls.Pending(); p != n {
		t.Fatalf("%d pending, want %d", p, n)
	}
	for i := len(reqs) - 1; i >= 0; i-- {
		s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"n":%d}}`, reqs[i].ID, reqs[i].Params.N))
	}
	for i, o := range outs {
		checkResponse(t, o.wait(t), want{result: fmt.Sprintf(`{"n":%d}`, i)})
	}
	for i, o := range outs {
		if o.count() != 1 {
			t.Fatalf("call %d: done called %d times", i, o.count())
		}
	}
	if p := s.calls.Pending(); p != 0 {
		t.Fatalf("%d pending", p)
	}
}

func TestCallsCancel(t *testing.T) {
	errStop := errors.New(`user said "stop" <now> & left`)
	tests := []struct {
		name   string
		cancel func(context.CancelCauseFunc)
		err    error
		reason string
	}{
		{"cause", func(c context.CancelCauseFunc) { c(errStop) }, errStop, `"user said \"stop\" \u003cnow\u003e \u0026 left"`},
		{"plain cancel", func(c context.CancelCauseFunc) { c(nil) }, context.Canceled, `"context canceled"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			o := newOutcome()
			s.calls.Go(ctx, "tools/call", json.RawMessage(`{"name":"slow"}`), o.done)
			expect(t, s.fromC, "peer", `{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":{"name":"slow"}}`)
			tt.cancel(cancel)
			resp := o.wait(t)
			if resp.Err != tt.err {
				t.Errorf("Err %v, want exactly %v", resp.Err, tt.err)
			}
			checkResponse(t, resp, want{err: tt.err})
			expect(t, s.fromC, "peer", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"t-1","reason":`+tt.reason+`}}`)
			if p := s.calls.Pending(); p != 0 {
				t.Fatalf("%d pending", p)
			}
			// The late answer is taken off the stream; the SDK never sees
			// it and done is not called again.
			s.send(t, `{"jsonrpc":"2.0","id":"t-1","result":{"late":true}}`, `{"jsonrpc":"2.0","method":"sentinel"}`)
			expect(t, s.toSDK, "SDK", `{"jsonrpc":"2.0","method":"sentinel"}`)
			if o.count() != 1 {
				t.Fatalf("done called %d times", o.count())
			}
		})
	}
}

func TestCallsTimeout(t *testing.T) {
	rec := &recorder{}
	c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	o := newOutcome()
	c.Go(ctx, "tools/call", json.RawMessage(`{}`), o.done)
	checkResponse(t, o.wait(t), want{err: context.DeadlineExceeded})
	got := rec.get()
	// Unless the deadline passed before the request was written, the
	// request and then its cancellation were.
	if len(got) != 0 && !equalStrings(got, []string{
		`{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":{}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"t-1","reason":"context deadline exceeded"}}` + "\n",
	}) {
		t.Fatalf("wrote %q", got)
	}
	if o.count() != 1 || c.Pending() != 0 {
		t.Fatalf("done called %d times, %d pending", o.count(), c.Pending())
	}
}

// TestCallsCancelDirect cancels without a peer, then taps the late answer.
func TestCallsCancelDirect(t *testing.T) {
	rec := &recorder{}
	c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
	ctx, cancel := context.WithCancel(context.Background())
	o1, o2 := newOutcome(), newOutcome()
	c.Go(ctx, "tools/call", json.RawMessage(`{"name":"a"}`), o1.done)
	c.Go(context.Background(), "tools/call", json.RawMessage(`{"name":"b"}`), o2.done)
	if c.Pending() != 2 {
		t.Fatalf("%d pending", c.Pending())
	}
	cancel()
	checkResponse(t, o1.wait(t), want{err: context.Canceled})
	if c.Pending() != 1 {
		t.Fatalf("%d pending", c.Pending())
	}
	if !c.Tap([]byte(`{"jsonrpc":"2.0","id":"t-1","result":{}}`)) {
		t.Fatal("late answer not taken")
	}
	if !c.Tap([]byte(`{"jsonrpc":"2.0","id":"t-2","result":{"b":1}}`)) {
		t.Fatal("answer not taken")
	}
	checkResponse(t, o2.wait(t), want{result: `{"b":1}`})
	if o1.count() != 1 || o2.count() != 1 || c.Pending() != 0 {
		t.Fatalf("done calls %d and %d, %d pending", o1.count(), o2.count(), c.Pending())
	}
	if got, want := rec.get(), []string{
		`{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":{"name":"a"}}` + "\n",
		`{"jsonrpc":"2.0","id":"t-2","method":"tools/call","params":{"name":"b"}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"t-1","reason":"context canceled"}}` + "\n",
	}; !equalStrings(got, want) {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

func TestCallsContextDoneBeforeGo(t *testing.T) {
	errGone := errors.New("gone")
	expired, cancelExpired := context.WithTimeout(context.Background(), -time.Second)
	defer cancelExpired()
	canceled, cancel := context.WithCancelCause(context.Background())
	cancel(errGone)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
	}{
		{"cancelled with a cause", canceled, errGone},
		{"deadline passed", expired, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{}
				c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
				o := newOutcome()
				c.Go(tc.ctx, "tools/call", json.RawMessage(`{}`), o.done)
				if !o.called() {
					t.Fatal("done not called before Go returned")
				}
				if o.resp.Err != tc.err {
					t.Fatalf("Err %v, want exactly %v", o.resp.Err, tc.err)
				}
				checkResponse(t, o.resp, want{err: tc.err})
				synctest.Wait() // nothing happens later either
				if got := rec.get(); len(got) != 0 {
					t.Fatalf("wrote %q", got)
				}
				if o.count() != 1 || c.Pending() != 0 {
					t.Fatalf("done called %d times, %d pending", o.count(), c.Pending())
				}
			})
		})
	}
}

func TestCallsFail(t *testing.T) {
	errDown := errors.New("server exited")
	for _, tc := range []struct {
		name  string
		cause error
		want  error
	}{
		{"with a cause", errDown, errDown},
		{"nil is ErrClosed", nil, jsonrpcline.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{}
				c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				tctx, tcancel := context.WithTimeout(context.Background(), time.Hour)
				defer tcancel()
				outs := []*outcome{newOutcome(), newOutcome(), newOutcome()}
				c.Go(ctx, "tools/call", json.RawMessage(`{}`), outs[0].done)
				c.Go(context.Background(), "tools/call", json.RawMessage(`{}`), outs[1].done)
				c.Go(tctx, "ping", nil, outs[2].done)
				if c.Pending() != 3 {
					t.Fatalf("%d pending", c.Pending())
				}
				c.Fail(tc.cause)
				for i, o := range outs {
					if !o.called() {
						t.Fatalf("call %d not ended by Fail", i)
					}
					if o.resp.Err != tc.want {
						t.Errorf("call %d: Err %v, want exactly %v", i, o.resp.Err, tc.want)
					}
					checkResponse(t, o.resp, want{err: tc.want})
				}
				if c.Pending() != 0 {
					t.Fatalf("%d pending", c.Pending())
				}
				// Cancelling after Fail neither ends a call again nor
				// notifies; answers are still taken off the stream.
				cancel()
				if !c.Tap([]byte(`{"jsonrpc":"2.0","id":"t-2","result":{}}`)) {
					t.Error("answer after Fail not taken")
				}
				// Later calls fail at once, with the first cause, and write
				// nothing.
				c.Fail(errors.New("second"))
				o := newOutcome()
				c.Go(context.Background(), "tools/call", json.RawMessage(`{}`), o.done)
				if !o.called() || o.resp.Err != tc.want {
					t.Fatalf("Go after Fail: called %v, Err %v", o.called(), o.resp.Err)
				}
				synctest.Wait() // nothing happens later either
				for i, o := range outs {
					if o.count() != 1 {
						t.Fatalf("call %d: done called %d times", i, o.count())
					}
				}
				if got := rec.get(); len(got) != 3 {
					t.Fatalf("wrote %q, want only the three requests", got)
				}
				if c.Pending() != 0 {
					t.Fatalf("%d pending", c.Pending())
				}
			})
		})
	}
}

// TestCallsFailAtEOF: the Reader's end fails the calls in flight, as a
// stdio connection sets it up.
func TestCallsFailAtEOF(t *testing.T) {
	s := newSession(t)
	o := newOutcome()
	s.calls.Go(context.Background(), "tools/call", json.RawMessage(`{}`), o.done)
	next(t, s.fromC, "peer")
	s.peerOut.Close()
	checkResponse(t, o.wait(t), want{err: io.EOF})
	select {
	case err := <-s.ended:
		if err != io.EOF {
			t.Fatalf("end %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("no end")
	}
}

func TestCallsWriteFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		method string
		params json.RawMessage
	}{
		{"background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }, "tools/call", json.RawMessage(`{}`)},
		{"cancellable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, "tools/call", json.RawMessage(`{}`)},
		{"no params", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Hour)
		}, "ping", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fw := &failWriter{err: errBoom}
				c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(fw), "t-")
				ctx, cancel := tc.ctx()
				o := newOutcome()
				c.Go(ctx, tc.method, tc.params, o.done)
				if !o.called() {
					t.Fatal("done not called before Go returned")
				}
				checkResponse(t, o.resp, want{err: errBoom, errMsg: "writing " + tc.method + " request: boom"})
				if c.Pending() != 0 {
					t.Fatalf("%d pending", c.Pending())
				}
				// The context watch is released: cancelling now writes no
				// notification and ends nothing again.
				cancel()
				synctest.Wait() // nothing happens later either
				if n := fw.writes.Load(); n != 1 {
					t.Fatalf("%d writes, want 1", n)
				}
				if o.count() != 1 {
					t.Fatalf("done called %d times", o.count())
				}
			})
		})
	}
}

// gateWriter blocks the first Write until release is closed.
type gateWriter struct {
	entered chan struct{} // closed when the first Write starts
	release chan struct{}
	once    sync.Once
	rec     recorder
}

func newGateWriter() *gateWriter {
	return &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	first := false
	g.once.Do(func() { first = true; close(g.entered) })
	if first {
		<-g.release
	}
	return g.rec.Write(p)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCallsEndedBeforeWritten ends a call while its request waits for the
// writer, busy with another message: the request is then never written, no
// cancellation is sent for it, and done is called at once.
func TestCallsEndedBeforeWritten(t *testing.T) {
	errStop := errors.New("stop")
	for _, tc := range []struct {
		name string
		end  func(*jsonrpcline.Calls, context.CancelCauseFunc)
		want error
	}{
		{"cancel", func(_ *jsonrpcline.Calls, cancel context.CancelCauseFunc) { cancel(errStop) }, errStop},
		{"fail", func(c *jsonrpcline.Calls, _ context.CancelCauseFunc) { c.Fail(errBoom) }, errBoom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateWriter()
			w := jsonrpcline.NewWriter(g)
			c := jsonrpcline.NewCalls(w, "t-")
			bigDone := make(chan struct{})
			go func() {
				defer close(bigDone)
				_, _ = w.Write([]byte("big\n"))
			}()
			<-g.entered
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			o := newOutcome()
			goDone := make(chan struct{})
			go func() {
				defer close(goDone)
				c.Go(ctx, "tools/call", json.RawMessage(`{}`), o.done)
			}()
			waitFor(t, "the call to be pending", func() bool { return c.Pending() == 1 })
			tc.end(c, cancel)
			resp := o.wait(t) // while the writer is still busy
			if resp.Err != tc.want {
				t.Fatalf("Err %v, want %v", resp.Err, tc.want)
			}
			close(g.release)
			<-bigDone
			<-goDone
			time.Sleep(10 * time.Millisecond)
			if got := g.rec.get(); !equalStrings(got, []string{"big\n"}) {
				t.Fatalf("wrote %q, want only the other message", got)
			}
			if o.count() != 1 || c.Pending() != 0 {
				t.Fatalf("done called %d times, %d pending", o.count(), c.Pending())
			}
		})
	}
}

// TestCallsCancelWhileWriting cancels a call while its own request is being
// written: the cancellation follows the whole request.
func TestCallsCancelWhileWriting(t *testing.T) {
	g := newGateWriter()
	c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(g), "t-")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := newOutcome()
	goDone := make(chan struct{})
	go func() {
		defer close(goDone)
		c.Go(ctx, "tools/call", json.RawMessage(`{}`), o.done)
	}()
	<-g.entered // the request is being written
	cancel()
	time.Sleep(10 * time.Millisecond)
	close(g.release)
	<-goDone
	checkResponse(t, o.wait(t), want{err: context.Canceled})
	if got, want := g.rec.get(), []string{
		`{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":{}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"t-1","reason":"context canceled"}}` + "\n",
	}; !equalStrings(got, want) {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	if o.count() != 1 || c.Pending() != 0 {
		t.Fatalf("done called %d times, %d pending", o.count(), c.Pending())
	}
}

// TestCallsStress mixes answers, errors, duplicate and missing answers,
// cancellations at random moments, calls on done contexts and a final Fail;
// every done is called exactly once, and the peer never sees the
// cancellation of a request before the request.
// errStressLimit ends TestCallsStress's calls whose time limit passes.
var errStressLimit = errors.New("stress limit")

func TestCallsStress(t *testing.T) {
	const n = 400
	s := newSession(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var peerErr errSink
	peerDone := make(chan struct{})
	go func() { // the peer
		defer close(peerDone)
		prng := rand.New(rand.NewPCG(3, 4))
		seen := map[string]bool{}
		for l := range s.fromC {
			var m struct {
				ID     *string `json:"id"`
				Method string  `json:"method"`
				Params struct {
					RequestID string `json:"requestId"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				peerErr.Store(fmt.Errorf("bad line %q: %v", l, err))
				continue
			}
			if m.Method == "notifications/cancelled" {
				if !seen[m.Params.RequestID] {
					peerErr.Store(fmt.Errorf("cancellation of %s before its request", m.Params.RequestID))
				}
				continue
			}
			if m.ID == nil || seen[*m.ID] {
				peerErr.Store(fmt.Errorf("bad or repeated request %q", l))
				continue
			}
			seen[*m.ID] = true
			var out string
			switch prng.IntN(5) {
			case 0: // never answered
				continue
			case 1:
				out = fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"error":{"code":-1,"message":"no"}}`, *m.ID)
			case 2:
				out = fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"id":%q}}`+"\n"+`{"jsonrpc":"2.0","id":%q,"result":{"again":1}}`, *m.ID, *m.ID, *m.ID)
			default:
				out = fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"id":%q}}`, *m.ID, *m.ID)
			}
			if _, err := io.WriteString(s.peerOut, out+"\n"); err != nil {
				return
			}
		}
	}()
	counts := make([]atomic.Int32, n)
	cancels := make([]context.CancelFunc, n)
	var wg sync.WaitGroup
	for i := range n {
		mode := rng.IntN(4)
		delay := time.Duration(rng.IntN(300)) * time.Microsecond
		limit := time.Duration(rng.IntN(3000)) * time.Microsecond // used by every third call
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i] = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			if mode == 0 {
				cancel()
			}
			start := s.calls.Go
			if i%3 == 0 {
				start = func(ctx context.Context, method string, params json.RawMessage, done func(jsonrpcline.Response)) {
					s.calls.GoWithin(ctx, method, params, limit, errStressLimit, done)
				}
			}
			start(ctx, "tools/call", json.RawMessage(`{"i":`+strconv.Itoa(i)+`}`), func(r jsonrpcline.Response) {
				counts[i].Add(1)
				set := 0
				if len(r.Result) > 0 {
					set++
				}
				if r.Error != nil {
					set++
				}
				if r.Err != nil {
					set++
				}
				if set != 1 {
					peerErr.Store(fmt.Errorf("call %d: response %+v", i, r))
				}
			})
			if mode == 1 {
				time.Sleep(delay)
				cancel()
			}
		}()
	}
	wg.Wait()
	time.Sleep(50 * time.Millisecond)
	s.calls.Fail(nil)
	waitFor(t, "every call to end", func() bool {
		for i := range counts {
			if counts[i].Load() == 0 {
				return false
			}
		}
		return true
	})
	for _, cancel := range cancels {
		cancel()
	}
	time.Sleep(20 * time.Millisecond)
	for i := range counts {
		if c := counts[i].Load(); c != 1 {
			t.Fatalf("call %d: done called %d times", i, c)
		}
	}
	if p := s.calls.Pending(); p != 0 {
		t.Fatalf("%d pending", p)
	}
	if err := peerErr.get(); err != nil {
		t.Fatal(err)
	}
	// Nothing of ours reached the SDK.
	s.send(t, `{"jsonrpc":"2.0","method":"sentinel"}`)
	for {
		l := next(t, s.toSDK, "SDK")
		if l == `{"jsonrpc":"2.0","method":"sentinel"}`+"\n" {
			break
		}
		t.Fatalf("SDK got %q", l)
	}
}

// FuzzCallsTap feeds arbitrary lines to the Tap of a Calls with pending
// calls. Properties: no panic; a line ends at most one call, and only when
// taken; a taken line is JSON naming our prefix; every done is called at
// most once, and exactly once after Fail; each outcome is exactly one of
// Result (valid JSON), Error and Err.
func FuzzCallsTap(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"t-1","result":{}}`,
		`{"jsonrpc":"2.0","id":"t-2","error":{"code":-32601,"message":"m","data":[1]}}` + "\n" + `{"jsonrpc":"2.0","id":"t-2","result":{}}`,
		`{"jsonrpc":"2.0","id":"t-3"}`,
		`{"jsonrpc":"2.0","id":"t-1","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"result":{"t":"t-1"}}`,
		`{"jsonrpc":"2.0","id":"t-4","result":null}` + "\r\n" + `{"id":"t-1","result":"x"}`,
		`{"id":"t-","result":{}}` + "\n" + `{"id":"t-1","result":{},"error":null}`,
		`{"ID":"t-1","Result":{}}`,
		"\"t-\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const calls = 4
		c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(io.Discard), "t-")
		var counts [calls]atomic.Int32
		var bad errSink
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i := range calls {
			cctx := context.Background()
			if i == calls-1 {
				cctx = ctx // t-4 is cancelled half way
			}
			c.Go(cctx, "m", nil, func(r jsonrpcline.Response) {
				counts[i].Add(1)
				set := 0
				if len(r.Result) > 0 {
					set++
					if !json.Valid(r.Result) {
						bad.Store(fmt.Errorf("call %d: Result %q is not JSON", i, r.Result))
					}
				}
				if r.Error != nil {
					set++
				}
				if r.Err != nil {
					set++
				}
				if set != 1 {
					bad.Store(fmt.Errorf("call %d: response %+v", i, r))
				}
			})
		}
		total := func() int {
			s := 0
			for i := range counts {
				s += int(counts[i].Load())
			}
			return s
		}
		lines := bytes.Split(data, []byte("\n"))
		for k, line := range lines {
			if k == len(lines)/2 {
				cancel()
				waitFor(t, "the cancelled call to end", func() bool { return counts[calls-1].Load() == 1 })
			}
			before, pendingBefore := total(), c.Pending()
			taken := c.Tap(line)
			ended := total() - before
			if ended > 1 || (ended == 1 && !taken) {
				t.Fatalf("Tap(%q) = %v ended %d calls", line, taken, ended)
			}
			if p := c.Pending(); p != pendingBefore-ended {
				t.Fatalf("Tap(%q): %d pending, was %d, %d ended", line, p, pendingBefore, ended)
			}
			if taken && (!bytes.Contains(line, []byte(`"t-`)) || !json.Valid(line)) {
				t.Fatalf("Tap took %q", line)
			}
		}
		for i := range counts {
			if n := counts[i].Load(); n > 1 {
				t.Fatalf("call %d: done called %d times", i, n)
			}
		}
		c.Fail(nil)
		waitFor(t, "every call to end", func() bool { return total() == calls })
		for i := range counts {
			if n := counts[i].Load(); n != 1 {
				t.Fatalf("call %d: done called %d times", i, n)
			}
		}
		if err := bad.get(); err != nil {
			t.Fatal(err)
		}
	})
}

// errSink keeps the first error reported to it from any goroutine.
type errSink struct {
	mu  sync.Mutex
	err error
}

func (e *errSink) Store(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
}

func (e *errSink) get() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// TestCallsWithin checks GoWithin's time limits, which one timer serves for
// all calls: answered in time, expired (in deadline order, whatever the
// order of the calls), a limit that has already passed, a context that ends
// first, and Fail.
func TestCallsWithin(t *testing.T) {
	errLimit := errors.New(`limit "reached"`)
	req := func(id string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{}}` + "\n"
	}
	cancelled := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `","reason":"limit \"reached\""}}` + "\n"
	}

	t.Run("answered in time", func(t *testing.T) {
		rec := &recorder{}
		c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
		o := newOutcome()
		c.GoWithin(context.Background(), "tools/call", json.RawMessage(`{}`), time.Hour, errLimit, o.done)
		if !c.Tap([]byte(`{"jsonrpc":"2.0","id":"t-1","result":{"ok":true}}`)) {
			t.Fatal("answer not taken")
		}
		checkResponse(t, o.wait(t), want{result: `{"ok":true}`})
		if got, want := rec.get(), []string{req("t-1")}; !equalStrings(got, want) {
			t.Fatalf("wrote %q, want %q", got, want)
		}
		if c.Pending() != 0 {
			t.Fatalf("%d pending", c.Pending())
		}
	})

	t.Run("expired in deadline order", func(t *testing.T) {
		rec := &recorder{}
		c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
		var mu sync.Mutex
		var order []string
		track := func(name string, o *outcome) func(jsonrpcline.Response) {
			return func(r jsonrpcline.Response) {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				o.done(r)
			}
		}
		slow, fast, open := newOutcome(), newOutcome(), newOutcome()
		c.GoWithin(context.Background(), "tools/call", json.RawMessage(`{}`), 150*time.Millisecond, errLimit, track("slow", slow))
		c.GoWithin(context.Background(), "tools/call", json.RawMessage(`{}`), 30*time.Millisecond, errLimit, track("fast", fast))
		c.GoWithin(context.Background(), "tools/call", json.RawMessage(`{}`), time.Hour, errLimit, track("open", open))
		for _, o := range []*outcome{fast, slow} {
			r := o.wait(t)
			if r.Err != errLimit {
				t.Fatalf("Err %v, want exactly the cause", r.Err)
			}
		}
		if open.called() || c.Pending() != 1 {
			t.Fatalf("the call without a near limit ended (%v) or %d pending", open.called(), c.Pending())
		}
		mu.Lock()
		if got := fmt.Sprint(order); got != "[fast slow]" {
			t.Errorf("ended in order %s, want [fast slow]", got)
		}
		mu.Unlock()
		if got, want := rec.get(), []string{req("t-1"), req("t-2"), req("t-3"), cancelled("t-2"), cancelled("t-1")}; !equalStrings(got, want) {
			t.Fatalf("wrote %q, want %q", got, want)
		}
		// Late answers are taken and dropped; the open call still answers.
		for _, line := range []string{`{"jsonrpc":"2.0","id":"t-1","result":{}}`, `{"jsonrpc":"2.0","id":"t-3","result":{"n":3}}`} {
			if !c.Tap([]byte(line)) {
				t.Fatalf("%s not taken", line)
			}
		}
		checkResponse(t, open.wait(t), want{result: `{"n":3}`})
		if slow.count() != 1 || fast.count() != 1 || open.count() != 1 || c.Pending() != 0 {
			t.Fatalf("done calls %d, %d, %d; %d pending", slow.count(), fast.count(), open.count(), c.Pending())
		}
	})

	t.Run("limit already passed", func(t *testing.T) {
		for _, d := range []time.Duration{0, -time.Second, time.Nanosecond} {
			rec := &recorder{}
			c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
			o := newOutcome()
			c.GoWithin(context.Background(), "tools/call", json.RawMessage(`{}`), d, errLimit, o.done)
			if r := o.wait(t); r.Err != errLimit {
				t.Fatalf("limit %s: Err %v, want exactly the cause", d, r.Err)
			}
			// Unless the limit ended the call before the request was
			// written, the request and then its cancellation were.
			if got := rec.get(); len(got) != 0 && !equalStrings(got, []string{req("t-1"), cancelled("t-1")}) {
				t.Fatalf("limit %s: wrote %q", d, got)
			}
			if o.count() != 1 || c.Pending() != 0 {
				t.Fatalf("limit %s: done called %d times, %d pending", d, o.count(), c.Pending())
			}
		}
	})

	t.Run("context ends first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{}
			c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(rec), "t-")
			ctx, cancel := context.WithCancel(context.Background())
			o := newOutcome()
			c.GoWithin(ctx, "tools/call", json.RawMessage(`{}`), 40*time.Millisecond, errLimit, o.done)
			cancel()
			checkResponse(t, o.wait(t), want{err: context.Canceled})
			time.Sleep(80 * time.Millisecond) // the timer fires and finds nothing to end
			synctest.Wait()
			if o.count() != 1 || c.Pending() != 0 {
				t.Fatalf("done called %d times, %d pending", o.count(), c.Pending())
			}
			if got, want := rec.get(), []string{req("t-1"),
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"t-1","reason":"context canceled"}}` + "\n"}; !equalStrings(got, want) {
				t.Fatalf("wrote %q, want %q", got, want)
			}
		})
	})

	t.Run("Fail", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := jsonrpcline.NewCalls(jsonrpcline.NewWriter(&recorder{}), "t-")
			o := newOutcome()
			c.GoWithin(context.Background(), "tools/call", json.RawMessage(`{}`), 40*time.Millisecond, errLimit, o.done)
			errGone := errors.New("gone")
			c.Fail(errGone)
			checkResponse(t, o.wait(t), want{err: errGone})
			time.Sleep(80 * time.Millisecond) // the timer fires and finds nothing to end
			synctest.Wait()
			if o.count() != 1 || c.Pending() != 0 {
				t.Fatalf("done called %d times, %d pending", o.count(), c.Pending())
			}
			later := newOutcome()
			c.GoWithin(context.Background(), "tools/call", json.RawMessage(`{}`), time.Millisecond, errLimit, later.done)
			checkResponse(t, later.wait(t), want{err: errGone})
		})
	})
}
