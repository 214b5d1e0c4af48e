package connection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// Bounds of a [Connector].
const (
	// DefaultFlowTTL is how long a started authorization waits for its
	// callback.
	DefaultFlowTTL = 10 * time.Minute
	// MaxPendingFlows bounds the authorizations waiting for a callback;
	// the oldest is dropped to start another.
	MaxPendingFlows = 256
)

// ErrUnknownFlow means a callback carries no state, or one that matches
// no authorization waiting here: it is stale (older than the TTL, or
// finished already), forged, or for another replica's flow.
var ErrUnknownFlow = errors.New("no authorization is waiting for this callback")

// Flows is what a [Connector] needs of the OAuth client; *oauth.Client
// implements it.
type Flows interface {
	Discover(ctx context.Context, serverURL string) (*oauth.Metadata, error)
	Register(ctx context.Context, md *oauth.Metadata, redirectURIs []string) (oauth.Registration, error)
	Begin(md *oauth.Metadata, reg oauth.Registration, redirectURI string, scopes []string) (oauth.Authorization, error)
	Exchange(ctx context.Context, md *oauth.Metadata, reg oauth.Registration, a oauth.Authorization, callback url.Values) (oauth.Grant, error)
}

var _ Flows = (*oauth.Client)(nil)

// Keeper is where a [Connector] stores the connections it makes;
// *credential.Store implements it.
type Keeper interface {
	PutConnection(ctx context.Context, c credential.Connection) error
	Connection(ctx context.Context, k credential.ConnectionKey) (credential.Connection, error)
}

// ConnectRequest is one connection to start.
type ConnectRequest struct {
	// Key is the connection to make (or to make again): scope, provider,
	// account.
	Key credential.ConnectionKey
	// ServerURL is the remote MCP server's URL: discovery starts there,
	// and the grant is bound to it (the resource indicator).
	ServerURL string
	// RedirectURI is the callback the authorization server sends the
	// browser back to: a loopback listener of `skillgate connect`, or
	// `skillgate serve`'s callback.
	RedirectURI string
	// Client is a configured OAuth client; nil registers one dynamically
	// (RFC 7591), which fails when the server offers no registration.
	Client *oauth.Registration
	// Scopes to request; nil means what discovery found.
	Scopes []string
	// Default makes the connection the scope's default for the provider.
	Default bool
}

// Started is an authorization waiting for its callback.
type Started struct {
	// URL is what a human opens in a browser. It carries no secret of
	// skillgate's (the PKCE verifier stays here), but it is for the
	// operator's eyes: never hand it to an agent.
	URL string
	// Key is the connection it makes.
	Key credential.ConnectionKey
	// Expires is when the callback stops being accepted.
	Expires time.Time
}

// pending is one started authorization.
type pending struct {
	req     ConnectRequest
	md      *oauth.Metadata
	reg     oauth.Registration
	auth    oauth.Authorization
	expires time.Time
}

// A Connector makes connections with the OAuth authorization code flow:
// [Connector.Start] discovers the server's authorization server,
// registers a client (or takes the configured one) and returns the URL a
// human opens; [Connector.Complete] takes the callback, exchanges the
// code and stores the connection. The authorizations waiting for their
// callback live in memory, bounded in number and time, so the callback
// must reach the process that started the flow. It is safe for concurrent
// use.
type Connector struct {
	flows Flows
	keep  Keeper
	ttl   time.Duration
	now   func() time.Time
	log   *slog.Logger

	mu      sync.Mutex
	pending map[string]*pending // by state
}

// ConnectorOptions configure a [Connector]; zero fields mean the
// defaults.
type ConnectorOptions struct {
	// TTL is how long an authorization waits for its callback.
	TTL time.Duration
	// Now is the clock.
	Now func() time.Time
	// Logger receives one record per started and finished connection,
	// never a token or the authorization URL's state.
	Logger *slog.Logger
}

