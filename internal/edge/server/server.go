// Package server is skillgate's HTTP edge: MCP over streamable HTTP at
// /mcp for agents, authenticated with bearer tokens that map to principals,
// and a small REST API (/v1/scan to rescan the registry, /v1/health).
//
// A tour:
//
//	tokens, _ := server.OpenTokens(filepath.Join(dataDir, server.TokensFile))
//	srv, _ := server.New(server.Options{Gateway: gw, Tokens: tokens, Rescan: rescan})
//	http.ListenAndServe("127.0.0.1:7777", srv)
//
// An agent sends "Authorization: Bearer <secret>" on every request (no or
// an unknown token: 401 with a WWW-Authenticate challenge) and, to resume a
// session, its id in the Skillgate-Session header of the initialize
// request; the response carries the session's id in the same header. A
// client of protocol 2026-07-28, which has no initialize and no MCP
// session, sends Skillgate-Session on every request (modern.go). The
// MCP session of a token can only be used with a token of the same
// principal. GET /v1/health alone answers without a token, for load
// balancers, and then says only that the server is up.
package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/telemetry"
)

// SessionHeader carries the skillgate session id: sent by a client that
// resumes a session (on initialize) or, at 2026-07-28, on every request
// of the session; returned on every new connection.
const SessionHeader = "Skillgate-Session"

// Defaults for [Options].
const (
	DefaultSessionTimeout = 30 * time.Minute
	DefaultInitTimeout    = 30 * time.Second
)

// Options configures a [Server]. Gateway and Tokens are required.
type Options struct {
	Gateway *mcpserver.Gateway
	Tokens  *Tokens
	// Rescan rescans the registry and reports whether what agents see
	// changed (connected clients are then notified); nil disables
	// POST /v1/scan.
	Rescan func(context.Context) (bool, error)
	// SessionTimeout closes MCP sessions idle this long; 0 means
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// InitTimeout closes connections that do not finish the MCP handshake
	// in time; 0 means DefaultInitTimeout.
	InitTimeout time.Duration
	// Logger receives request failures; nil discards them.
	Logger *slog.Logger
	// Version is skillgate's version, given in the OpenAPI document.
	Version string
	// Ready reports whether the server can serve: its store (and bucket)
	// reachable. Nil: ready whenever it answers.
	Ready func(context.Context) error
	// Delegate registers sub-agents of tokens with a parent (see
	// [Delegation]); nil refuses such tokens.
	Delegate Delegate
	// PublicURL is the scheme and authority clients reach the server at
	// (https://gw.example.com), for the protected resource metadata and
	// the resource_metadata of 401 challenges (RFC 9728). Empty: each
	// request's own (http or https, and its Host header), which is right
	// unless a proxy in front changes them.
	PublicURL string
	// Tracer, when tracing is on, starts a server span per REST and admin
	// console request (trace.go); MCP requests get theirs from the
	// gateway. Nil: off.
	Tracer *telemetry.Tracer
}

// Server is the HTTP handler. It is safe for concurrent use.
type Server struct {
	opts  Options
	log   *slog.Logger
	mux   *http.ServeMux
	probe *mcp.Server // answers the SDK's per-request version check only

	access map[string]capability.Access // each REST route's, from apiOperations

	routesMu sync.Mutex
	routes   []string // the endpoints as the 404 body lists them, in order
}

