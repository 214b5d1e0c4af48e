package connection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// ErrNoServer means a provider names no remote MCP server skillgate can
// connect to: no installed, enabled skill declares a streamable HTTP
// server with that ID, or several declare different URLs.
var ErrNoServer = errors.New("no remote server for the provider")

// ServerURL returns the URL of the remote (streamable HTTP) MCP server a
// provider names: the mcp.json server ID of an installed skill. The app
// implements it over the installed skills.
type ServerURL func(ctx context.Context, provider string) (string, error)

// Auditor is where a [Service] records what operators do to connections;
// audit.Log implements it.
type Auditor interface {
	Append(ctx context.Context, rs ...audit.Record) ([]audit.Record, error)
}

// ServiceOptions configure a [Service]; zero fields mean the defaults.
type ServiceOptions struct {
	// Audit receives one record per connection made, renamed, made
	// default, revoked and removed; nil records nothing.
	Audit Auditor
	// Client returns the configured OAuth client of a provider; nil, or a
	// nil result, registers a client dynamically. An error (a configured
	// client whose secret is missing) fails the connect.
	Client func(provider string) (*oauth.Registration, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives one record per audit failure; nil discards.
	Logger *slog.Logger
}

// Service is what an operator does with connections, in one place for
// the console and the CLI: list them, connect one through a browser
// ([Service.Start], then [Service.Complete] from the callback), rename
// one, make one the default, revoke one and forget one. Each change is
// audited with the operator who made it. It is safe for concurrent use.
type Service struct {
	store   *credential.Store
	conn    *Connector
	refresh *Refresher
	server  ServerURL
	opts    ServiceOptions

	mu      sync.Mutex
	started map[string]starter // who started each waiting authorization, by state
}

// starter is the operator who started an authorization, kept until its
// callback or its expiry.
type starter struct {
	actor   string
	expires time.Time
}

// NewService returns the Service over store, making connections with
// conn, revoking them with refresh and finding providers' servers with
// server (nil: no provider has one, and Start fails with ErrNoServer).
// opts is copied; nil means the defaults.
func NewService(store *credential.Store, conn *Connector, refresh *Refresher, server ServerURL, opts *ServiceOptions) *Service {
	var o ServiceOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, conn: conn, refresh: refresh, server: server, opts: o, started: map[string]starter{}}
}

// List returns every connection without its secrets, sorted by tenant,
// agent, provider and account.
func (s *Service) List(ctx context.Context) ([]credential.ConnectionInfo, error) {
	return s.store.Connections(ctx)
}

// Start starts connecting k for actor: it finds the provider's server,
// discovers its authorization server, registers a client (unless one is
// configured) and returns the authorization URL a human opens; the
// authorization server sends the browser back to redirectURI, whose
// handler calls [Service.Complete]. makeDefault makes the connection the
// default of its scope for the provider. It fails with
// credential.ErrInvalidScope or ErrInvalidConnection for a malformed key,
// ErrNoServer when the provider has no server, and the oauth package's
// errors when discovery or registration fails.
func (s *Service) Start(ctx context.Context, k credential.ConnectionKey, redirectURI string, makeDefault bool, actor string) (string, error) {
	return s.StartWith(ctx, ConnectRequest{Key: k, RedirectURI: redirectURI, Default: makeDefault}, actor)
}

// StartWith is [Service.Start] with the whole request: a ServerURL
// given is used as it is (else the provider's server is found), a
// Client given is used instead of the configured one, and Scopes are
// requested instead of those discovery finds.
func (s *Service) StartWith(ctx context.Context, req ConnectRequest, actor string) (string, error) {
	k := req.Key
	if err := k.Check(); err != nil {
		return "", err
	}
	if req.ServerURL == "" {
		if s.server == nil {
			return "", fmt.Errorf("%w: %s: this server resolves no provider to a remote server", ErrNoServer, k.Provider)
		}
		serverURL, err := s.server(ctx, k.Provider)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrNoServer, k.Provider, err)
		}
		req.ServerURL = serverURL
	}
	if req.Client == nil && s.opts.Client != nil {
		reg, err := s.opts.Client(k.Provider)
		if err != nil {
			return "", err
		}
		req.Client = reg
	}
	st, err := s.conn.Start(ctx, req)
	if err != nil {
		return "", err
	}
	if u, perr := url.Parse(st.URL); perr == nil && u.Query().Get("state") != "" {
		now := s.opts.Now()
		s.mu.Lock()
		for state, p := range s.started {
			if !now.Before(p.expires) {
				delete(s.started, state)
			}
		}
		if len(s.started) < MaxPendingFlows {
			s.started[u.Query().Get("state")] = starter{actor: actor, expires: st.Expires}
		}
		s.mu.Unlock()
	}
	return st.URL, nil
}

