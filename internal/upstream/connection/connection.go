// Package connection runs the lifecycle of the connections a credential
// store keeps (issue 34): a [Refresher] refreshes OAuth grants before
// their access tokens expire, writes the new grant back, and marks a
// connection expired when its grant is dead (the authorization server
// refused the refresh), telling the broker through [Options.OnExpired] so
// that it makes the connection's backends dormant; [Refresher.Revoke]
// revokes a grant at the authorization server and then forgets or marks
// the connection.
//
//	r := connection.New(store, oauth.New(nil), &connection.Options{OnExpired: broker.Dormant})
//	go r.Run(ctx)              // refreshes what is due, every Interval
//	err := r.Revoke(ctx, key, true)
//
// At most one refresh or revocation of a connection runs at a time in one
// process, and a refresh runs under the credential store's write lock
// (the lock file, or the database row of a shared store), so across
// replicas one grant is refreshed once: a replica that waited finds the
// access token it saw replaced and uses the new one.
package connection

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// Defaults of [Options].
const (
	// DefaultLead is how long before its expiry an access token is
	// refreshed.
	DefaultLead = 2 * time.Minute
	// DefaultJitter bounds the extra, per-connection lead that spreads
	// refreshes of grants issued together.
	DefaultJitter = 30 * time.Second
	// DefaultInterval is how often [Refresher.Run] looks for due grants.
	DefaultInterval = 15 * time.Second
)

// ErrNotActive means the connection is expired or revoked: it is not
// refreshed; a human must connect again.
var ErrNotActive = errors.New("connection not active")

// ErrNotOAuth means the connection holds a static secret: there is
// nothing to refresh.
var ErrNotOAuth = errors.New("connection has no oauth grant")

// Store is what the lifecycle needs of a credential store;
// *credential.Store implements it.
type Store interface {
	Connections(ctx context.Context) ([]credential.ConnectionInfo, error)
	Connection(ctx context.Context, k credential.ConnectionKey) (credential.Connection, error)
	UpdateConnection(ctx context.Context, k credential.ConnectionKey, change func(c *credential.Connection) (bool, error)) error
	MarkConnection(ctx context.Context, k credential.ConnectionKey, state credential.ConnectionState, errText string) error
	RemoveConnection(ctx context.Context, k credential.ConnectionKey) error
}

var _ Store = (*credential.Store)(nil)

// OAuth is what the lifecycle needs of the OAuth client; *oauth.Client
// implements it.
type OAuth interface {
	Refresh(ctx context.Context, md *oauth.Metadata, reg oauth.Registration, g oauth.Grant) (oauth.Grant, error)
	Revoke(ctx context.Context, md *oauth.Metadata, reg oauth.Registration, g oauth.Grant) error
}

var _ OAuth = (*oauth.Client)(nil)

// Options configure a [Refresher]. Zero fields mean the defaults.
type Options struct {
	// Lead is how long before expiry a grant is refreshed.
	Lead time.Duration
	// Jitter bounds a per-connection extra lead, derived from the
	// connection's key and expiry, so grants issued at once are not all
	// refreshed at once; it is stable, so every scan agrees. Negative
	// means none.
	Jitter time.Duration
	// Interval is how often Run scans for due grants.
	Interval time.Duration
	// Now is the clock; nil means time.Now. Tests move it.
	Now func() time.Time
	// OnExpired is called once when a refresh finds a connection's grant
	// dead and the connection has been marked expired; the broker makes
	// its backends dormant and sends list_changed. It must not block long.
	OnExpired func(ctx context.Context, k credential.ConnectionKey)
	// Logger receives one record per refresh, failure and revocation,
	// never a token. Nil means discard.
	Logger *slog.Logger
}

// Refresher keeps the OAuth connections of a store fresh. It is safe for
// concurrent use.
type Refresher struct {
	store  Store
	client OAuth
	opts   Options
	log    *slog.Logger

	mu    sync.Mutex
	locks map[credential.ConnectionKey]*keyLock
}

