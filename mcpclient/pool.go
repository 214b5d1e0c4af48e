package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/skillgate/skillgate/capability"
)

// ErrUnavailable means the server could not be (re)started recently; calls
// fail fast until PoolOptions.RetryAfter has passed since the last attempt.
var ErrUnavailable = errors.New("upstream server unavailable")

// ErrNotSent marks an error of [Pool.Call] after which
// the call certainly never reached the server: the connection could not be
// made (a missing credential, a server that does not start, one in its
// retry pause), the connection refused the call before sending it (pin
// drift, a failed re-check), or it closed before the call was written.
// Other errors (a timeout, a server error) may come after the server ran
// the call. It is matched with [errors.Is] alongside the error's own kind;
// the message is the underlying error's.
var ErrNotSent = errors.New("call not sent to the server")

// notSent wraps an error after which the call never reached the server.
type notSent struct{ err error }

func (e notSent) Error() string   { return e.err.Error() }
func (e notSent) Unwrap() []error { return []error{e.err, ErrNotSent} }

// markNotSent marks err with ErrNotSent when it comes from a connection
// that refused the call before sending it (or from dialling, when dial is
// set); other errors, and nil, are returned as they are.
func markNotSent(err error, dial bool) error {
	if err == nil || errors.Is(err, ErrNotSent) {
		return err
	}
	if dial || errors.Is(err, ErrToolBlocked) || errors.Is(err, ErrRecheckFailed) || errors.Is(err, ErrClosed) {
		return notSent{err}
	}
	return err
}

// Target is one server of one installed skill version.
type Target struct {
	// Skill is the skill's key and Digest its version.
	Skill, Digest string
	// Server is the declaration from the skill's mcp.json.
	Server ServerDecl
	// Pins are the approved pins of this server's tools.
	Pins capability.PinSet
	// LeftOut names the tools the server offered at approval that were
	// left out of it; they are not drift (see [ConnOptions]).
	LeftOut []string
	// Dir is the working directory of a stdio server (the skill's
	// directory in managed storage).
	Dir string
	// Unpinned says no operator pinned the server's tools (a first_party
	// skill, shipped at skillgate's standard): each connection pins the
	// tools it lists at connect (ConnOptions.Pins nil), so a change while
	// it is open is still refused. Pins is then ignored.
	Unpinned bool
}

// ID names the target: "skill@digest/server".
func (t Target) ID() string { return t.Skill + "@" + t.Digest + "/" + t.Server.ID }

// PoolOptions configures a [Pool].
type PoolOptions struct {
	// Credentials expands ${NAME} references in server declarations.
	Credentials CredentialLookup
	// Limits bounds every connection; zero fields take the defaults.
	Limits Limits
	// OnDrift is called when a connection finds that pinned tools changed
	// (at connect or on tools/list_changed). It must not call back into the
	// pool synchronously.
	OnDrift func(Target, capability.Drift)
	// RetryAfter is how long calls fail fast with ErrUnavailable after a
	// failed dial, so a crashing server is not restarted on every call.
	// Default 2s.
	RetryAfter time.Duration
	// Logger receives dial, restart and drift events; nil discards them.
	Logger *slog.Logger
	// ClientVersion is sent as clientInfo.version.
	ClientVersion string
}

// A Pool keeps skillgate's long-lived connections to the MCP servers that
// installed skills declare: one [Conn] per (skill version, server), dialled
// on first use with the approved pins, restarted when it dies, and closed
// when the skill version leaves the registry. Being Conns, they verify pins
// at each (re)connect and on every tools/list_changed: a changed tool is
// refused here, whatever the policy says, and the drift is reported through
// [PoolOptions.OnDrift] so that the registry can block the capability until
// a human re-approves it. It is safe for concurrent use.
type Pool struct {
	opts PoolOptions
	log  *slog.Logger

	mu     sync.Mutex
	conns  map[string]*entry
	closed bool
}

// entry is one target's connection slot. dialing is non-nil while a dial is
// in flight; concurrent callers wait on it instead of dialling again.
type entry struct {
	target   Target
	conn     *Conn
	dialing  chan struct{}
	lastErr  error
	failedAt time.Time
	dials    int
}

// NewPool returns an empty pool.
func NewPool(opts PoolOptions) *Pool {
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = 2 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Pool{opts: opts, log: log, conns: map[string]*entry{}}
}

// Call calls tool on t's server through its pooled connection, dialling or
// restarting it as needed: [Conn.CallToolRaw] through the pool. args are
// the call's arguments, a JSON object, read only before Call returns; done
// receives the result object exactly as the server sent it (see
// [ResultFunc]) or the error. When t's connection is up Call does not
// wait; dialling or restarting a server happens on another goroutine. A
// connection that died is replaced once per call: a call is retried on a
// fresh connection only when it never reached the server (ErrClosed), so a
// tool call is never executed twice. An error after which the call never
// reached the server also matches [ErrNotSent].
func (p *Pool) Call(ctx context.Context, t Target, tool string, args json.RawMessage, done ResultFunc) {
	conn := p.live(t.ID())
	if conn == nil {
		args = bytes.Clone(args)
		go p.callDialling(ctx, t, tool, args, nil, done)
		return
	}
	conn.CallToolRaw(ctx, tool, args, func(res json.RawMessage, err error) {
		if err != nil && errors.Is(err, ErrClosed) { // refused before sending: retry
			go p.callDialling(ctx, t, tool, bytes.Clone(args), conn, done)
			return
		}
		done(res, markNotSent(err, false))
	})
}

