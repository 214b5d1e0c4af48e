package mcpclient

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
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
	if dial || errors.Is(err, ErrToolBlocked) || errors.Is(err, ErrRecheckFailed) || errors.Is(err, ErrClosed) || errors.Is(err, ErrUnauthorized) {
		return notSent{err}
	}
	return err
}

// Target is one server of one installed skill version.
type Target struct {
	// Skill is the skill's key and Digest its version.
	Skill, Digest string
	// Content is the digest Dir must hash to, when it differs from
	// Digest (a version whose servers launch fetched packages).
	Content string
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
	// Trust is the trust of the skill's origin (empty means imported).
	Trust capability.Trust
	// Network says an approved capability of this server declares
	// dataEgress network: a confined server gets the network only then.
	Network bool
}

// ID names the target: "skill@digest/server".
func (t Target) ID() string { return t.Skill + "@" + t.Digest + "/" + t.Server.ID }

// CredentialSource resolves credentials per principal, so that each
// principal's calls reach a server started with its own credentials;
// *credential.Store implements it. Resolve must not do I/O: the pool asks
// it when a principal first calls a target after a change.
type CredentialSource interface {
	// Resolve returns the value of the credential name for p.
	Resolve(p capability.Principal, name string) (string, bool)
	// Generation changes whenever Resolve may answer differently; it is
	// read on every call, so it must be cheap (an atomic load).
	Generation() uint64
}

// PoolOptions configures a [Pool].
type PoolOptions struct {
	// Credentials resolves credentials per principal. A server whose
	// declaration references credentials gets one connection per distinct
	// set of resolved values: two principals share a server process only
	// when every credential it references resolves to the same value for
	// both. Nil means Credentials below, the same for every principal.
	CredentialSource CredentialSource
	// Credentials expands ${NAME} references in server declarations for
	// every principal alike; it is used when CredentialSource is nil.
	Credentials CredentialLookup
	// Limits bounds every connection; zero fields take the defaults.
	Limits Limits
	// Unauthorized, when set, refreshes a principal's connection after a
	// remote server refused a call with 401; the call is then made once
	// more with the new token. Nil: the call fails with ErrUnauthorized.
	Unauthorized Unauthorized
	// OnDrift is called when a connection finds that pinned tools changed
	// (at connect or on tools/list_changed). It must not call back into the
	// pool synchronously.
	OnDrift func(Target, capability.Drift)
	// BeforeStart, when set, is called before a server is started (or a
	// remote one dialled) for a target; an error refuses the start, and
	// the calls waiting for it fail without reaching any server.
	BeforeStart func(ctx context.Context, t Target) error
	// Confine, when set, says how a target's stdio server is confined
	// when it starts: nil runs it unconfined, an error refuses the start
	// (and fails the calls waiting for it, which never reach any server).
	// Nil Confine runs every server unconfined.
	Confine func(t Target) (Confiner, error)
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
	opts  PoolOptions
	log   *slog.Logger
	creds CredentialSource
	// mac keys the fingerprints of credential sets; it is random per pool,
	// so that a fingerprint says nothing about a value outside it.
	mac []byte

	mu     sync.Mutex
	conns  map[string]*entry // by route key: target id, plus the credential set's fingerprint
	closed bool
	// routes caches each principal's route to each target; it is
	// emptied when the credential source's generation moves.
	routes   map[routeKey]route
	routeGen uint64
}

// maxRoutes bounds the route cache; it is emptied when full.
const maxRoutes = 1 << 16

// routeKey is one principal calling one target.
type routeKey struct{ tenant, agent, target, account string }

// route is where a principal's calls to a target go: the connection key
// and the credential values it is dialled with, or the credentials that
// are missing for the principal.
type route struct {
	key     string
	lookup  CredentialLookup // the resolved values, frozen
	missing []string
	// refused is why the route has no connection when it is not a
	// missing credential: a connection the server needs and who lacks.
	refused error
	// bearer is the connection's access token the route's calls carry.
	bearer string
}

// blocked returns why the route cannot be dialled, nil when it can.
func (r route) blocked(who capability.Principal, id string) error {
	switch {
	case r.refused != nil:
		return r.refused
	case r.missing != nil:
		return missingError(who, id, r.missing)
	}
	return nil
}

