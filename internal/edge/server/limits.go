package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Defaults for [Limits], used by [DefaultLimits].
const (
	// DefaultHeaderTimeout bounds reading a request's headers, and so a
	// connection opened but never used.
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection that waits this
	// long for its next request.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultBodyTimeout bounds reading a request's body (MCP messages are
	// at most 4 MiB; a body that stalls is cut).
	DefaultBodyTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds each write of a response: a client that
	// stops reading is dropped, but a response that keeps writing (an
	// event stream) may last as long as it writes.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultStreamPing is how often an event stream (text/event-stream:
	// the MCP standalone stream, a streamed call) gets an SSE comment
	// when nothing else is written, so proxies keep it and a gone client
	// is noticed.
	DefaultStreamPing = 25 * time.Second
	// DefaultMaxClientConns bounds the connections one client address
	// holds open at once. Every client of a loopback server shares
	// 127.0.0.1, so the default leaves room for many agents on one host.
	DefaultMaxClientConns = 128
)

// Limits bounds what HTTP clients can hold of a server. A zero field turns
// its bound off; start from [DefaultLimits].
//
// Streamable HTTP keeps requests open for a long time by design: the MCP
// standalone stream (GET /mcp) and a POST answered with an event stream
// last as long as the session or the call. So no bound applies to a whole
// response: the write timeout bounds each write (a client that stops
// reading is dropped), and event streams get a comment every StreamPing.
// The read timeout covers the request body only (a whole-request read
// deadline would cancel long streams), and idle connections between
// requests are closed after IdleTimeout.
type Limits struct {
	// HeaderTimeout bounds reading the request line and headers.
	HeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle between requests.
	IdleTimeout time.Duration
	// BodyTimeout bounds reading a request's body, from the end of its
	// headers; a body that stalls gets 408 and the connection is closed.
	BodyTimeout time.Duration
	// WriteTimeout bounds each write (and flush) of a response.
	WriteTimeout time.Duration
	// StreamPing is the interval of SSE comments on event streams.
	StreamPing time.Duration
	// MaxClientConns bounds the open connections of one remote IP
	// address; the next one is answered 429 and closed.
	MaxClientConns int
}

// DefaultLimits returns the limits serve uses unless told otherwise.
func DefaultLimits() Limits {
	return Limits{
		HeaderTimeout:  DefaultHeaderTimeout,
		IdleTimeout:    DefaultIdleTimeout,
		BodyTimeout:    DefaultBodyTimeout,
		WriteTimeout:   DefaultWriteTimeout,
		StreamPing:     DefaultStreamPing,
		MaxClientConns: DefaultMaxClientConns,
	}
}

// Validate reports a negative limit, naming its field.
func (l Limits) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"header timeout", l.HeaderTimeout}, {"idle timeout", l.IdleTimeout}, {"body timeout", l.BodyTimeout},
		{"write timeout", l.WriteTimeout}, {"stream ping", l.StreamPing},
	} {
		if d.v < 0 {
			return fmt.Errorf("server: %s %s is negative; use 0 to turn it off", d.name, d.v)
		}
	}
	if l.MaxClientConns < 0 {
		return fmt.Errorf("server: connections per client %d is negative; use 0 for no limit", l.MaxClientConns)
	}
	return nil
}

