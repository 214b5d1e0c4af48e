package mcpserver_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestStdioMalformedLines: a line that is not a JSON-RPC message gets a
// JSON-RPC error response and the connection goes on serving.
func TestStdioMalformedLines(t *testing.T) {
	e := newEnv(t, storages[0])
	gw, err := mcpserver.New(mcpserver.Options{Sessions: e.mgr, Catalog: e.Registry})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := gw.Connect(ctx, principal("malformed", skill.T1), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		_ = conn.Server().Run(ctx, conn.StdioTransport(inR, outW))
		outW.Close()
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if !strings.Contains(sc.Text(), `"id"`) {
				continue // a notification
			}
			lines <- sc.Text()
		}
		close(lines)
	}()
	exchange := func(send string) string {
		t.Helper()
		if _, err := io.WriteString(inW, send+"\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("after %s: the server closed its output", send)
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("after %s: no response within 10s", send)
		}
		return ""
	}
	if got := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`); !strings.Contains(got, `"result"`) {
		t.Fatalf("initialize: %s", got)
	}
	tests := []struct{ send, want string }{
		{"this is not json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not valid JSON; send one JSON-RPC message per line"}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not valid JSON; send one JSON-RPC message per line"}}`},
		{`{"id":3,"foo":1}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC 2.0 message (it needs \"jsonrpc\": \"2.0\" and a method, or an id with a result or an error)"}}`},
		{`"just a string"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC 2.0 message (it needs \"jsonrpc\": \"2.0\" and a method, or an id with a result or an error)"}}`},
	}
	for _, tt := range tests {
		if got := exchange(tt.send); got != tt.want {
			t.Errorf("after %s:\n got %s\nwant %s", tt.send, got, tt.want)
		}
	}
	// Blank lines are ignored; the connection still serves.
	if got := exchange("\n   \n" + `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); !strings.Contains(got, `"id":4,"result"`) {
		t.Fatalf("tools/list after malformed lines: %s", got)
	}
}