// entry is one connection slot: a target with one set of credentials.
// dialing is non-nil while a dial is in flight; concurrent callers wait on
// it instead of dialling again.
type entry struct {
	target   Target
	lookup   CredentialLookup
	conn     *Conn
	dialing  chan struct{}
	lastErr  error
	failedAt time.Time
	dials    int
	// users are the principals whose route led here, for a target that
	// references credentials; when none of them leads here any more after
	// a credential change, the connection is closed.
	users map[routeKey]struct{}
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
	creds := opts.CredentialSource
	if creds == nil {
		creds = sharedCredentials{opts.Credentials}
	}
	mac := make([]byte, 32)
	_, _ = rand.Read(mac)
	return &Pool{opts: opts, log: log, creds: creds, mac: mac, conns: map[string]*entry{}, routes: map[routeKey]route{}}
}

// sharedCredentials is one lookup for every principal.
type sharedCredentials struct{ lookup CredentialLookup }

func (s sharedCredentials) Resolve(_ capability.Principal, name string) (string, bool) {
	if s.lookup == nil {
		return "", false
	}
	return s.lookup(name)
}

func (sharedCredentials) Generation() uint64 { return 0 }

// routeLocked returns who's route to t, from the cache when the credential
// source has not changed since it was computed. p.mu is held. A change of
// the source empties the cache and closes the connections no principal
// routes to any more (a rotated or removed credential).
func (p *Pool) routeLocked(who capability.Principal, t Target, id, account string, gen uint64) route {
	if gen != p.routeGen {
		p.syncLocked(gen)
	}
	rk := routeKey{who.Tenant, who.Agent, id, account}
	if r, ok := p.routes[rk]; ok {
		return r
	}
	r := p.resolve(who, t, id, account)
	if r.missing != nil || r.refused != nil {
		// Not cached: a credential set later must be seen at once, also
		// through a lookup without a generation.
		return r
	}
	if len(p.routes) >= maxRoutes {
		clear(p.routes)
	}
	p.routes[rk] = r
	if e := p.conns[r.key]; e != nil && e.users != nil {
		e.users[rk] = struct{}{}
	}
	return r
}

// syncLocked empties the route cache and prunes connections after the
// credential source moved to generation gen. p.mu is held.
func (p *Pool) syncLocked(gen uint64) {
	p.routeGen = gen
	clear(p.routes)
	p.pruneLocked()
}

// Prune closes, at once, the connections that a credential change left
// without a principal (a rotated or removed credential); calls do the same
// lazily. A runtime calls it after reloading its credential store.
func (p *Pool) Prune() {
	gen := p.creds.Generation()
	p.mu.Lock()
	if gen != p.routeGen {
		p.syncLocked(gen)
	}
	p.mu.Unlock()
}

// resolve computes who's route to t: the credentials t's declaration
// references, resolved for who; the key is t's id when it references none,
// else t's id and an HMAC of the names and values.
func (p *Pool) resolve(who capability.Principal, t Target, id, account string) route {
	names := t.Server.Credentials()
	var bearer string
	if bs, ok := p.creds.(Bearers); ok && BearerTarget(t.Server) {
		tok, err := bs.Bearer(who, t.Server, account)
		if err != nil {
			return route{refused: err}
		}
		bearer = tok
	}
	if len(names) == 0 && bearer == "" {
		return route{key: id}
	}
	vals := make(map[string]string, len(names)+1)
	h := hmac.New(sha256.New, p.mac)
	if bearer != "" {
		vals[BearerCredential] = bearer
		fmt.Fprintf(h, "%d:%s=%d:%s\x00", len(BearerCredential), BearerCredential, len(bearer), bearer)
	}
	var missing []string
	for _, n := range names {
		v, ok := p.creds.Resolve(who, n)
		if !ok {
			missing = append(missing, n)
			continue
		}
		vals[n] = v
		fmt.Fprintf(h, "%d:%s=%d:%s\x00", len(n), n, len(v), v)
	}
	if len(missing) > 0 {
		return route{missing: missing}
	}
	return route{
		key:    id + "#" + hex.EncodeToString(h.Sum(nil)[:16]),
		lookup: func(n string) (string, bool) { v, ok := vals[n]; return v, ok },
		bearer: bearer,
	}
}

