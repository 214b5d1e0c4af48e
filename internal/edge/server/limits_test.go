package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// wait bounds every wait of these tests on a busy machine; the limits
// under test are far shorter, so a test that reaches it has failed.
const wait = 20 * time.Second

// serveLimited serves h within lim on a loopback listener and returns its
// address.
func serveLimited(t *testing.T, h http.Handler, lim server.Limits) string {
	t.Helper()
	hs, err := server.NewHTTPServer(h, &lim, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// newLimitedFixture is newFixture behind [server.NewHTTPServer].
func newLimitedFixture(t *testing.T, lim server.Limits) (*fixture, string) {
	t.Helper()
	env := mcpservertest.NewEnv(t, examples, nil, nil)
	path := filepath.Join(t.TempDir(), server.TokensFile)
	tokens, err := server.OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Gateway: env.Gateway, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveLimited(t, srv, lim)
	return &fixture{env: env, url: "http://" + addr, tokens: path}, addr
}

// rawConn is one client connection speaking HTTP/1.1 by hand.
type rawConn struct {
	net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(wait))
	return &rawConn{Conn: c, br: bufio.NewReader(c)}
}

// get sends GET path and reads the whole response.
func (c *rawConn) get(t *testing.T, path string) (int, string) {
	t.Helper()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	return c.response(t)
}

func (c *rawConn) response(t *testing.T) (int, string) {
	t.Helper()
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// closed reports whether the server closed the connection (rather than
// the wait running out).
func (c *rawConn) closed(t *testing.T) bool {
	t.Helper()
	_, err := c.br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

// TestLimitsIdleConnection: a keep-alive connection that goes silent after
// a request is closed by the server.
func TestLimitsIdleConnection(t *testing.T) {
	lim := server.DefaultLimits()
	lim.IdleTimeout = 100 * time.Millisecond
	_, addr := newLimitedFixture(t, lim)
	c := dial(t, addr)
	if code, body := c.get(t, "/v1/health"); code != http.StatusOK {
		t.Fatalf("health: %d %s", code, body)
	}
	if !c.closed(t) {
		t.Fatalf("an idle keep-alive connection is still open after %s", wait)
	}
}

// TestLimitsStalledBody: an authenticated request whose body stops
// arriving gets 408 and its connection is closed.
func TestLimitsStalledBody(t *testing.T) {
	lim := server.DefaultLimits()
	lim.BodyTimeout = 100 * time.Millisecond
	f, addr := newLimitedFixture(t, lim)
	secret := f.token(t, "drafter", skill.T3)
	c := dial(t, addr)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",", secret)
	code, body := c.response(t)
	const want = `{"error":"request body not received within 100ms (skillgate serve --body-timeout); send the whole body at once"}` + "\n"
	if code != http.StatusRequestTimeout || body != want {
		t.Fatalf("stalled body: %d %q, want 408 %q", code, body, want)
	}
	if !c.closed(t) {
		t.Fatal("the connection of a stalled body stays open")
	}
}

// TestLimitsBodyDeadlineEndsWithBody: once a body is read, its deadline no
// longer applies: a handler that works longer than it is not cancelled.
func TestLimitsBodyDeadlineEndsWithBody(t *testing.T) {
	lim := server.DefaultLimits()
	lim.BodyTimeout = 50 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "cancelled", http.StatusInternalServerError)
		case <-time.After(4 * lim.BodyTimeout):
			fmt.Fprintf(w, "read %d bytes", len(b))
		}
	})
	c := dial(t, serveLimited(t, h, lim))
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello")
	if code, body := c.response(t); code != http.StatusOK || body != "read 5 bytes" {
		t.Fatalf("got %d %q, want 200 \"read 5 bytes\"", code, body)
	}
}