// NewHTTPServer returns an [http.Server] that serves h within lim (nil
// means [DefaultLimits]). Set its BaseContext before serving if needed.
// log receives refused connections and cut requests; nil discards them.
func NewHTTPServer(h http.Handler, lim *Limits, log *slog.Logger) (*http.Server, error) {
	l := DefaultLimits()
	if lim != nil {
		l = *lim
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cl := &connLimiter{max: l.MaxClientConns, open: map[string]int{}, conns: map[net.Conn]string{}}
	return &http.Server{
		Handler:           &limitHandler{next: h, lim: l, log: log},
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		ConnContext:       cl.admit,
		ConnState:         cl.state,
	}, nil
}

// connLimiter counts the open connections of each remote IP address.
// Connections over the limit are not counted; the handler refuses them.
type connLimiter struct {
	max   int
	mu    sync.Mutex
	open  map[string]int      // remote IP → admitted connections
	conns map[net.Conn]string // admitted connection → its remote IP
}

// refusedKey marks, in a connection's context, a connection over the
// limit: the remote IP and how many it already holds.
type refusedKey struct{}

type refusal struct {
	ip   string
	max  int
	open int
}

// admit is the server's ConnContext: it runs for each accepted connection
// before any of it is read.
func (cl *connLimiter) admit(ctx context.Context, c net.Conn) context.Context {
	if cl.max <= 0 {
		return ctx
	}
	ip := remoteIP(c.RemoteAddr())
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if n := cl.open[ip]; n >= cl.max {
		return context.WithValue(ctx, refusedKey{}, refusal{ip: ip, max: cl.max, open: n})
	}
	cl.open[ip]++
	cl.conns[c] = ip
	return ctx
}

// state is the server's ConnState: a closed or hijacked connection no
// longer counts.
func (cl *connLimiter) state(c net.Conn, st http.ConnState) {
	if cl.max <= 0 || (st != http.StateClosed && st != http.StateHijacked) {
		return
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	ip, ok := cl.conns[c]
	if !ok {
		return
	}
	delete(cl.conns, c)
	if cl.open[ip]--; cl.open[ip] <= 0 {
		delete(cl.open, ip)
	}
}

func remoteIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// limitHandler applies the per-request limits: refusal of connections over
// the per-client limit, the body read deadline, per-write deadlines and
// event-stream pings.
type limitHandler struct {
	next http.Handler
	lim  Limits
	log  *slog.Logger
}

func (h *limitHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rf, ok := r.Context().Value(refusedKey{}).(refusal); ok {
		h.log.WarnContext(r.Context(), "connection refused", "remote", rf.ip, "open", rf.open, "max", rf.max)
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": fmt.Sprintf(
			"too many connections from %s: %d are open, at most %d per client address (skillgate serve --max-client-conns); close idle connections or reuse them",
			rf.ip, rf.open, rf.max)})
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	lw := &limitWriter{w: w, rc: http.NewResponseController(w), lim: h.lim, cancel: cancel}
	if h.lim.BodyTimeout > 0 && r.Body != nil && r.Body != http.NoBody {
		_ = lw.rc.SetReadDeadline(time.Now().Add(h.lim.BodyTimeout))
		r.Body = &deadlineBody{ReadCloser: r.Body, lw: lw}
	}
	h.next.ServeHTTP(lw, r.WithContext(ctx))
	lw.finish()
	if lw.bodyCut {
		h.log.WarnContext(r.Context(), "request body stalled; connection closed", "method", r.Method, "path", r.URL.Path,
			"remote", r.RemoteAddr, "body_timeout", h.lim.BodyTimeout)
	}
}

// deadlineBody clears the read deadline once the body is read to its end
// (a long call or stream must not be cancelled by it), and tells lw when
// the deadline cut the body.
type deadlineBody struct {
	io.ReadCloser
	lw   *limitWriter
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			b.lw.cutBody()
		} else {
			_ = b.lw.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}

// limitWriter is the response writer under limits: each write and flush
// gets a fresh write deadline, writes are serialised with the pings of an
// event stream, and a write that fails cancels the request (the client is
// gone or stopped reading). It keeps [http.ResponseController] working
// through Unwrap and FlushError.
type limitWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	lim    Limits
	cancel context.CancelFunc

	mu          sync.Mutex
	wroteHeader bool
	bodyCut     bool // the body read deadline passed: answer 408
	failed      bool // a write failed: drop the rest
	stopPing    chan struct{}
	pingDone    chan struct{}
}

