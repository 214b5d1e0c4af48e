package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
)

// Raw capture of tools/list results.
//
// The SDK's typed mcp.Tool drops fields it does not know (execution, unknown
// annotation keys) and folds absent booleans into false, so the pin and the
// risk derivation work on the bytes the server sent. A caller that wants the
// raw result of one ListTools call puts a *rawCapture in the call's context;
// the transport recognises the outgoing tools/list request by that context,
// remembers its JSON-RPC id, and stores the result of the response with the
// same id before the SDK sees it. Stdio does this in a Connection wrapper;
// streamable HTTP does it in the http.RoundTripper, because wrapping the SDK's
// HTTP connection would hide its session hooks.

type captureKey struct{}

// rawCapture receives the raw result of one tools/list call.
type rawCapture struct {
	mu     sync.Mutex
	result json.RawMessage
}

func withCapture(ctx context.Context, c *rawCapture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

func captureFrom(ctx context.Context) *rawCapture {
	c, _ := ctx.Value(captureKey{}).(*rawCapture)
	return c
}

func (c *rawCapture) set(result json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.result == nil {
		c.result = bytes.Clone(result)
	}
}

func (c *rawCapture) get() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.result
}

// fatalRecorder keeps the first transport-level failure that this package
// caused on purpose (a size limit), so that the error reported to the caller
// names it instead of the SDK's generic "connection closed".
type fatalRecorder struct {
	mu  sync.Mutex
	err error
}

func (f *fatalRecorder) record(err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
	return err
}

func (f *fatalRecorder) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// pendingCapture is a tools/list request written with a capture in its
// context, waiting for its response.
type pendingCapture struct {
	ctx  context.Context
	slot *rawCapture
}

// errInFlight ends raw calls that were sent when their connection closed.
var errInFlight = errors.New("the connection closed while the call was in flight")

// captureConn wraps a stdio mcp.Connection: it captures tools/list results
// and runs onClose (process shutdown) after the inner connection closes.
type captureConn struct {
	inner   mcp.Connection
	calls   *jsonrpcline.Calls // raw calls on the same stream
	onClose func() error

	mu      sync.Mutex
	pending map[any]pendingCapture // by JSON-RPC id

	closeOnce sync.Once
	closeErr  error
}

var _ mcp.Connection = (*captureConn)(nil)

// Read implements mcp.Connection.
func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.inner.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		p, found := c.pending[resp.ID.Raw()]
		delete(c.pending, resp.ID.Raw())
		c.mu.Unlock()
		if found && resp.Error == nil {
			p.slot.set(resp.Result)
		}
	}
	return msg, err
}

// Write implements mcp.Connection.
func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "tools/list" {
		if slot := captureFrom(ctx); slot != nil {
			c.mu.Lock()
			if c.pending == nil {
				c.pending = make(map[any]pendingCapture)
			}
			for id, p := range c.pending { // drop requests whose caller gave up
				if p.ctx.Err() != nil {
					delete(c.pending, id)
				}
			}
			c.pending[req.ID.Raw()] = pendingCapture{ctx: ctx, slot: slot}
			c.mu.Unlock()
		}
	}
	return c.inner.Write(ctx, msg)
}

// Close implements mcp.Connection. It is idempotent.
func (c *captureConn) Close() error {
	c.closeOnce.Do(func() {
		if c.calls != nil {
			// Not ErrClosed: these calls were sent and may have run.
			c.calls.Fail(errInFlight)
		}
		err := c.inner.Close()
		if c.onClose != nil {
			if cerr := c.onClose(); cerr != nil && err == nil {
				err = cerr
			}
		}
		c.closeErr = err
	})
	return c.closeErr
}

// SessionID implements mcp.Connection.
func (c *captureConn) SessionID() string { return c.inner.SessionID() }

// lineLimitReader fails once a line (bytes since the last '\n') grows past
// max. On stdio one line is one JSON-RPC message; on SSE one data line is.
type lineLimitReader struct {
	r     io.Reader
	max   int
	line  int
	fatal *fatalRecorder
	what  string
	onEOF func() // optional: called when the underlying reader returns io.EOF
}

// Read implements io.Reader, failing once a line exceeds the limit.
func (l *lineLimitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	chunk := p[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			l.line += len(chunk)
			break
		}
		if l.line+i > l.max {
			l.line += i
			break
		}
		l.line = 0
		chunk = chunk[i+1:]
	}
	if l.line > l.max {
		return 0, l.fatal.record(fmt.Errorf("%w: a %s exceeded %d bytes", ErrResponseTooLarge, l.what, l.max))
	}
	if err == io.EOF && l.onEOF != nil {
		l.onEOF()
	}
	return n, err
}

