package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

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
// for idle (0 means DefaultStatelessIdle). A request that names no session
// gets a new one (its id is conn.Session().ID(), for the client to send
// next time) and a connection of its own, closed on release: the session
// is stored, and can be resumed, once it holds something.
//
// A session of another principal is refused with
// session.ErrSessionUnavailable, whether its connection is open or not;
// other errors are those of [Gateway.Connect].
func (g *Gateway) ConnectStateless(ctx context.Context, p capability.Principal, sessionID string, idle time.Duration) (*Conn, func(), error) {
	if idle <= 0 {
		idle = DefaultStatelessIdle
	}
	opts := &ConnectOptions{Stateless: true}
	if sessionID == "" {
		c, err := g.Connect(ctx, p, "", opts)
		if err != nil {
			return nil, nil, err
		}
		return c, func() { c.Close() }, nil
	}
	if c, release, err := g.stateless.use(p, sessionID, idle); c != nil || err != nil {
		return c, release, err
	}
	c, err := g.Connect(ctx, p, sessionID, opts)
	if err != nil {
		return nil, nil, err
	}
	return g.stateless.add(c, p, idle)
}

// use returns the open connection of session id, counted in use, or nil.
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

// add records c, just opened for its session, in use; when another request
// opened the session's connection meanwhile, c is closed and that one is
// used.
func (s *statelessConns) add(c *Conn, p capability.Principal, idle time.Duration) (*Conn, func(), error) {
	id := c.sess.ID()
	s.mu.Lock()
	if e := s.m[id]; e != nil && !e.c.isClosed() {
		s.mu.Unlock()
		c.Close()
		conn, release, err := s.use(p, id, idle)
		if conn == nil && err == nil {
			err = fmt.Errorf("%w: the connection of session %s closed while it was opened again", session.ErrClosed, id)
		}
		return conn, release, err
	}
	if s.m == nil {
		s.m = map[string]*statelessEntry{}
	}
	e := &statelessEntry{c: c}
	s.m[id] = e
	s.acquireLocked(e)
	s.mu.Unlock()
	return c, s.releaser(id, e, idle), nil
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
