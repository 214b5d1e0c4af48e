package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// hostileMethods are the requests an agent can send, each with a
// placeholder (%s) where a hostile string goes: every method the gateway
// serves over stdio (the SDK's, the tools of both kinds, the MCP Skills
// extension's), plus an unknown one.
var hostileMethods = []string{
	`"method":"initialize","params":{"protocolVersion":%s,"capabilities":{},"clientInfo":{"name":%[1]s,"version":"0"}}`,
	`"method":"ping","params":{"_meta":{"progressToken":%s}}`,
	`"method":"tools/list","params":{"cursor":%s}`,
	`"method":"tools/call","params":{"name":%s,"arguments":{}}`,
	`"method":"tools/call","params":{"name":"skill_list","arguments":{"query":%s}}`,
	`"method":"tools/call","params":{"name":"skill_list","arguments":{"category":%s,"cursor":%[1]s}}`,
	`"method":"tools/call","params":{"name":"load_skill","arguments":{"skill":%s}}`,
	`"method":"tools/call","params":{"name":"unload_skill","arguments":{"skill":%s}}`,
	`"method":"tools/call","params":{"name":"ls","arguments":{"path":%s}}`,
	`"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":%s,"offset":0,"limit":3}}`,
	`"method":"tools/call","params":{"name":"grep","arguments":{"pattern":%s,"path":"/","glob":%[1]s}}`,
	`"method":"tools/call","params":{"name":"glob","arguments":{"pattern":%s}}`,
	`"method":"tools/call","params":{"name":"write_file","arguments":{"file_path":"/workspace/f","content":%s}}`,
	`"method":"tools/call","params":{"name":"write_file","arguments":{"file_path":%s,"content":"x"}}`,
	`"method":"tools/call","params":{"name":"edit_file","arguments":{"file_path":%s,"old_string":%[1]s,"new_string":"y"}}`,
	`"method":"tools/call","params":{"name":"cap_echo","arguments":{"text":%s}}`,
	`"method":"resources/list","params":{"cursor":%s}`,
	`"method":"resources/templates/list","params":{"cursor":%s}`,
	`"method":"resources/read","params":{"uri":%s}`,
	`"method":"resources/read","params":{"uri":"skill://pub/alpha/"}`,
	`"method":"resources/subscribe","params":{"uri":%s}`,
	`"method":"resources/unsubscribe","params":{"uri":%s}`,
	`"method":"prompts/list","params":{"cursor":%s}`,
	`"method":"prompts/get","params":{"name":"skills","arguments":{"category":%s,"budget":%[1]s}}`,
	`"method":"prompts/get","params":{"name":%s}`,
	`"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":%s},"argument":{"name":"category","value":%[1]s}}`,
	`"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":%s},"argument":{"name":"path","value":%[1]s}}`,
	`"method":"logging/setLevel","params":{"level":%s}`,
	`"method":"skills/list","params":{"cursor":%s}`,
	`"method":"skills/get","params":{"uri":%s}`,
	`"method":"resources/directory/read","params":{"uri":%s}`,
	`"method":%s,"params":{}`,
}

// echoSource offers one capability tool, cap_echo, whose result is an error
// carrying the call's arguments: the relay's path, fuzzed with the rest.
type echoSource struct{}