// pruneLocked closes the connections that no principal who used them
// routes to any more. p.mu is held; connections close in the background.
func (p *Pool) pruneLocked() {
	for key, e := range p.conns {
		if e.users == nil {
			continue // no credentials: shared by everyone
		}
		for u := range e.users {
			if p.resolve(capability.Principal{Tenant: u.tenant, Agent: u.agent}, e.target, u.target, u.account).key != key {
				delete(e.users, u)
			}
		}
		if len(e.users) > 0 || e.dialing != nil {
			continue
		}
		delete(p.conns, key)
		if e.conn != nil {
			p.log.Info("upstream: closing a connection whose credentials changed", "target", e.target.ID())
			go e.conn.Close()
		}
	}
}

// missingError says which credentials who lacks for t.
func missingError(who capability.Principal, id string, missing []string) error {
	verb := "is"
	if len(missing) > 1 {
		verb = "are"
	}
	return fmt.Errorf("%w: upstream %s needs %s, which %s not set for tenant %s (agent %s); set it with: skillgate credential set %s --tenant %s",
		ErrMissingCredential, id, strings.Join(missing, ", "), verb, who.Tenant, who.Agent, missing[0], who.Tenant)
}

// Missing returns the credentials t's server needs that are not set for
// who (none when it can be started for who). It resolves through the
// pool's credential source, as a call would.
func (p *Pool) Missing(who capability.Principal, t Target) []string {
	var out []string
	for _, n := range t.Server.Credentials() {
		if _, ok := p.creds.Resolve(who, n); !ok {
			out = append(out, n)
		}
	}
	return out
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
//
// who is the principal making the call: ${NAME} references in t's
// declaration resolve for who (see [PoolOptions.CredentialSource]), and
// the call goes to the connection started with exactly those values. A
// credential not set for who fails the call with [ErrMissingCredential]
// (and [ErrNotSent]) without starting anything.
func (p *Pool) Call(ctx context.Context, who capability.Principal, t Target, tool string, args json.RawMessage, done ResultFunc) {
	id, account := t.ID(), AccountFrom(ctx)
	gen := p.creds.Generation()
	p.mu.Lock()
	r := p.routeLocked(who, t, id, account, gen)
	conn := p.liveLocked(r.key, t)
	p.mu.Unlock()
	if err := r.blocked(who, id); err != nil {
		done(nil, notSent{err})
		return
	}
	if r.bearer != "" && p.opts.Unauthorized != nil {
		// A 401 is answered after Call returned: keep the arguments
		// for the retry with a refreshed token.
		args = bytes.Clone(args)
		done = p.retryUnauthorized(ctx, who, t, tool, args, account, r.bearer, done)
	}
	if conn == nil {
		args = bytes.Clone(args)
		go p.callDialling(ctx, who, t, tool, args, nil, done)
		return
	}
	conn.CallToolRaw(ctx, tool, args, func(res json.RawMessage, err error) {
		if err != nil && errors.Is(err, ErrClosed) { // refused before sending: retry
			go p.callDialling(ctx, who, t, tool, bytes.Clone(args), conn, done)
			return
		}
		done(res, markNotSent(err, false))
	})
}

// retryUnauthorized wraps done: a call a remote server refused with 401
// while it carried token is made once more after Unauthorized refreshed
// the connection (the server never ran it), else done gets the error.
func (p *Pool) retryUnauthorized(ctx context.Context, who capability.Principal, t Target, tool string, args json.RawMessage, account, token string, done ResultFunc) ResultFunc {
	return func(res json.RawMessage, err error) {
		if err == nil || !errors.Is(err, ErrUnauthorized) {
			done(res, err)
			return
		}
		go func() {
			if !p.opts.Unauthorized(ctx, who, t.Server, account, token) {
				done(nil, err)
				return
			}
			p.log.Info("upstream: retrying a call with the connection's refreshed token", "target", t.ID())
			p.callDialling(WithAccount(ctx, account), who, t, tool, args, nil, done)
		}()
	}
}

// callDialling gets a connection for who's route to t, replacing dead when
// it is still that route's, and makes the call on it.
func (p *Pool) callDialling(ctx context.Context, who capability.Principal, t Target, tool string, args json.RawMessage, dead *Conn, done ResultFunc) {
	id, account := t.ID(), AccountFrom(ctx)
	gen := p.creds.Generation()
	p.mu.Lock()
	r := p.routeLocked(who, t, id, account, gen)
	p.mu.Unlock()
	if err := r.blocked(who, id); err != nil {
		done(nil, notSent{err})
		return
	}
	if dead != nil {
		p.drop(r.key, dead)
	}
	conn, err := p.conn(ctx, t, r, routeKey{who.Tenant, who.Agent, id, account})
	if err != nil {
		done(nil, markNotSent(err, true))
		return
	}
	conn.CallToolRaw(ctx, tool, args, func(res json.RawMessage, err error) { done(res, markNotSent(err, false)) })
}

// liveLocked returns the connection of key when it is up and started
// under t's confinement terms, without dialling. p.mu is held.
func (p *Pool) liveLocked(key string, t Target) *Conn {
	e := p.conns[key]
	if e == nil || e.conn == nil || p.closed || e.target.Network != t.Network || e.target.Trust != t.Trust {
		return nil
	}
	select {
	case <-e.conn.Done():
		return nil
	default:
		return e.conn
	}
}

// Conn returns a live connection to t's server for who, dialling one if
// there is none or the previous one died.
func (p *Pool) Conn(ctx context.Context, who capability.Principal, t Target) (*Conn, error) {
	id, account := t.ID(), AccountFrom(ctx)
	gen := p.creds.Generation()
	p.mu.Lock()
	r := p.routeLocked(who, t, id, account, gen)
	p.mu.Unlock()
	if err := r.blocked(who, id); err != nil {
		return nil, err
	}
	return p.conn(ctx, t, r, routeKey{who.Tenant, who.Agent, id, account})
}

// conn returns a live connection for route r of t, dialling one if needed;
// user is recorded as one of its principals.
func (p *Pool) conn(ctx context.Context, t Target, r route, user routeKey) (*Conn, error) {
	id, key := t.ID(), r.key
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, fmt.Errorf("upstream %s: %w", id, ErrClosed)
		}
		e := p.conns[key]
		if e == nil {
			e = &entry{target: t, lookup: r.lookup}
			if r.lookup != nil {
				e.users = map[routeKey]struct{}{}
			}
			p.conns[key] = e
		}
		if e.users != nil {
			e.users[user] = struct{}{}
		}
		if e.target.Network != t.Network || e.target.Trust != t.Trust {
			// A new approval of the same version changed what its
			// server may reach: the server started under the old
			// terms does not serve another call.
			e.target = t
			if e.conn != nil {
				p.log.Info("upstream: restarting a server whose confinement changed", "target", id)
				old := e.conn
				e.conn = nil
				go old.Close()
			}
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

		conn, err := p.dial(ctx, t, e.lookup)

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

func (p *Pool) dial(ctx context.Context, t Target, creds CredentialLookup) (*Conn, error) {
	if p.opts.BeforeStart != nil {
		if err := p.opts.BeforeStart(ctx, t); err != nil {
			return nil, &ServerError{ServerID: t.Server.ID, Phase: "start", Err: fmt.Errorf("%w: %w", ErrServerStart, err)}
		}
	}
	pins := t.Pins
	opts := &ConnOptions{
		Options: Options{
			Logger: p.log, Credentials: creds, Limits: p.opts.Limits, Dir: t.Dir,
			ClientName: "skillgate", ClientVersion: p.opts.ClientVersion,
		},
		Pins:    &pins,
		LeftOut: t.LeftOut,
	}
	if t.Unpinned {
		opts.Pins, opts.LeftOut = nil, nil
	}
	if p.opts.Confine != nil && t.Server.Transport == capability.TransportStdio {
		c, err := p.opts.Confine(t)
		if err != nil {
			return nil, &ServerError{ServerID: t.Server.ID, Phase: "start", Err: fmt.Errorf("%w: %w", ErrServerStart, err)}
		}
		opts.Confine = c
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

// drop forgets conn if it is still key's connection.
func (p *Pool) drop(key string, conn *Conn) {
	p.mu.Lock()
	if e := p.conns[key]; e != nil && e.conn == conn {
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
	for key, e := range p.conns {
		if keep[e.target.ID()] || e.dialing != nil {
			continue
		}
		if e.conn != nil {
			closing = append(closing, e.conn)
		}
		delete(p.conns, key)
	}
	clear(p.routes)
	p.mu.Unlock()
	for _, c := range closing {
		c.Close()
	}
}

// PoolStat describes one pooled connection: a target, with one set of
// credentials when it references any (a target appears once per set).
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
	for _, e := range p.conns {
		s := PoolStat{Target: e.target.ID(), Dials: e.dials}
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
	clear(p.routes)
	p.mu.Unlock()
	var errs []error
	for _, c := range conns {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