// httpTransport adds the declared headers to every request to a streamable
// HTTP server, bounds response sizes, and captures tools/list results.
type httpTransport struct {
	base     http.RoundTripper
	headers  map[string]string
	origin   string // scheme://host of the declared URL; headers go only there
	maxFrame int
	fatal    *fatalRecorder
	// declaredAuth is set when the declaration sets its own
	// Authorization header: a 401 is then about that credential, not
	// about a connection.
	declaredAuth bool
	// aborted ends every request in flight and every later one. The SDK
	// waits for pending writes (a cancellation notification POSTed to a
	// hung server, for example) before it closes a session; aborting is how
	// this package bounds that wait.
	aborted context.Context
}

// RoundTrip implements http.RoundTripper.
func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.aborted, cancel)
	release := func() { stop(); cancel() }
	out := req.Clone(ctx)
	if req.URL.Scheme+"://"+req.URL.Host == t.origin {
		for _, k := range sortedKeys(t.headers) {
			out.Header.Set(k, t.headers[k])
		}
	}
	var (
		slot   *rawCapture
		wantID any
	)
	if s := captureFrom(req.Context()); s != nil && req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(io.LimitReader(body, int64(t.maxFrame)))
			_ = body.Close()
			if msg, err := jsonrpc.DecodeMessage(data); err == nil {
				if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() && r.Method == "tools/list" {
					slot, wantID = s, r.ID.Raw()
				}
			}
		}
	}
	resp, err := t.base.RoundTrip(out)
	if err != nil {
		release()
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		// The server wants (another) bearer token: a connection to make
		// or to refresh, which the error names, whatever the MCP client
		// would make of the status.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		release()
		if t.declaredAuth {
			return nil, fmt.Errorf("%w: the server answered HTTP status %s; check the credential its Authorization header references", ErrUnauthorized, resp.Status)
		}
		return nil, fmt.Errorf("%w: the server answered HTTP status %s; it needs a connected account: connect one (skillgate connect), or reconnect an expired one", ErrUnauthorized, resp.Status)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		resp.Body = &sseBody{
			rc:      resp.Body,
			release: release,
			limit:   &lineLimitReader{r: resp.Body, max: t.maxFrame, fatal: t.fatal, what: "server-sent event line"},
			slot:    slot,
			wantID:  wantID,
			max:     t.maxFrame,
		}
	} else {
		resp.Body = &jsonBody{rc: resp.Body, release: release, max: t.maxFrame, fatal: t.fatal, slot: slot, wantID: wantID}
	}
	return resp, nil
}

// deliver stores msg's result in slot when msg is the awaited response.
func deliver(data []byte, slot *rawCapture, wantID any) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return
	}
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error == nil && r.ID.Raw() == wantID {
		slot.set(r.Result)
	}
}

// jsonBody bounds an application/json response body (one JSON-RPC message)
// and captures it when it answers the awaited tools/list call.
type jsonBody struct {
	rc      io.ReadCloser
	release func()
	max     int
	n       int
	fatal   *fatalRecorder
	slot    *rawCapture
	wantID  any
	buf     []byte
}

// Read implements io.Reader with the size bound and the capture.
func (b *jsonBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n += n
	if b.n > b.max {
		return 0, b.fatal.record(fmt.Errorf("%w: an HTTP response body exceeded %d bytes", ErrResponseTooLarge, b.max))
	}
	if b.slot != nil {
		b.buf = append(b.buf, p[:n]...)
		if err == io.EOF {
			deliver(b.buf, b.slot, b.wantID)
			b.slot = nil
		}
	}
	return n, err
}

// Close implements io.Closer and releases the request context.
func (b *jsonBody) Close() error {
	err := b.rc.Close()
	b.release()
	return err
}

// sseBody bounds a text/event-stream body line by line and, while a
// tools/list call awaits its response on it, parses events as they pass so
// that the result is captured before the SDK decodes the same event.
type sseBody struct {
	rc      io.ReadCloser
	release func()
	limit   *lineLimitReader
	slot    *rawCapture
	wantID  any
	max     int
	line    []byte // the incomplete current line
	data    []byte // data lines of the current event
}

// Read implements io.Reader with the line bound and the capture.
func (b *sseBody) Read(p []byte) (int, error) {
	n, err := b.limit.Read(p)
	if b.slot != nil && n > 0 {
		b.scan(p[:n])
	}
	return n, err
}

func (b *sseBody) scan(chunk []byte) {
	for len(chunk) > 0 && b.slot != nil {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			b.line = append(b.line, chunk...)
			return
		}
		b.line = append(b.line, chunk[:i]...)
		chunk = chunk[i+1:]
		line := bytes.TrimSuffix(b.line, []byte("\r"))
		switch {
		case len(line) == 0: // end of event
			if len(b.data) > 0 {
				deliver(b.data, b.slot, b.wantID)
				if b.slot.get() != nil {
					b.slot = nil
				}
			}
			b.data = b.data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(b.data) > 0 {
				b.data = append(b.data, '\n')
			}
			if len(b.data)+len(v) <= b.max {
				b.data = append(b.data, v...)
			}
		}
		b.line = b.line[:0]
	}
}

// Close implements io.Closer and releases the request context.
func (b *sseBody) Close() error {
	err := b.rc.Close()
	b.release()
	return err
}