// TestLimitsConnectionsPerClient: a client address holds at most
// MaxClientConns connections; the next is refused with 429 and closed,
// and a slot frees when a connection closes.
func TestLimitsConnectionsPerClient(t *testing.T) {
	lim := server.DefaultLimits()
	lim.MaxClientConns = 2
	_, addr := newLimitedFixture(t, lim)
	var open []*rawConn
	for range 2 {
		c := dial(t, addr)
		if code, body := c.get(t, "/v1/health"); code != http.StatusOK {
			t.Fatalf("connection %d: %d %s", len(open)+1, code, body)
		}
		open = append(open, c)
	}
	extra := dial(t, addr)
	code, body := extra.get(t, "/v1/health")
	const want = `{"error":"too many connections from 127.0.0.1: 2 are open, at most 2 per client address (skillgate serve --max-client-conns); close idle connections or reuse them"}` + "\n"
	if code != http.StatusTooManyRequests || body != want {
		t.Fatalf("third connection: %d %q, want 429 %q", code, body, want)
	}
	if !extra.closed(t) {
		t.Fatal("a refused connection stays open")
	}
	// The admitted connections still work.
	if code, body := open[1].get(t, "/v1/health"); code != http.StatusOK {
		t.Fatalf("admitted connection after a refusal: %d %s", code, body)
	}
	// Closing one frees its slot (the server notices the close soon after).
	open[0].Close()
	deadline := time.Now().Add(wait)
	for {
		c := dial(t, addr)
		code, body := c.get(t, "/v1/health")
		c.Close()
		if code == http.StatusOK {
			break
		}
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after a close: %d %s", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLimitsEventStreamPings: the MCP standalone event stream outlives the
// idle, body and write timeouts, with an SSE comment every StreamPing; and
// an MCP client works through the pings.
func TestLimitsEventStreamPings(t *testing.T) {
	// The timeouts are short enough to idle past, yet long enough that a
	// request's own write or body read is not cut by a loaded machine's
	// scheduling (50 ms was, once in CI); the pings are more frequent.
	lim := server.Limits{
		HeaderTimeout: time.Second, IdleTimeout: 250 * time.Millisecond, BodyTimeout: 250 * time.Millisecond,
		WriteTimeout: 250 * time.Millisecond, StreamPing: 30 * time.Millisecond, MaxClientConns: 8,
	}
	f, addr := newLimitedFixture(t, lim)
	secret := f.token(t, "drafter", skill.T3)

	post := func(c *rawConn, session, msg string) (*http.Response, string) {
		t.Helper()
		sid := ""
		if session != "" {
			sid = "Mcp-Session-Id: " + session + "\r\nMcp-Protocol-Version: 2025-11-25\r\n"
		}
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", secret, sid, len(msg), msg)
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	c := dial(t, addr)
	resp, body := post(c, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" || !strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("initialize: %d %q (session %q)", resp.StatusCode, body, sid)
	}
	if resp, body := post(c, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d %q", resp.StatusCode, body)
	}

	s := dial(t, addr)
	fmt.Fprintf(s, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\nAccept: text/event-stream\r\n\r\n", secret, sid)
	sresp, err := http.ReadResponse(s.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ct := sresp.Header.Get("Content-Type"); sresp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("GET /mcp: %d %s", sresp.StatusCode, ct)
	}
	lines := bufio.NewScanner(sresp.Body)
	pings, want := 0, int(lim.WriteTimeout/lim.StreamPing)+5 // past every timeout
	for pings < want && lines.Scan() {
		if lines.Text() == ": ping" {
			pings++
		}
	}
	if pings < want {
		t.Fatalf("the event stream ended after %d pings: %v", pings, lines.Err())
	}

	// A real client: its standalone stream and calls carry pings; the
	// session works after idling past every timeout.
	cl, err := f.connect(t, secret, "")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(lim.WriteTimeout + 5*lim.StreamPing) // past every timeout
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := cl.cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("list tools after idling: %v", err)
	}
}

// TestLimitsWriteTimeout: a client that stops reading is dropped when one
// write takes longer than WriteTimeout, and the request is cancelled.
func TestLimitsWriteTimeout(t *testing.T) {
	lim := server.DefaultLimits()
	lim.WriteTimeout = 100 * time.Millisecond
	result := make(chan string, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		for i := range 1024 {
			if _, err := w.Write(chunk); err != nil {
				result <- fmt.Sprintf("write failed after %d MiB; request cancelled: %v", i, r.Context().Err() != nil)
				return
			}
		}
		result <- "wrote 1 GiB to a client that does not read"
	})
	c := dial(t, serveLimited(t, h, lim))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	select {
	case got := <-result:
		if !strings.HasPrefix(got, "write failed") || !strings.HasSuffix(got, "request cancelled: true") {
			t.Fatal(got)
		}
	case <-time.After(wait):
		t.Fatal("a write to a client that does not read is still blocked")
	}
}

// TestLimitsValidate: negative limits are refused, naming the field.
func TestLimitsValidate(t *testing.T) {
	for _, tc := range []struct {
		lim  server.Limits
		want string
	}{
		{server.DefaultLimits(), ""},
		{server.Limits{}, ""},
		{server.Limits{IdleTimeout: -time.Second}, "server: idle timeout -1s is negative; use 0 to turn it off"},
		{server.Limits{StreamPing: -time.Millisecond}, "server: stream ping -1ms is negative; use 0 to turn it off"},
		{server.Limits{MaxClientConns: -1}, "server: connections per client -1 is negative; use 0 for no limit"},
	} {
		got := ""
		if err := tc.lim.Validate(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.lim, got, tc.want)
		}
		if _, err := server.NewHTTPServer(http.NotFoundHandler(), &tc.lim, nil); (err == nil) != (tc.want == "") {
			t.Errorf("%+v: NewHTTPServer error %v", tc.lim, err)
		}
	}
}