// New returns the HTTP handler described by opts.
func New(opts Options) (*Server, error) {
	if opts.Gateway == nil || opts.Tokens == nil {
		return nil, errors.New("server: Options.Gateway and Options.Tokens are required")
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.InitTimeout <= 0 {
		opts.InitTimeout = DefaultInitTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: log, mux: http.NewServeMux(), probe: mcp.NewServer(&mcpserver.DefaultImplementation, nil), access: map[string]capability.Access{}}
	for _, op := range apiOperations() {
		if a, ok := s.access[op.pattern]; ok && a != op.access {
			return nil, fmt.Errorf("server: route %s is declared with accesses %s and %s", op.pattern, a, op.access)
		}
		s.access[op.pattern] = op.access
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(s.getServer, &mcp.StreamableHTTPOptions{
		Logger:         log,
		SessionTimeout: opts.SessionTimeout,
	})
	// Modern clients (2026-07-28: no initialize, no Mcp-Session-Id) are
	// served statelessly, on the same endpoint (modern.go).
	modernHandler := mcp.NewStreamableHTTPHandler(s.getServer, &mcp.StreamableHTTPOptions{Logger: log, Stateless: true})
	s.handleNamed("/mcp", "/mcp (MCP over streamable HTTP)", s.mcpAuth(s.skillsExt(s.modern(modernHandler, s.connect(mcpHandler)))))
	s.mountResourceMetadata()
	s.handle("POST /v1/scan", http.HandlerFunc(s.scan))
	s.handle("GET /v1/health", http.HandlerFunc(s.health))
	s.handle("GET /v1/ready", http.HandlerFunc(s.ready))
	s.handle("GET /v1/openapi.json", &openAPIDoc{version: cmp.Or(opts.Version, "dev")})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.routesMu.Lock()
		list := strings.Join(s.routes, ", ")
		s.routesMu.Unlock()
		s.fail(w, r, fmt.Errorf("%w: %s %s; the endpoints are %s", errNotFound, r.Method, r.URL.Path, list))
	})
	return s, nil
}

// handle serves the REST route pattern with h behind [Server.guard], with
// the access apiOperations declares for it, and lists it among the
// endpoints that a 404 names. Every REST route is added through here, so
// none is served without its declared access (an undeclared one panics),
// and the list is complete.
func (s *Server) handle(pattern string, h http.Handler) {
	a, ok := s.access[pattern]
	if !ok {
		panic("server: route " + pattern + " is not declared in apiOperations: declare its access and document it there")
	}
	s.handleNamed(pattern, pattern, s.traced(pattern, s.guard(a, h)))
}

// scopeKey holds the request's [capability.Scope], set by guard.
type scopeKey struct{}

// guard is the one gate of every REST route (and of /metrics): it
// authenticates the bearer token (for a public route, only when one is
// sent), and lets through only a principal that access a admits
// ([capability.Access.Scope]: T0 every tenant, T1 its own). The handler
// finds the scope with scopeFrom and checks each tenant it touches
// against it.
func (s *Server) guard(a capability.Access, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a == capability.AccessPublic && r.Header.Get("Authorization") == "" {
			h.ServeHTTP(w, r)
			return
		}
		p, err := s.authenticate(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		sc, err := a.Scope(p)
		if err != nil {
			s.fail(w, r, fmt.Errorf("%w (%s %s)", err, r.Method, r.URL.Path))
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, sc)))
	})
}

// scopeFrom returns the scope guard admitted r with; ok false for a
// public route requested without a token.
func scopeFrom(r *http.Request) (capability.Scope, bool) {
	sc, ok := r.Context().Value(scopeKey{}).(capability.Scope)
	return sc, ok
}

// handleNamed is handle with the text the 404 shows for the route.
func (s *Server) handleNamed(pattern, shown string, h http.Handler) {
	s.mux.Handle(pattern, h)
	s.routesMu.Lock()
	s.routes = append(s.routes, shown)
	s.routesMu.Unlock()
}

// MountMetrics serves h (Prometheus metrics) at GET /metrics, for tokens
// of tier T0 or T1 (server-wide figures, no tenant's data): scrapers send
// one as a bearer token.
func (s *Server) MountMetrics(h http.Handler) {
	s.handleNamed("GET /metrics", "GET /metrics (Prometheus)", s.guard(capability.AccessServer, h))
}