func (echoSource) Tools(context.Context, capability.Principal) ([]*mcp.Tool, error) {
	return []*mcp.Tool{{Name: "cap_echo", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (echoSource) Call(_ context.Context, _ capability.Caller, _ string, args json.RawMessage, done func(json.RawMessage)) {
	text, _ := json.Marshal("upstream refused " + string(args))
	done(json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}],"isError":true}`))
}

// stdioAgent is an agent on a gateway connection served over stdio (the
// transport of skillgate mcp), talking in raw JSON-RPC lines.
type stdioAgent struct {
	in    io.WriteCloser
	lines chan string
	n     int
}

// newStdioAgent connects a new session of gw over in-memory pipes and
// finishes the MCP handshake.
func newStdioAgent(t testing.TB, gw *mcpserver.Gateway) *stdioAgent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := gw.Connect(ctx, principal("hostile", skill.T1), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := &stdioAgent{in: inW, lines: make(chan string, 64)}
	go func() {
		_ = conn.Server().Run(ctx, conn.StdioTransport(inR, outW))
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
		close(a.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		conn.Close()
		for range a.lines { // drain, so that the server's writer ends
		}
	})
	a.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	a.answer(t, `"init"`)
	a.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return a
}

func (a *stdioAgent) send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(a.in, line+"\n"); err != nil {
		t.Fatalf("the session is gone: writing %q: %v", line, err)
	}
}

// answer reads lines until the response to id; every line read must be a
// JSON-RPC message. It returns the response.
func (a *stdioAgent) answer(t testing.TB, id string) *jsonrpc.Response {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-a.lines:
			if !ok {
				t.Fatalf("the session ended before answering id %s", id)
			}
			if err := checkJSONRPC(l); err != nil {
				t.Fatalf("the server wrote a line that is not JSON-RPC (%v): %q", err, l)
			}
			msg, err := jsonrpc.DecodeMessage([]byte(l))
			if err != nil {
				continue // an error response with id null: checked above
			}
			if r, ok := msg.(*jsonrpc.Response); ok {
				got, _ := json.Marshal(r.ID.Raw())
				if string(got) == id {
					return r
				}
			}
		case <-timeout:
			t.Fatalf("no answer to id %s within 20s", id)
		}
	}
}

// checkJSONRPC reports why line is not one JSON-RPC 2.0 message: a request
// or notification, a result, or an error whose id may be null (a line that
// could not be read) and whose error is a code and a message.
func checkJSONRPC(line string) error {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    *int64          `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if !json.Valid([]byte(line)) {
		return errors.New("not JSON")
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return err
	}
	switch {
	case m.JSONRPC != "2.0":
		return errors.New(`no "jsonrpc": "2.0"`)
	case m.Method != nil:
		return nil
	case len(m.ID) == 0:
		return errors.New("a response without an id")
	case (m.Result == nil) == (m.Error == nil):
		return errors.New("a response needs exactly one of result and error")
	case m.Error != nil && (m.Error.Code == nil || m.Error.Message == nil):
		return errors.New("an error needs a code and a message")
	}
	return nil
}

// request sends body (a request's members after its id) with a fresh id and
// returns the response, then checks that the session still answers a ping.
func (a *stdioAgent) request(t testing.TB, body string) *jsonrpc.Response {
	t.Helper()
	a.n++
	id := fmt.Sprintf(`"r%d"`, a.n)
	a.send(t, `{"jsonrpc":"2.0","id":`+id+`,`+body+`}`)
	resp := a.answer(t, id)
	ping := fmt.Sprintf(`"ping%d"`, a.n)
	a.send(t, `{"jsonrpc":"2.0","id":`+ping+`,"method":"ping"}`)
	if r := a.answer(t, ping); r.Error != nil {
		t.Fatalf("after %s, ping failed: %v", body, r.Error)
	}
	return resp
}

func hostileGateway(t testing.TB) *mcpserver.Gateway {
	t.Helper()
	e := newEnv(t, storages[0])
	gw, err := mcpserver.New(mcpserver.Options{Sessions: e.mgr, Catalog: e.Registry, Capabilities: echoSource{}})
	if err != nil {
		t.Fatal(err)
	}
	return gw
}

// TestHostileURIAnswered: a resources/read of a URI with a control
// character (the SDK builds its not-found error's data with Go's %q, which
// is not JSON) is answered with a JSON-RPC error, and the session goes on.
func TestHostileURIAnswered(t *testing.T) {
	a := newStdioAgent(t, hostileGateway(t))
	tests := []struct {
		uri  string
		data string // the error's data
	}{
		{"skill://pub/alpha/\u0000x", `{"uri":"skill://pub/alpha/\u0000x"}`},
		{"skill://pub/alpha/\u007fx\u0080\u2028", `{"uri":"skill://pub/alpha/\u007fx\u0080\u2028"}`},
		{"nosuch://\u001b[2J", `{"uri":"nosuch://\u001b[2J"}`},
	}
	for _, tt := range tests {
		uri, _ := json.Marshal(tt.uri)
		r := a.request(t, `"method":"resources/read","params":{"uri":`+string(uri)+`}`)
		var werr *jsonrpc.Error
		if r.Error == nil || !asWireError(r.Error, &werr) {
			t.Fatalf("resources/read %q: %+v, want an error", tt.uri, r)
		}
		var want, got any
		if err := json.Unmarshal([]byte(tt.data), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(werr.Data, &got); err != nil {
			t.Fatalf("resources/read %q: data %q is not JSON: %v", tt.uri, werr.Data, err)
		}
		if werr.Code != mcp.CodeResourceNotFound || werr.Message != "Resource not found" || !reflect.DeepEqual(got, want) {
			t.Errorf("resources/read %q: code %d message %q data %s, want %d %q %s", tt.uri, werr.Code, werr.Message, werr.Data, mcp.CodeResourceNotFound, "Resource not found", tt.data)
		}
	}
}

func asWireError(err error, target **jsonrpc.Error) bool {
	e, ok := err.(*jsonrpc.Error)
	if ok {
		*target = e
	}
	return ok
}

// hostileSeeds are strings that have broken MCP servers: control
// characters, invalid UTF-8, escapes, huge numbers, nesting.
var hostileSeeds = []string{
	"skill://pub/alpha/\x00x", "\x00", "\x1b]0;title\x07", "\r\x1b[2K", "\xff\xfe", "\u2028\u2029", "\xed\xa0\x80",
	"../../etc/passwd", "/skills/../workspace", "%00", "skill://a/../b/SKILL.md", "{\"a\":1}", "\\u0000",
	strings.Repeat("a", 5000), "skill://" + strings.Repeat("x/", 300), "*", "[", "(?i", "1e999", "-0",
}

// FuzzAgentSession drives every method with hostile strings, JSON-encoded
// in its parameters or spliced in raw, and checks that every line the
// server writes is JSON-RPC, that the request is answered (or, when the
// line was not a message, that the session answered with an error), and
// that the session then still answers a ping.
func FuzzAgentSession(f *testing.F) {
	for i := range hostileMethods {
		for j, s := range hostileSeeds {
			if (i+j)%4 == 0 {
				f.Add(uint8(i), s, j%3 == 0)
			}
		}
		f.Add(uint8(i), "skill://pub/alpha/\x00x", false)
	}
	gw := hostileGateway(f)
	f.Fuzz(func(t *testing.T, method uint8, s string, raw bool) {
		a := newStdioAgent(t, gw)
		tmpl := hostileMethods[int(method)%len(hostileMethods)]
		var arg string
		if raw {
			arg = strings.NewReplacer("\n", " ", "\r", " ").Replace(s) // one line
		} else {
			b, _ := json.Marshal(s)
			arg = string(b)
		}
		body := strings.ReplaceAll(fmt.Sprintf(tmpl, arg), "%!(EXTRA", "") // tolerate unused args
		a.n++
		id := fmt.Sprintf(`"r%d"`, a.n)
		line := `{"jsonrpc":"2.0","id":` + id + `,` + body + `}`
		a.send(t, line)
		if json.Valid([]byte(line)) {
			a.answer(t, id)
		}
		a.send(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		if r := a.answer(t, `"after"`); r.Error != nil {
			t.Fatalf("after %s, ping failed: %v", line, r.Error)
		}
	})
}