// NewConnector returns a Connector running flows with f and storing
// connections in k.
func NewConnector(f Flows, k Keeper, opts *ConnectorOptions) *Connector {
	var o ConnectorOptions
	if opts != nil {
		o = *opts
	}
	if o.TTL <= 0 {
		o.TTL = DefaultFlowTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Connector{flows: f, keep: k, ttl: o.TTL, now: o.Now, log: o.Logger, pending: map[string]*pending{}}
}

// Start discovers req.ServerURL's authorization server, registers a
// client unless one is configured, and starts an authorization; the
// returned URL is for a human to open. Errors wrap the oauth package's
// sentinels (ErrDiscovery, ErrRegistration, ...) and name the step.
func (c *Connector) Start(ctx context.Context, req ConnectRequest) (Started, error) {
	if err := req.Key.Check(); err != nil {
		return Started{}, err
	}
	md, err := c.flows.Discover(ctx, req.ServerURL)
	if err != nil {
		return Started{}, fmt.Errorf("connect %s: %w", req.Key, err)
	}
	var reg oauth.Registration
	if req.Client != nil {
		reg = *req.Client
	} else if reg, err = c.flows.Register(ctx, md, []string{req.RedirectURI}); err != nil {
		return Started{}, fmt.Errorf("connect %s: %w", req.Key, err)
	}
	a, err := c.flows.Begin(md, reg, req.RedirectURI, req.Scopes)
	if err != nil {
		return Started{}, fmt.Errorf("connect %s: %w", req.Key, err)
	}
	now := c.now()
	p := &pending{req: req, md: md, reg: reg, auth: a, expires: now.Add(c.ttl)}
	c.mu.Lock()
	c.sweepLocked(now)
	if len(c.pending) >= MaxPendingFlows {
		var oldest string
		for s, q := range c.pending {
			if oldest == "" || q.expires.Before(c.pending[oldest].expires) {
				oldest = s
			}
		}
		delete(c.pending, oldest)
	}
	c.pending[a.State] = p
	c.mu.Unlock()
	c.log.InfoContext(ctx, "connection authorization started", "connection", req.Key.String(), "issuer", md.Server.Issuer, "client", reg)
	return Started{URL: a.URL, Key: req.Key, Expires: p.expires}, nil
}

// sweepLocked drops the authorizations past their TTL. c.mu is held.
func (c *Connector) sweepLocked(now time.Time) {
	for s, p := range c.pending {
		if !now.Before(p.expires) {
			delete(c.pending, s)
		}
	}
}

// Complete finishes the authorization a callback answers: it checks the
// callback (state, issuer, error), exchanges the code, and stores the
// connection as active, replacing one with the same key (which wakes it
// when it had expired), and returns it as stored. A callback is used once. It fails with
// ErrUnknownFlow when no authorization here waits for the callback's
// state, and with the oauth package's errors otherwise.
func (c *Connector) Complete(ctx context.Context, callback url.Values) (credential.ConnectionInfo, error) {
	state := callback.Get("state")
	c.mu.Lock()
	c.sweepLocked(c.now())
	p := c.pending[state]
	delete(c.pending, state)
	c.mu.Unlock()
	if p == nil || state == "" {
		return credential.ConnectionInfo{}, fmt.Errorf("%w: it is older than %s, was used already, or was not started here; start the connection again", ErrUnknownFlow, c.ttl)
	}
	g, err := c.flows.Exchange(ctx, p.md, p.reg, p.auth, callback)
	if err != nil {
		return credential.ConnectionInfo{}, fmt.Errorf("connect %s: %w", p.req.Key, err)
	}
	grant := credential.NewGrant(p.md, p.reg, g)
	conn := credential.Connection{ConnectionKey: p.req.Key, OAuth: &grant, State: credential.StateActive, Default: p.req.Default}
	if err := c.keep.PutConnection(ctx, conn); err != nil {
		return credential.ConnectionInfo{}, fmt.Errorf("connect %s: storing the connection: %w", p.req.Key, err)
	}
	// As stored: the store decides the default (a scope's first account,
	// a reconnected default).
	if stored, err := c.keep.Connection(ctx, p.req.Key); err == nil {
		conn = stored
	}
	c.log.InfoContext(ctx, "connection made", "connection", conn.Info())
	return conn.Info(), nil
}

// Pending reports how many authorizations wait for their callback.
func (c *Connector) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweepLocked(c.now())
	return len(c.pending)
}
