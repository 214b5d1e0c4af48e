package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// DefaultStatelessIdle is how long a connection serving a modern client's
// session stays open after its last request (see [Gateway.ConnectStateless]).
const DefaultStatelessIdle = 30 * time.Minute

// statelessConns holds the connections that serve modern clients'
// requests, by skillgate session id: a modern client (2026-07-28) has no
// MCP session, so every request names skillgate's session itself (over
// HTTP, the Skillgate-Session header), and the connection that serves it
// is kept between requests (its MCP server, the session's loaded skills
// and capability tools) until it has been idle a while.
type statelessConns struct {
	mu sync.Mutex
	m  map[string]*statelessEntry
	// reserved holds the sessions of the sessionless connections.
	reserved map[string]bool
}

// sessionless reports whether id is the session of a principal's
// sessionless connection, which no request may name (it must stay empty).
func (s *statelessConns) sessionless(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserved[id]
}

type statelessEntry struct {
	c     *Conn
	users int         // requests being served
	timer *time.Timer // closes the connection once idle; nil while in use
}

// ConnectStateless returns the connection that serves one request of a
// modern client (protocol 2026-07-28: no handshake, no MCP session) for
// principal p in the skillgate session sessionID, and release, to call
// when the request is done. Requests naming the same session share one
// connection, opened by the first and closed once no request has used it
// for idle (0 means DefaultStatelessIdle). Requests that name no session
// share one connection per principal, whose session stays empty: on it,
// the tools that load skills or write /workspace answer with
// [SessionlessError] instead (an agent whose every request started a
// session afresh would lose what it loaded at its next request).
//
// A session of another principal is refused with
// session.ErrSessionUnavailable, whether its connection is open or not;
// other errors are those of [Gateway.Connect].
func (g *Gateway) ConnectStateless(ctx context.Context, p capability.Principal, sessionID string, idle time.Duration) (*Conn, func(), error) {
	if idle <= 0 {
		idle = DefaultStatelessIdle
	}
	key, id := sessionID, sessionID
	if sessionID == "" {
		// No session named: the principal's sessionless connection,
		// whose session never changes (see sessionlessGuard), so that
		// every such request of the principal can share it.
		key = sessionlessKey + p.String()
	}
	if c, release, err := g.stateless.use(p, key, idle); c != nil || err != nil {
		return c, release, err
	}
	c, err := g.Connect(ctx, p, id, &ConnectOptions{Stateless: true, sessionless: sessionID == ""})
	if err != nil {
		return nil, nil, err
	}
	if sessionID == "" {
		c.server.AddReceivingMiddleware(sessionlessGuard)
	}
	return g.stateless.add(key, c, p, idle)
}

// sessionlessKey prefixes the key of a principal's sessionless connection
// in statelessConns; no session id starts with it.
const sessionlessKey = "\x00"

// sessionTools are the tools that change a session: loading and unloading
// skills, writing /workspace.
var sessionTools = []string{ToolLoadSkill, ToolUnloadSkill, ToolWriteFile, ToolEditFile}

// SessionlessError is the text of the tool error a modern request that
// names no session gets from a tool that changes a session.
const SessionlessError = "Error: this request names no skillgate session, and loading skills or writing /workspace needs one: " +
	"send the Skillgate-Session header with a session id of your choice (1-64 letters, digits, '.', '_' or '-') on every request, " +
	"and the skills you load and the files you write stay in that session."

// sessionlessGuard refuses the session-changing tools (with a tool error
// that says what to do) on a sessionless connection, whose session the
// principal's requests share and which must therefore stay empty.
func sessionlessGuard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil && slices.Contains(sessionTools, r.Params.Name) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: SessionlessError}}}, nil
		}
		return next(ctx, method, req)
	}
}

// use returns the open connection under key, counted in use, or nil.
func (s *statelessConns) use(p capability.Principal, id string, idle time.Duration) (*Conn, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[id]
	if e == nil || e.c.isClosed() {
		return nil, nil, nil
	}
	if e.c.sess.Principal() != p {
		return nil, nil, fmt.Errorf("%w: %s belongs to another principal; start a new session", session.ErrSessionUnavailable, id)
	}
	s.acquireLocked(e)
	return e.c, s.releaser(id, e, idle), nil
}

// add records c, just opened, under key (its session id, or its
// principal's sessionless key), in use; when another request
// opened the session's connection meanwhile, c is closed and that one is
// used.
func (s *statelessConns) add(key string, c *Conn, p capability.Principal, idle time.Duration) (*Conn, func(), error) {
	s.mu.Lock()
	if e := s.m[key]; e != nil && !e.c.isClosed() {
		s.mu.Unlock()
		c.Close()
		conn, release, err := s.use(p, key, idle)
		if conn == nil && err == nil {
			err = fmt.Errorf("%w: the connection of session %s closed while it was opened again", session.ErrClosed, key)
		}
		return conn, release, err
	}
	if s.m == nil {
		s.m = map[string]*statelessEntry{}
	}
	e := &statelessEntry{c: c}
	s.m[key] = e
	if strings.HasPrefix(key, sessionlessKey) {
		if s.reserved == nil {
			s.reserved = map[string]bool{}
		}
		s.reserved[c.sess.ID()] = true
	}
	s.acquireLocked(e)
	s.mu.Unlock()
	return c, s.releaser(key, e, idle), nil
}

func (s *statelessConns) acquireLocked(e *statelessEntry) {
	e.users++
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
}

// releaser returns the release of one use of e: the last one arms the
// idle timer, which closes the connection unless a request came meanwhile.
func (s *statelessConns) releaser(id string, e *statelessEntry, idle time.Duration) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			e.users--
			if e.users > 0 {
				return
			}
			e.timer = time.AfterFunc(idle, func() {
				s.mu.Lock()
				if e.users > 0 || s.m[id] != e {
					s.mu.Unlock()
					return
				}
				delete(s.m, id)
				delete(s.reserved, e.c.sess.ID())
				s.mu.Unlock()
				e.c.Close()
			})
		})
	}
}

// StatelessConnections returns how many connections serve modern clients'
// sessions now (open or idle, see [Gateway.ConnectStateless]).
func (g *Gateway) StatelessConnections() int {
	g.stateless.mu.Lock()
	defer g.stateless.mu.Unlock()
	return len(g.stateless.m)
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