// ready is GET /v1/ready: 200 {"status": "ready"} when the store (and
// bucket) answer, else 503 {"status": "not ready", "error": why}. It needs
// no token, for load balancers and orchestrators.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if s.opts.Ready != nil {
		if err := s.opts.Ready(r.Context()); err != nil {
			s.log.WarnContext(r.Context(), "not ready", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, readyResponse{Status: "not ready", Error: err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusOK, readyResponse{Status: "ready"})
}

// MountAdmin serves the admin web console (package admin) under /admin.
func (s *Server) MountAdmin(h http.Handler) {
	h = s.traced("/admin/", h)
	s.handleNamed("/admin/", "/admin/ (admin web console)", h)
	s.mux.Handle("/admin", h)
}

// VerifyToken resolves a bearer token's secret to its principal, as every
// request's token is, and to the token's identity (its SHA-256, which
// [Server.CurrentToken] takes): for the admin console's sign-in.
func (s *Server) VerifyToken(secret string) (id string, p capability.Principal, ok bool) {
	tok, ok, err := s.opts.Tokens.Verify(secret)
	if err != nil {
		s.log.Error("token file unreadable; using the tokens last loaded", "path", s.opts.Tokens.Path(), "err", err)
	}
	if !ok {
		return "", capability.Principal{}, false
	}
	return tok.SHA256, tok.Principal(), true
}

// CurrentToken returns the principal of the token whose identity is id
// ([Server.VerifyToken]) in the token set as it is now ([Tokens.Current]):
// ok is false once the token was removed or changed, on any replica. The
// admin console asks it on every request of a session.
func (s *Server) CurrentToken(ctx context.Context, id string) (capability.Principal, bool, error) {
	tok, ok, err := s.opts.Tokens.Current(ctx, id)
	if err != nil || !ok {
		return capability.Principal{}, false, err
	}
	return tok.Principal(), true, nil
}

// health is GET /v1/health. Without a token (a load balancer's probe) it
// says only {"status": "ok"}; with a valid token it adds the number of
// connections; an invalid token gets 401, as everywhere.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	body := healthResponse{Status: "ok"}
	if _, ok := scopeFrom(r); ok {
		n := s.opts.Gateway.Connections()
		body.Connections = &n
	}
	writeJSON(w, http.StatusOK, body)
}

// verifiedKey holds the TokenInfo mcpAuth verified, so that the SDK's
// bearer middleware, which verifies again to put it in the context the SDK
// reads, does not look the token up twice.
type verifiedKey struct{}

// mcpAuth authenticates a request to /mcp: a missing or unknown token gets
// 401 with the WWW-Authenticate challenge and a JSON-RPC error body; a
// valid one goes through the SDK's bearer middleware, which binds the MCP
// session to the token's principal.
func (s *Server) mcpAuth(next http.Handler) http.Handler {
	sdk := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti, err := s.bearer(r)
		if err != nil {
			s.failMCP(w, r, err)
			return
		}
		// A sub-agent's token stops working when its parent's does: the
		// set is read again first when it changed (a stat of a token
		// file, a revision query of a shared set), as for the console.
		if tok, ok := ti.Extra[tokenKey].(Token); ok && tok.Parent != "" {
			if _, err := s.opts.Tokens.Reload(r.Context()); err != nil {
				s.log.ErrorContext(r.Context(), "tokens unreadable; using the tokens last loaded", "path", s.opts.Tokens.Path(), "err", err)
			}
			if _, err := s.opts.Tokens.Chain(tok); err != nil {
				s.fail(w, r, fmt.Errorf("%w: %w", errForbidden, err))
				return
			}
		}
		sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verifiedKey{}, ti)))
	})
}

// ServeHTTP implements [http.Handler].
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// principalKey is the TokenInfo.Extra key holding the principal.
const principalKey = "skillgate.principal"

