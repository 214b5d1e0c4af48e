package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// asyncSource offers two capability tools: "echo" answers at once with a
// result carrying a field the SDK does not know (a call the SDK served
// would lose it); "slow" answers only when its context ends. It records
// each call.
type asyncSource struct {
	mu       sync.Mutex
	async    []string // "name args" of Call calls
	slowDone chan error
}

func (s *asyncSource) Tools(context.Context, capability.Principal) ([]*mcp.Tool, error) {
	schema := json.RawMessage(`{"type":"object"}`)
	return []*mcp.Tool{{Name: "echo", InputSchema: schema}, {Name: "slow", InputSchema: schema}}, nil
}

const rawResult = `{"content":[{"type":"text","text":"relayed"}],"x-extra":{"kept":true}}`

func (s *asyncSource) Call(ctx context.Context, c capability.Caller, name string, args json.RawMessage, done func(json.RawMessage)) {
	s.mu.Lock()
	s.async = append(s.async, name+" "+string(args))
	s.mu.Unlock()
	if name == "slow" {
		go func() {
			<-ctx.Done()
			done(json.RawMessage(`{"content":[],"isError":true}`))
			s.slowDone <- ctx.Err()
		}()
		return
	}
	done(json.RawMessage(rawResult))
}

func (s *asyncSource) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.async...)
}

// TestStdioRelay drives a stdio connection with hand-written JSON-RPC lines
// and checks which calls are relayed as raw bytes and which the SDK serves.
// It runs in a synctest bubble (the connection runs over in-memory pipes),
// so that "the call reached the source" and "nothing was answered after
// close" are checked once every goroutine of the connection is idle.
func TestStdioRelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, storages[0])
		src := &asyncSource{slowDone: make(chan error, 1)}
		gw, err := mcpserver.New(mcpserver.Options{Sessions: e.mgr, Catalog: e.Registry, Capabilities: src})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		conn, err := gw.Connect(ctx, principal("relay", skill.T1), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		inR, inW := io.Pipe()
		defer inW.Close() // the client hangs up: the server's reader ends
		outR, outW := io.Pipe()
		go func() {
			_ = conn.Server().Run(ctx, conn.StdioTransport(inR, outW))
			outW.Close()
		}()
		lines := make(chan string, 64)
		go func() {
			sc := bufio.NewScanner(outR)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID == nil && m.Method != "" {
					continue // a notification
				}
				lines <- sc.Text()
			}
			close(lines)
		}()
		send := func(line string) {
			t.Helper()
			if _, err := io.WriteString(inW, line+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		next := func() string {
			t.Helper()
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("the server closed its output")
				}
				return l
			case <-time.After(10 * time.Second):
				t.Fatal("no response within 10s")
			}
			return ""
		}

		// Before the handshake the SDK answers, and refuses.
		send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
		if got := next(); !strings.Contains(got, `"id":1`) || !strings.Contains(got, `"error"`) || !strings.Contains(got, "invalid during session initialization") {
			t.Fatalf("call before initialize: got %s", got)
		}
		send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
		if got := next(); !strings.Contains(got, `"id":2`) || !strings.Contains(got, `"result"`) {
			t.Fatalf("initialize: got %s", got)
		}
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

		// A capability call is relayed: the source's bytes, the agent's id.
		for _, tc := range []struct{ id, args string }{
			{`"abc"`, `{"x":1,"y":[true,null]}`},
			{`3`, `{}`},
			{`-4.5`, `{"s":"é\u2028"}`},
		} {
			send(`{"jsonrpc":"2.0","id":` + tc.id + `,"method":"tools/call","params":{"name":"echo","arguments":` + tc.args + `}}`)
			want := `{"jsonrpc":"2.0","id":` + tc.id + `,"result":` + rawResult + `}`
			if got := next(); got != want {
				t.Fatalf("relayed call id %s:\n got %s\nwant %s", tc.id, got, want)
			}
		}
		// The gateway's own tools and unknown tools are the SDK's.
		send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"skill_list","arguments":{}}}`)
		if got := next(); !strings.Contains(got, `"id":5`) || !strings.Contains(got, `"result"`) || strings.Contains(got, "relayed") {
			t.Fatalf("skill_list: got %s", got)
		}
		send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
		if got := next(); !strings.Contains(got, `"id":6`) || !strings.Contains(got, "nope") {
			t.Fatalf("unknown tool: got %s", got)
		}
		// A notification (no id) is not relayed either.
		send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{}}}`)

		// A cancelled relayed call is cancelled at the source and never answered.
		send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
		send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`)
		select {
		case err := <-src.slowDone:
			if err != context.Canceled {
				t.Fatalf("slow call ended with %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the cancelled call's context did not end")
		}
		send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
		for {
			got := next()
			if strings.Contains(got, `"id":9`) {
				t.Fatalf("a cancelled call was answered: %s", got)
			}
			if strings.Contains(got, `"id":10`) {
				break
			}
			t.Fatalf("unexpected line: %s", got)
		}

		// Closing the connection ends a relayed call still running, and it is
		// not answered.
		send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
		synctest.Wait()
		if async := src.calls(); len(async) != 5 {
			t.Fatalf("the second slow call did not reach the source: relayed %q", async)
		}
		conn.Close()
		synctest.Wait()
		select {
		case err := <-src.slowDone:
			if err != context.Canceled {
				t.Fatalf("slow call ended with %v at close, want context.Canceled", err)
			}
		default:
			t.Fatal("closing the connection did not end the relayed call")
		}
		select {
		case l, ok := <-lines:
			if ok {
				t.Fatalf("a line after close: %s", l)
			}
		default:
		}

		async := src.calls()
		wantAsync := []string{`echo {"x":1,"y":[true,null]}`, `echo {}`, `echo {"s":"é\u2028"}`, `slow {}`, `slow {}`}
		if strings.Join(async, "\n") != strings.Join(wantAsync, "\n") {
			t.Errorf("relayed calls:\n got %q\nwant %q", async, wantAsync)
		}
	})
}