// Unwrap lets [http.ResponseController] reach the connection's writer.
func (lw *limitWriter) Unwrap() http.ResponseWriter { return lw.w }

// Header implements [http.ResponseWriter].
func (lw *limitWriter) Header() http.Header { return lw.w.Header() }

// WriteHeader implements [http.ResponseWriter]. An event stream starts
// its pings here.
func (lw *limitWriter) WriteHeader(code int) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.writeHeaderLocked(code)
}

func (lw *limitWriter) writeHeaderLocked(code int) {
	if lw.wroteHeader {
		return
	}
	lw.wroteHeader = true
	if lw.bodyCut {
		lw.w.Header().Del("Content-Type")
		lw.w.Header().Del("Content-Length")
		lw.w.Header().Set("Connection", "close")
		lw.deadline()
		writeJSON(lw.w, http.StatusRequestTimeout, map[string]string{"error": fmt.Sprintf(
			"request body not received within %s (skillgate serve --body-timeout); send the whole body at once", lw.lim.BodyTimeout)})
		return
	}
	lw.deadline()
	lw.w.WriteHeader(code)
	if code == http.StatusOK && lw.lim.StreamPing > 0 && strings.HasPrefix(lw.w.Header().Get("Content-Type"), "text/event-stream") {
		lw.stopPing, lw.pingDone = make(chan struct{}), make(chan struct{})
		go lw.ping()
	}
}

// Write implements [http.ResponseWriter].
func (lw *limitWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.writeHeaderLocked(http.StatusOK)
	if lw.bodyCut {
		return len(p), nil // the 408 is written; the handler's answer is dropped
	}
	if lw.failed {
		return 0, errWriteFailed
	}
	lw.deadline()
	n, err := lw.w.Write(p)
	lw.fail(err)
	return n, err
}

var errWriteFailed = errors.New("server: an earlier write of this response failed")

// FlushError flushes the response under a fresh write deadline.
func (lw *limitWriter) FlushError() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.writeHeaderLocked(http.StatusOK)
	if lw.bodyCut {
		return nil
	}
	if lw.failed {
		return errWriteFailed
	}
	lw.deadline()
	err := lw.rc.Flush()
	lw.fail(err)
	return err
}

// Flush implements [http.Flusher].
func (lw *limitWriter) Flush() { _ = lw.FlushError() }

func (lw *limitWriter) deadline() {
	if lw.lim.WriteTimeout > 0 {
		_ = lw.rc.SetWriteDeadline(time.Now().Add(lw.lim.WriteTimeout))
	}
}

// fail records a failed write and cancels the request: its client is gone
// or stopped reading, and a handler waiting on an event stream returns.
func (lw *limitWriter) fail(err error) {
	if err != nil && !lw.failed {
		lw.failed = true
		lw.cancel()
	}
}

func (lw *limitWriter) cutBody() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if !lw.wroteHeader {
		lw.bodyCut = true
	}
}

// ping writes an SSE comment every StreamPing until finish.
func (lw *limitWriter) ping() {
	defer close(lw.pingDone)
	t := time.NewTicker(lw.lim.StreamPing)
	defer t.Stop()
	for {
		select {
		case <-lw.stopPing:
			return
		case <-t.C:
			lw.mu.Lock()
			if !lw.failed {
				lw.deadline()
				_, err := io.WriteString(lw.w, ": ping\n\n")
				if err == nil {
					err = lw.rc.Flush()
				}
				lw.fail(err)
			}
			lw.mu.Unlock()
		}
	}
}

// finish runs when the handler returns: the pings stop before the
// response is finished, and the server's final flush gets a fresh write
// deadline.
func (lw *limitWriter) finish() {
	lw.mu.Lock()
	if !lw.wroteHeader && lw.bodyCut {
		lw.writeHeaderLocked(http.StatusOK)
	}
	stop, done := lw.stopPing, lw.pingDone
	lw.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	lw.deadline()
}