// Complete finishes the authorization a callback answers (see
// [Connector.Complete]), audits the connection made in the name of the
// operator who started it, and returns it as stored. It fails with ErrUnknownFlow for a stale,
// used or forged callback and oauth.ErrAuthorization when the
// authorization was denied or refused.
func (s *Service) Complete(ctx context.Context, callback url.Values) (credential.ConnectionInfo, error) {
	s.mu.Lock()
	who, ok := s.started[callback.Get("state")]
	delete(s.started, callback.Get("state"))
	s.mu.Unlock()
	info, err := s.conn.Complete(ctx, callback)
	if err != nil {
		return info, err
	}
	actor := who.actor
	if !ok || actor == "" {
		actor = "system"
	}
	err = s.record(ctx, actor, "connection.connect", info.ConnectionKey, map[string]any{"issuer": info.Issuer, "scopes": info.Scopes, "default": info.Default})
	return info, err
}

// Rename gives connection k the account label account, for actor. It
// fails with credential.ErrNoConnection when k does not exist and
// ErrConnectionExists when the label is taken.
func (s *Service) Rename(ctx context.Context, k credential.ConnectionKey, account, actor string) error {
	if err := s.store.RenameConnection(ctx, k, account); err != nil {
		return err
	}
	return s.record(ctx, actor, "connection.rename", k, map[string]any{"to": account})
}

// SetDefault makes k the default account of its scope for its provider,
// for actor. It fails with credential.ErrNoConnection when k does not
// exist.
func (s *Service) SetDefault(ctx context.Context, k credential.ConnectionKey, actor string) error {
	if err := s.store.SetDefaultConnection(ctx, k); err != nil {
		return err
	}
	return s.record(ctx, actor, "connection.default", k, nil)
}

// Revoke revokes k's grant at its authorization server and then forgets
// or marks the connection (see [Refresher.Revoke]), for actor. It fails
// with credential.ErrNoConnection when k does not exist and
// oauth.ErrRevocation when the server refused, leaving the connection as
// it was.
func (s *Service) Revoke(ctx context.Context, k credential.ConnectionKey, forget bool, actor string) error {
	if err := s.refresh.Revoke(ctx, k, forget); err != nil {
		return err
	}
	return s.record(ctx, actor, "connection.revoke", k, map[string]any{"forgotten": forget})
}

// Remove forgets connection k without revoking its grant (for a server
// that cannot be reached), for actor. It fails with
// credential.ErrNoConnection when k does not exist.
func (s *Service) Remove(ctx context.Context, k credential.ConnectionKey, actor string) error {
	if err := s.store.RemoveConnection(ctx, k); err != nil {
		return err
	}
	return s.record(ctx, actor, "connection.remove", k, nil)
}

// Expired audits that k's grant was found dead at a refresh and the
// connection marked expired: the [Options.OnExpired] of the refresher
// that serves this service. actor is who found it ("system" for serve's
// refresher).
func (s *Service) Expired(ctx context.Context, k credential.ConnectionKey, actor string) error {
	return s.record(ctx, actor, "connection.expire", k, nil)
}

// record appends the audit record of action on k: the subject is the
// provider, the data the scope and account (and extra).
func (s *Service) record(ctx context.Context, actor, action string, k credential.ConnectionKey, extra map[string]any) error {
	if s.opts.Audit == nil {
		return nil
	}
	data := map[string]any{"tenant": k.Tenant, "account": k.Account}
	if k.Agent != "" {
		data["agent"] = k.Agent
	}
	for key, v := range extra {
		data[key] = v
	}
	raw, err := json.Marshal(data)
	if err == nil {
		_, err = s.opts.Audit.Append(ctx, audit.Record{Time: s.opts.Now().UTC(), Actor: actor, Action: action, Subject: k.Provider, Data: raw})
	}
	if err != nil {
		s.opts.Logger.ErrorContext(ctx, "connection change not audited", "action", action, "connection", k.String(), "error", err)
		return fmt.Errorf("%s of %s is done but its audit record was not written: %w", action, k, err)
	}
	return nil
}