// verify is the bearer token verifier. UserID is the principal, so the SDK
// refuses an MCP session to a token of another principal.
func (s *Server) verify(ctx context.Context, secret string, _ *http.Request) (*auth.TokenInfo, error) {
	if ti, ok := ctx.Value(verifiedKey{}).(*auth.TokenInfo); ok {
		return ti, nil
	}
	tok, ok, err := s.opts.Tokens.Verify(secret)
	if err != nil {
		s.log.ErrorContext(ctx, "token file unreadable; using the tokens last loaded", "path", s.opts.Tokens.Path(), "err", err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: unknown bearer token", auth.ErrInvalidToken)
	}
	p := tok.Principal()
	return &auth.TokenInfo{UserID: p.String(), Extra: map[string]any{principalKey: p, "token": tok.ID, tokenKey: tok}}, nil
}

func principalFrom(ctx context.Context) (capability.Principal, bool) {
	ti := auth.TokenInfoFromContext(ctx)
	if ti == nil {
		return capability.Principal{}, false
	}
	p, ok := ti.Extra[principalKey].(capability.Principal)
	return p, ok
}

// connKey holds the connection opened for a request that starts an MCP
// session, for getServer (which the SDK calls more than once per request).
type connKey struct{}

// connect opens the gateway connection for a request that starts an MCP
// session (a POST without Mcp-Session-Id), so that a refused session id
// gets a clear HTTP error instead of the SDK's generic one.
func (s *Server) connect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		p, ok := s.connectingPrincipal(w, r)
		if !ok {
			return
		}
		conn, err := s.opts.Gateway.Connect(r.Context(), p, r.Header.Get(SessionHeader), &mcpserver.ConnectOptions{InitTimeout: s.opts.InitTimeout})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set(SessionHeader, conn.Session().ID())
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), connKey{}, conn)))
	})
}

// connectingPrincipal is the principal a new MCP connection is opened for:
// the bearer token's, with a sub-agent token's delegation chain checked
// against the current tokens. It answers the request itself (401, 403)
// and reports false when there is none.
func (s *Server) connectingPrincipal(w http.ResponseWriter, r *http.Request) (capability.Principal, bool) {
	p, ok := principalFrom(r.Context())
	if !ok {
		s.fail(w, r, errUnauthorized)
		return capability.Principal{}, false
	}
	if tok, ok := tokenFrom(r.Context()); ok {
		if err := s.delegate(r.Context(), tok); err != nil {
			s.fail(w, r, err)
			return capability.Principal{}, false
		}
	}
	return p, true
}

// getServer gives the SDK the server of the connection opened for this
// request; for requests on an existing MCP session, which the SDK routes
// itself, it returns a server used only to check protocol versions.
func (s *Server) getServer(r *http.Request) *mcp.Server {
	if conn, ok := r.Context().Value(connKey{}).(*mcpserver.Conn); ok {
		return conn.Server()
	}
	return s.probe
}

func (s *Server) authenticate(r *http.Request) (capability.Principal, error) {
	ti, err := s.bearer(r)
	if err != nil {
		return capability.Principal{}, err
	}
	return ti.Extra[principalKey].(capability.Principal), nil
}

// bearer verifies the request's bearer token. Errors: errUnauthorized (no
// bearer token), errInvalidToken (an unknown one).
func (s *Server) bearer(r *http.Request) (*auth.TokenInfo, error) {
	const prefix = "Bearer "
	h := r.Header.Get("Authorization")
	if len(h) <= len(prefix) || !equalFold(h[:len(prefix)], prefix) {
		return nil, errUnauthorized
	}
	ti, err := s.verify(r.Context(), strings.TrimSpace(h[len(prefix):]), r)
	if err != nil {
		return nil, errInvalidToken
	}
	return ti, nil
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// scan is POST /v1/scan: rescan the registry, notify connected clients when
// what they see changed. Only T0 (humans) and T1 (the top orchestrator) may
// (capability.AccessServer): it shows no tenant's data.
func (s *Server) scan(w http.ResponseWriter, r *http.Request) {
	if s.opts.Rescan == nil {
		s.fail(w, r, fmt.Errorf("%w: this server does not rescan", errNotFound))
		return
	}
	sc, _ := scopeFrom(r)
	start := time.Now()
	changed, err := s.opts.Rescan(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "rescan", "by", sc.Principal.String(), "changed", changed, "duration_ms", time.Since(start).Milliseconds())
	writeJSON(w, http.StatusOK, scanResponse{Changed: changed, Connections: s.opts.Gateway.Connections()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
