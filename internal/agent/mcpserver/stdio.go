package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
	"github.com/skillgate/skillgate/internal/platform/jsonscan"
)

// StdioTransport returns a transport that serves this connection over a
// newline-delimited JSON stream: what `skillgate mcp` does on its stdin and
// stdout. A tools/call of a capability tool is taken off the stream before the SDK
// decodes it, decided, and relayed: the request goes upstream and the
// upstream's result comes back to the agent as bytes, with the agent's
// request id, and nothing in between is decoded into typed values or
// re-encoded (see package internal/platform/jsonrpcline). Everything else, including capability
// calls that arrive before the MCP handshake is complete, is served by the
// SDK as over any transport. A notifications/cancelled for a relayed call
// cancels it upstream, and the agent then gets no response, as MCP asks.
// A line that is not a JSON-RPC message is answered with a JSON-RPC error
// (parse error, or invalid request) and the connection goes on; blank lines
// are ignored.
func (c *Conn) StdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	writer := jsonrpcline.NewWriter(w)
	src := c.g.opts.Capabilities
	tap := func(line []byte) bool {
		if c.skillsRequest(writer, line) {
			return true
		}
		if src != nil && c.relay(src, writer, line) {
			return true
		}
		if c.discoverWithoutVersion(writer, line) {
			return true
		}
		return c.screen(writer, line)
	}
	return &mcp.IOTransport{
		Reader: io.NopCloser(jsonrpcline.NewReader(r, 0, tap, nil)),
		Writer: nopWriteCloser{writer},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

var (
	markToolsCall = []byte(`"tools/call"`)
	markCancelled = []byte(`"notifications/cancelled"`)
	respHead      = []byte(`{"jsonrpc":"2.0","id":`)
	respResult    = []byte(`,"result":`)
	respError     = []byte(`,"error":`)
	respTail      = []byte(`}`)
)

// wireRequest is the part of an incoming message the relay reads.
type wireRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		RequestID json.RawMessage `json:"requestId"`
		// Meta is params._meta, read before parseWire's caller returns
		// (not a copy: it may be the reader's buffer).
		Meta json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// wireKeys and paramKeys are the members parseWire reads, in the order of
// its values.
var (
	wireKeys  = []string{"jsonrpc", "id", "method", "params"}
	paramKeys = []string{"name", "arguments", "requestId", "_meta"}
)

// parseWire decodes line as json.Unmarshal into a wireRequest would, and
// reports false where that fails. The usual request (plain strings, params
// an object) is read with jsonscan.Object, which costs a fraction of
// encoding/json on this path; anything else goes to encoding/json. The
// raw values are copies: line is the reader's buffer.
func parseWire(line []byte) (wireRequest, bool) {
	var top [4][]byte
	var par [4][]byte
	if jsonscan.Object(line, wireKeys, top[:]) && string(top[0]) == `"2.0"` &&
		(top[3] == nil || jsonscan.Object(top[3], paramKeys, par[:])) {
		method, ok := jsonscan.PlainString(top[2])
		name := ""
		if ok && par[0] != nil {
			name, ok = jsonscan.PlainString(par[0])
		}
		if ok {
			var req wireRequest
			req.JSONRPC, req.ID, req.Method = "2.0", bytes.Clone(top[1]), method
			req.Params.Name, req.Params.Arguments, req.Params.RequestID, req.Params.Meta = name, bytes.Clone(par[1]), bytes.Clone(par[2]), par[3]
			return req, true
		}
	}
	var req wireRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return wireRequest{}, false
	}
	return req, true
}