// keyLock serialises the work on one connection.
type keyLock struct {
	ch   chan struct{}
	refs int
}

// New returns a Refresher over store with client; opts is copied, and
// nil means the defaults.
func New(store Store, client OAuth, opts *Options) *Refresher {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Lead <= 0 {
		o.Lead = DefaultLead
	}
	switch {
	case o.Jitter == 0:
		o.Jitter = DefaultJitter
	case o.Jitter < 0:
		o.Jitter = 0
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Refresher{store: store, client: client, opts: o, log: o.Logger, locks: map[credential.ConnectionKey]*keyLock{}}
}

// lock takes k's lock, waiting for it or for ctx.
func (r *Refresher) lock(ctx context.Context, k credential.ConnectionKey) (func(), error) {
	r.mu.Lock()
	l := r.locks[k]
	if l == nil {
		l = &keyLock{ch: make(chan struct{}, 1)}
		r.locks[k] = l
	}
	l.refs++
	r.mu.Unlock()
	release := func() {
		r.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(r.locks, k)
		}
		r.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// Due reports whether c's grant is to be refreshed at now: it is active,
// holds a refresh token and an expiry, and expires within the lead plus
// its jitter.
func (r *Refresher) Due(c credential.ConnectionInfo, now time.Time) bool {
	if c.Kind != credential.KindOAuth || c.State != credential.StateActive || !c.Refreshable || c.Expiry.IsZero() {
		return false
	}
	return !now.Add(r.opts.Lead + r.jitter(c)).Before(c.Expiry)
}

// jitter is c's stable extra lead in [0, Jitter).
func (r *Refresher) jitter(c credential.ConnectionInfo) time.Duration {
	if r.opts.Jitter <= 0 {
		return 0
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d", c.Tenant, c.Agent, c.Provider, c.Account, c.Expiry.UnixNano())
	return time.Duration(h.Sum64() % uint64(r.opts.Jitter))
}

// Run refreshes due grants every Interval until ctx ends, and returns
// ctx's error. A failed scan or refresh is logged and retried at the
// next tick.
func (r *Refresher) Run(ctx context.Context) error {
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		if _, err := r.RefreshDue(ctx); err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "connection refresh scan failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// RefreshDue refreshes every grant due now (see [Refresher.Due]), one
// after another, and returns how many it refreshed. The errors of the
// refreshes that failed are joined; a dead grant counts among them
// (wrapping oauth.ErrRefreshFailed) after its connection was marked
// expired.
func (r *Refresher) RefreshDue(ctx context.Context) (int, error) {
	list, err := r.store.Connections(ctx)
	if err != nil {
		return 0, err
	}
	now := r.opts.Now()
	var errs []error
	n := 0
	for _, c := range list {
		if !r.Due(c, now) {
			continue
		}
		cur, err := r.store.Connection(ctx, c.ConnectionKey)
		if err != nil {
			if !errors.Is(err, credential.ErrNoConnection) {
				errs = append(errs, err)
			}
			continue
		}
		if cur.OAuth == nil || !r.Due(cur.Info(), now) {
			continue
		}
		// Under the store's lock the grant is refreshed only if it still
		// holds this token and is still due: another replica may have
		// refreshed it meanwhile.
		refreshed, err := r.refresh(ctx, c.ConnectionKey, cur.OAuth.AccessToken, true)
		if err != nil {
			errs = append(errs, err)
		}
		if refreshed {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// Refresh refreshes k's grant now, unless its stored access token is no
// longer stale (non-empty): then another caller refreshed it meanwhile,
// and Refresh returns (false, nil) without a request. The broker passes
// the token the resource server refused; the scan passes the token it
// found due. On success the new grant is stored and Refresh returns true.
// When the server finds the grant dead (oauth.ErrRefreshFailed) the
// connection is marked expired, [Options.OnExpired] is called, and the
// error is returned; any other failure is kept as the connection's last
// error and returned, the connection staying active for the next try. It
// fails with ErrNotActive for an expired or revoked connection and
// ErrNotOAuth for a static secret, without a request.
func (r *Refresher) Refresh(ctx context.Context, k credential.ConnectionKey, stale string) (bool, error) {
	return r.refresh(ctx, k, stale, false)
}

// refresh is Refresh; with onlyDue it refreshes only a grant still due
// (see [Refresher.Due]) once the store's lock is held.
func (r *Refresher) refresh(ctx context.Context, k credential.ConnectionKey, stale string, onlyDue bool) (bool, error) {
	unlock, err := r.lock(ctx, k)
	if err != nil {
		return false, err
	}
	defer unlock()
	var (
		refreshed bool
		failure   error // the refresh's failure, stored with the connection
		dead      bool
		info      credential.ConnectionInfo
	)
	start := r.opts.Now()
	// The request runs under the store's write lock, so that of several
	// replicas refreshing one grant only the first asks the server; the
	// others find the token changed and stop.
	err = r.store.UpdateConnection(ctx, k, func(c *credential.Connection) (bool, error) {
		info = c.Info()
		switch {
		case c.OAuth == nil:
			return false, fmt.Errorf("%w: %s", ErrNotOAuth, k)
		case c.State != credential.StateActive:
			return false, fmt.Errorf("%w: %s is %s; connect it again", ErrNotActive, k, c.State)
		case stale != "" && c.OAuth.AccessToken != stale, onlyDue && !r.Due(c.Info(), r.opts.Now()):
			return false, nil // refreshed meanwhile, here or by another replica
		}
		ng, err := r.client.Refresh(ctx, c.OAuth.Metadata(), c.OAuth.Client, c.OAuth.Grant)
		if err != nil {
			failure = fmt.Errorf("%s: %w", k, err)
			c.LastError = err.Error()
			if dead = errors.Is(err, oauth.ErrRefreshFailed); dead {
				c.State = credential.StateExpired
			}
			return true, nil
		}
		if ng.RefreshToken == "" {
			ng.RefreshToken = c.OAuth.RefreshToken // the server did not rotate it
		}
		c.OAuth.Grant = ng
		c.State, c.LastError, c.Refreshed = credential.StateActive, "", r.opts.Now().UTC()
		refreshed = true
		return true, nil
	})
	switch {
	case err != nil:
		return false, err
	case dead:
		r.log.WarnContext(ctx, "connection expired", "connection", info, "error", failure)
		if r.opts.OnExpired != nil {
			r.opts.OnExpired(ctx, k)
		}
		return false, failure
	case failure != nil:
		r.log.WarnContext(ctx, "connection refresh failed; retrying later", "connection", info, "error", failure)
		return false, failure
	case refreshed:
		r.log.InfoContext(ctx, "connection refreshed", "connection", info, "duration", r.opts.Now().Sub(start))
	}
	return refreshed, nil
}

// Revoke revokes k's grant at its authorization server (RFC 7009) when
// the server offers revocation, then removes the connection (forget) or
// marks it revoked. A connection without a revocation endpoint, or with
// a static secret, is only removed or marked. When the server refuses or
// cannot be reached the connection is left as it was and the error
// (wrapping oauth.ErrRevocation) returned: retry, or remove it with the
// store.
func (r *Refresher) Revoke(ctx context.Context, k credential.ConnectionKey, forget bool) error {
	unlock, err := r.lock(ctx, k)
	if err != nil {
		return err
	}
	defer unlock()
	c, err := r.store.Connection(ctx, k)
	if err != nil {
		return err
	}
	if c.OAuth != nil && c.OAuth.RevocationEndpoint != "" {
		if err := r.client.Revoke(ctx, c.OAuth.Metadata(), c.OAuth.Client, c.OAuth.Grant); err != nil && !errors.Is(err, oauth.ErrRevocationUnsupported) {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	if forget {
		err = r.store.RemoveConnection(ctx, k)
	} else {
		err = r.store.MarkConnection(ctx, k, credential.StateRevoked, "")
	}
	if err != nil {
		return err
	}
	r.log.InfoContext(ctx, "connection revoked", "connection", c.Info(), "forgotten", forget)
	return nil
}