// callDialling gets a connection for t, replacing dead when it is still
// t's, and makes the call on it.
func (p *Pool) callDialling(ctx context.Context, t Target, tool string, args json.RawMessage, dead *Conn, done ResultFunc) {
	if dead != nil {
		p.drop(t.ID(), dead)
	}
	conn, err := p.Conn(ctx, t)
	if err != nil {
		done(nil, markNotSent(err, true))
		return
	}
	conn.CallToolRaw(ctx, tool, args, func(res json.RawMessage, err error) { done(res, markNotSent(err, false)) })
}

// live returns the connection of target id when it is up, without dialling.
func (p *Pool) live(id string) *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.conns[id]
	if e == nil || e.conn == nil || p.closed {
		return nil
	}
	select {
	case <-e.conn.Done():
		return nil
	default:
		return e.conn
	}
}

// Conn returns a live connection to t's server, dialling one if there is
// none or the previous one died.
func (p *Pool) Conn(ctx context.Context, t Target) (*Conn, error) {
	id := t.ID()
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, fmt.Errorf("upstream %s: %w", id, ErrClosed)
		}
		e := p.conns[id]
		if e == nil {
			e = &entry{target: t}
			p.conns[id] = e
		}
		if e.conn != nil {
			select {
			case <-e.conn.Done():
				// The server died; replace it below.
				p.log.Warn("upstream: connection lost, restarting", "target", id)
				old := e.conn
				e.conn = nil
				go old.Close()
			default:
				c := e.conn
				p.mu.Unlock()
				return c, nil
			}
		}
		if wait := e.dialing; wait != nil {
			p.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("upstream %s: waiting for the server to start: %w", id, ctx.Err())
			}
		}
		if e.lastErr != nil && time.Since(e.failedAt) < p.opts.RetryAfter {
			err := e.lastErr
			p.mu.Unlock()
			return nil, fmt.Errorf("upstream %s: %w (retrying in %s): %w", id, ErrUnavailable, p.opts.RetryAfter.Round(time.Millisecond), err)
		}
		e.dialing = make(chan struct{})
		e.dials++
		p.mu.Unlock()

		conn, err := p.dial(ctx, t)

		p.mu.Lock()
		close(e.dialing)
		e.dialing = nil
		if err != nil {
			e.lastErr, e.failedAt = err, time.Now()
			p.mu.Unlock()
			p.log.Warn("upstream: dial failed", "target", id, "err", err)
			return nil, err
		}
		e.lastErr = nil
		if p.closed {
			p.mu.Unlock()
			conn.Close()
			return nil, fmt.Errorf("upstream %s: %w", id, ErrClosed)
		}
		e.conn = conn
		p.mu.Unlock()
		return conn, nil
	}
}

func (p *Pool) dial(ctx context.Context, t Target) (*Conn, error) {
	pins := t.Pins
	opts := &ConnOptions{
		Options: Options{
			Logger: p.log, Credentials: p.opts.Credentials, Limits: p.opts.Limits, Dir: t.Dir,
			ClientName: "skillgate", ClientVersion: p.opts.ClientVersion,
		},
		Pins:    &pins,
		LeftOut: t.LeftOut,
	}
	if t.Unpinned {
		opts.Pins, opts.LeftOut = nil, nil
	}
	if p.opts.OnDrift != nil {
		opts.OnDrift = func(d capability.Drift) { p.opts.OnDrift(t, d) }
	}
	// The connection outlives this call: dial with a context that only
	// bounds the dial itself (mcpclient applies its own timeouts).
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return Dial(dctx, t.Server, opts)
}

// drop forgets conn if it is still t's connection.
func (p *Pool) drop(id string, conn *Conn) {
	p.mu.Lock()
	if e := p.conns[id]; e != nil && e.conn == conn {
		e.conn = nil
	}
	p.mu.Unlock()
	conn.Close()
}

// Retain closes the connections of every target whose ID is not in keep:
// skill versions that were disabled, removed or replaced.
func (p *Pool) Retain(keep map[string]bool) {
	p.mu.Lock()
	var closing []*Conn
	for id, e := range p.conns {
		if keep[id] || e.dialing != nil {
			continue
		}
		if e.conn != nil {
			closing = append(closing, e.conn)
		}
		delete(p.conns, id)
	}
	p.mu.Unlock()
	for _, c := range closing {
		c.Close()
	}
}

// PoolStat describes one pooled target.
type PoolStat struct {
	Target string `json:"target"`
	Alive  bool   `json:"alive"`
	// Dials counts connection attempts: 1 plus restarts.
	Dials   int    `json:"dials"`
	LastErr string `json:"lastError,omitempty"`
}

// Stats lists the pooled targets, sorted by ID.
func (p *Pool) Stats() []PoolStat {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]PoolStat, 0, len(p.conns))
	for id, e := range p.conns {
		s := PoolStat{Target: id, Dials: e.dials}
		if e.conn != nil {
			select {
			case <-e.conn.Done():
			default:
				s.Alive = true
			}
		}
		if e.lastErr != nil {
			s.LastErr = e.lastErr.Error()
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Target < out[j].Target })
	return out
}

// Close closes every connection; later calls fail with ErrClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	var conns []*Conn
	for _, e := range p.conns {
		if e.conn != nil {
			conns = append(conns, e.conn)
		}
	}
	p.conns = map[string]*entry{}
	p.mu.Unlock()
	var errs []error
	for _, c := range conns {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