// relay is the tap of a stdio connection: it takes a tools/call of one of
// the connection's capability tools and hands it to src, whose answer is
// written back with the request's id. It runs on the goroutine reading the
// agent's stream.
func (c *Conn) relay(src CapabilitySource, w *jsonrpcline.Writer, line []byte) bool {
	if bytes.Contains(line, markCancelled) {
		c.cancelRelayed(line)
		return false // the SDK sees it too, for the calls it serves
	}
	if !bytes.Contains(line, markToolsCall) {
		return false
	}
	req, ok := parseWire(line)
	if !ok || req.JSONRPC != "2.0" || req.Method != "tools/call" || !isRequestID(req.ID) {
		return false
	}
	id := string(req.ID)
	// A modern request (2026-07-28) stands on its own; another needs the
	// SDK's session ready.
	e := requestEra(req.Params.Meta, c.g.versions)
	if e == eraRefused {
		return false // the SDK answers -32022 or -32602
	}
	c.mu.Lock()
	_, isCap := c.capTools[req.Params.Name]
	if !isCap || c.closed || c.relayed[id] != nil || (e != eraModern && !c.sdkReadyLocked()) {
		c.mu.Unlock()
		return false
	}
	ctx, cancel := context.WithCancel(c.relayBase)
	if c.relayed == nil {
		c.relayed = map[string]context.CancelFunc{}
	}
	c.relayed[id] = cancel
	c.mu.Unlock()

	who := capability.Caller{Principal: c.sess.Principal(), SessionID: c.sess.ID()}
	src.Call(ctx, who, req.Params.Name, req.Params.Arguments, func(result json.RawMessage) {
		c.mu.Lock()
		delete(c.relayed, id)
		c.mu.Unlock()
		// The response goes out before the call's context is released:
		// cancelling it stops the upstream call's timer and watchers, work
		// the agent need not wait for.
		defer cancel()
		if ctx.Err() != nil {
			return // the agent cancelled, or the connection closed: no response
		}
		res := c.g.agentJSON(result)
		var err error
		if e == eraModern {
			head, body := withResultType(res)
			err = w.WriteLine(respHead, []byte(id), respResult, head, body, respTail)
		} else {
			err = w.WriteLine(respHead, []byte(id), respResult, res, respTail)
		}
		if err != nil {
			c.g.log.Warn("writing a relayed result failed", "session", c.sess.ID(), "err", err)
		}
	})
	return true
}

// screen answers a line the SDK could not read, which would end the
// connection there, with a JSON-RPC error response, and consumes it; it
// leaves every JSON-RPC message to the SDK. Messages with the usual envelope
// are recognised without decoding them.
func (c *Conn) screen(w *jsonrpcline.Writer, line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return true
	}
	var top [4][]byte
	if jsonscan.Object(line, wireKeys, top[:]) && string(top[0]) == `"2.0"` && len(top[2]) > 0 && top[2][0] == '"' &&
		(top[1] == nil || isRequestID(top[1])) {
		return false // a request or notification with a string method and a usable id
	}
	var code int64
	var msg string
	switch {
	case !json.Valid(line):
		code, msg = jsonrpc.CodeParseError, "Parse error: the line is not valid JSON; send one JSON-RPC message per line"
	case line[0] == '[':
		return false // a batch: the SDK answers it or refuses it by protocol version
	default:
		if _, err := jsonrpc.DecodeMessage(line); err == nil {
			return false
		}
		code, msg = jsonrpc.CodeInvalidRequest, `Invalid Request: not a JSON-RPC 2.0 message (it needs "jsonrpc": "2.0" and a method, or an id with a result or an error)`
	}
	id := []byte("null")
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &env) == nil && isRequestID(env.ID) {
		id = env.ID
	}
	body, _ := json.Marshal(struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg})
	c.g.log.Debug("answered an unreadable line with a JSON-RPC error", "session", c.sess.ID(), "code", code)
	if err := w.WriteLine(respHead, id, respError, body, respTail); err != nil {
		c.g.log.Warn("writing a JSON-RPC error failed", "session", c.sess.ID(), "err", err)
	}
	return true
}

// sdkReadyLocked reports whether the SDK's session would serve a tools/call
// now: after the initialize handshake, or after a request of the sessionless
// protocol (2026-07-28 and later) set the client's parameters. Until then
// calls go to the SDK, which refuses them as it should. c.mu is held.
func (c *Conn) sdkReadyLocked() bool {
	if !c.sdkReady {
		for ss := range c.server.Sessions() {
			if ss.InitializeParams() != nil {
				c.sdkReady = true
			}
		}
	}
	return c.sdkReady
}

// cancelRelayed cancels the relayed call a notifications/cancelled names.
func (c *Conn) cancelRelayed(line []byte) {
	n, ok := parseWire(line)
	if !ok || n.Method != "notifications/cancelled" || !isRequestID(n.Params.RequestID) {
		return
	}
	c.mu.Lock()
	cancel := c.relayed[string(n.Params.RequestID)]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// isRequestID reports whether id is a JSON-RPC request id: a string or a
// number (null is not: that is a notification or an error reply).
func isRequestID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch b := id[0]; {
	case b == '"', b == '-', b >= '0' && b <= '9':
		return true
	}
	return false
}
