// Package admin is skillgate's admin web console, served by `skillgate
// serve` under /admin: the pages where operators and security reviewers
// make every human decision — review an install layer by layer, complete
// missing risk metadata, suppress scanner findings, approve, reject,
// enable and disable; apply or reject queued changes (promote_provider,
// updates); add and revoke grants; connect, rename, make default and
// revoke connections to remote MCP servers; read the audit log.
//
// Pages are rendered on the server with html/template; there is no
// script. Signing in exchanges an admin (T0) token for a session cookie
// (HttpOnly, SameSite=Strict, Secure over TLS); every form carries the
// session's CSRF token. Every action calls the same service methods as
// the CLI and the REST API, with the operator's identity, so it is
// audited the same way.
package admin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/audit"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the console is served.
const Prefix = "/admin"

// CookieName is the session cookie.
const CookieName = "skillgate_admin"

// Defaults of Options.
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultMaxAge      = 8 * time.Hour
)

// AuditLog is what the console reads of the audit log.
type AuditLog interface {
	Query(ctx context.Context, f audit.Filter) ([]audit.Record, error)
}

// Options configure the console. Installs, Policy and Audit may be nil:
// their pages then say so.
type Options struct {
	// Verify resolves a bearer token's secret to the token's identity
	// (what a session is bound to: the SHA-256 of the secret) and its
	// principal; ok false for an unknown token.
	Verify func(secret string) (id string, p capability.Principal, ok bool)
	// Token returns the principal of the token whose identity is id in
	// the token set as it is now (read again where it changed, on any
	// replica); ok false once the token was removed or changed. Every
	// request of a session asks it, so a session ends at its next request
	// after its token is removed or changed. An error (the token set
	// unreadable) refuses the request and keeps the session.
	Token    func(ctx context.Context, id string) (p capability.Principal, ok bool, err error)
	Installs *install.Service
	Policy   *policy.Engine
	Registry *registry.Registry
	Audit    AuditLog
	// Changes is the changes queue (the changes page); nil hides it.
	Changes *change.Service
	// SkillFiles is the agents' view of a skill's files (the session
	// manager): a skill's page shows its files through it. Nil: files
	// are listed, not shown.
	SkillFiles SkillFiles
	// Connections are the connections to remote MCP servers (the
	// Connections page); nil: the page says they are not configured.
	Connections Connections
	// PublicURL is the scheme and authority browsers reach the console at
	// (https://gw.example.com), for the callback URL authorization
	// servers send them back to; empty: each request's own (http or
	// https, and its Host header).
	PublicURL string
	// Mirrors are the canonical and mirror skill folders whose drift the
	// overview shows (config mirrors:); compared in the background at
	// most once a minute.
	Mirrors []Mirror
	// IdleTimeout ends a session unused this long; MaxAge ends any
	// session. Zero means the defaults.
	IdleTimeout, MaxAge time.Duration
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Console is the admin console, an http.Handler for Prefix and below.
type Console struct {
	opts  Options
	log   *slog.Logger
	pages map[string]*template.Template
	mux   *router

	mu       sync.Mutex
	sessions map[string]*session
	verified *verification // the last audit verification, nil before one
	drift    *driftCache   // nil without mirrors
}

// verification is the outcome of one verification of the audit log's
// hash chain from the console.
type verification struct {
	At      time.Time
	By      string
	Records int64
	Head    audit.Head
	Err     string
}

type session struct {
	principal capability.Principal
	token     string // the identity of the token it signed in with
	csrf      string
	created   time.Time
	seen      time.Time
}

// New returns the console.
func New(opts Options) (*Console, error) {
	if opts.Verify == nil || opts.Token == nil {
		return nil, errors.New("admin: Options.Verify and Options.Token are required")
	}
	if opts.PublicURL != "" {
		u, err := url.Parse(opts.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("admin: Options.PublicURL %q: want the scheme and host browsers reach the console at, such as https://gw.example.com", opts.PublicURL)
		}
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Console{opts: opts, log: opts.Logger, sessions: map[string]*session{}, mux: &router{ServeMux: http.NewServeMux()}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if len(opts.Mirrors) > 0 {
		c.drift = &driftCache{mirrors: opts.Mirrors, log: c.log, now: opts.Now}
	}
	if err := c.parse(); err != nil {
		return nil, err
	}
	static, _ := fs.Sub(staticFS, "static")
	c.mux.Handle("GET "+Prefix+"/static/", http.StripPrefix(Prefix+"/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET "+Prefix+"/login", c.loginPage)
	c.mux.HandleFunc("POST "+Prefix+"/login", c.login)
	c.mux.Handle("POST "+Prefix+"/logout", c.authed(c.logout))
	c.mux.Handle("GET "+Prefix+"/{$}", c.authed(c.overview))
	c.mux.Handle("GET "+Prefix+"/installs", c.authed(c.installs))
	c.mux.Handle("GET "+Prefix+"/installs/review", c.authed(c.review))
	c.mux.Handle("POST "+Prefix+"/installs/{op}", c.authed(c.installAction))
	c.mux.Handle("GET "+Prefix+"/skills", c.authed(c.skills))
	c.mux.Handle("GET "+Prefix+"/skills/show", c.authed(c.showSkill))
	c.mux.Handle("GET "+Prefix+"/policies", c.authed(c.policies))
	c.mux.Handle("GET "+Prefix+"/grants", c.authed(c.grants))
	c.mux.Handle("POST "+Prefix+"/grants", c.authed(c.addGrant))
	c.mux.Handle("POST "+Prefix+"/grants/revoke", c.authed(c.revokeGrant))
	c.mux.Handle("GET "+Prefix+"/changes", c.authed(c.changesPage))
	c.mux.Handle("GET "+Prefix+"/changes/show", c.authed(c.showChange))
	c.mux.Handle("POST "+Prefix+"/changes/{op}", c.authed(c.changeAction))
	c.mux.Handle("GET "+Prefix+"/connections", c.authed(c.connectionsPage))
	c.mux.Handle("POST "+Prefix+"/connections/{op}", c.authed(c.connectionAction))
	c.mux.HandleFunc("GET "+Prefix+CallbackPath, c.connectionCallback)
	c.mux.Handle("GET "+Prefix+"/audit", c.authed(c.auditPage))
	c.mux.Handle("GET "+Prefix+"/audit.jsonl", c.authed(c.auditExport))
	c.mux.Handle("POST "+Prefix+"/audit/verify", c.authed(c.verifyAudit))
	c.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, Prefix+"/", http.StatusSeeOther) })
	return c, nil
}

// router is the console's ServeMux; it remembers the patterns it serves,
// for [Console.Routes].
type router struct {
	*http.ServeMux
	patterns []string
}

// Handle serves pattern with h and remembers the pattern.
func (m *router) Handle(pattern string, h http.Handler) {
	m.ServeMux.Handle(pattern, h)
	m.patterns = append(m.patterns, pattern)
}

// HandleFunc serves pattern with h and remembers the pattern.
func (m *router) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// Routes returns the ServeMux patterns of every page and action of the
// console, in the order they were added: those of an operator pass
// through the one gate (authed: access capability.AccessOperator, a T0
// token of any tenant); only the sign-in form, the static files, the
// redirect from Prefix and the callback of a connection (authenticated by
// its flow's single-use state) are open. Tests enumerate them, so that a new page
// cannot skip the gate unnoticed.
func (c *Console) Routes() []string { return slices.Clone(c.mux.patterns) }

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

// handler is a page or action of a signed-in operator.
type handler func(w http.ResponseWriter, r *http.Request, s *session)

// authed serves h for a request with a live session; others are sent to
// sign in. Every page and action of an operator passes through it: the
// console's routes all have access capability.AccessOperator (T0 tokens,
// every tenant), decided by capability.Access.Scope as the REST API's
// are. A session is live while it is neither idle nor too old and the
// token it signed in with still stands for its principal and is admitted:
// checked on every request against the current token set, so removing or
// changing the token (skillgate token rm) ends the session at its next
// request, on every replica. A POST must carry the session's CSRF token.
func (c *Console) authed(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, id := c.session(r)
		if s != nil {
			p, ok, err := c.opts.Token(r.Context(), s.token)
			if err != nil {
				c.log.ErrorContext(r.Context(), "admin console: the token set cannot be read", "err", err)
				c.fail(w, r, nil, http.StatusServiceUnavailable, fmt.Errorf("the bearer tokens cannot be read to check this session's: %w", err))
				return
			}
			if !ok || p != s.principal || !admitted(p) {
				c.log.WarnContext(r.Context(), "admin console: session ended: its token was removed or changed", "principal", s.principal.String())
				c.endSession(w, r, id)
				to := Prefix + "/login?ended=token"
				if r.Method == http.MethodGet {
					to += "&next=" + urlQueryEscape(r.URL.RequestURI())
				}
				http.Redirect(w, r, to, http.StatusSeeOther)
				return
			}
		}
		if s == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"/login?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			http.Redirect(w, r, Prefix+"/login?expired=1", http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if err := r.ParseForm(); err != nil {
				c.fail(w, r, s, http.StatusBadRequest, fmt.Errorf("the form could not be read: %v", err))
				return
			}
			if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.csrf)) != 1 {
				c.fail(w, r, s, http.StatusForbidden, errors.New("the form's CSRF token is missing or wrong: reload the page and submit it again"))
				return
			}
		}
		h(w, r, s)
	})
}

// session returns the live session of r's cookie and its id, or nil; using
// it extends its idle time.
func (c *Console) session(r *http.Request) (*session, string) {
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return nil, ""
	}
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[ck.Value]
	if s == nil {
		return nil, ""
	}
	if now.Sub(s.seen) > c.opts.IdleTimeout || now.Sub(s.created) > c.opts.MaxAge {
		delete(c.sessions, ck.Value)
		return nil, ""
	}
	s.seen = now
	return s, ck.Value
}

// endSession forgets the session id and clears its cookie.
func (c *Console) endSession(w http.ResponseWriter, r *http.Request, id string) {
	c.mu.Lock()
	delete(c.sessions, id)
	c.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: Prefix, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	msg := ""
	switch {
	case r.URL.Query().Get("ended") == "token":
		msg = "Your session ended: the token it was signed in with was removed or changed. Sign in again with a current T0 token."
	case r.URL.Query().Get("expired") != "":
		msg = "Your session ended. Sign in again."
	}
	c.render(w, r, nil, http.StatusOK, "login", map[string]any{"Error": msg, "Next": safeNext(r.URL.Query().Get("next"))})
}

// login exchanges an admin (T0) token for a session.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		c.render(w, r, nil, http.StatusBadRequest, "login", map[string]any{"Error": "The form could not be read."})
		return
	}
	next := safeNext(r.PostFormValue("next"))
	tokenID, p, ok := c.opts.Verify(strings.TrimSpace(r.PostFormValue("token")))
	switch {
	case !ok:
		c.log.WarnContext(r.Context(), "admin console: sign-in with an unknown token", "remote", r.RemoteAddr)
		c.render(w, r, nil, http.StatusUnauthorized, "login", map[string]any{"Error": "That token is unknown. Create one with: skillgate token add --tier T0 …", "Next": next})
		return
	case !admitted(p):
		c.log.WarnContext(r.Context(), "admin console: sign-in refused for a non-admin token", "principal", p.String(), "tier", p.Tier)
		c.render(w, r, nil, http.StatusForbidden, "login", map[string]any{"Error": fmt.Sprintf("The console is for operators: this token is of tier %s; sign in with a T0 token.", p.Tier), "Next": next})
		return
	}
	id, csrf := randomToken(), randomToken()
	now := c.opts.Now()
	c.mu.Lock()
	c.sessions[id] = &session{principal: p, token: tokenID, csrf: csrf, created: now, seen: now}
	c.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: Prefix, HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(c.opts.MaxAge.Seconds())})
	c.log.InfoContext(r.Context(), "admin console: signed in", "principal", p.String())
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if ck, err := r.Cookie(CookieName); err == nil {
		c.endSession(w, r, ck.Value)
	}
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
}

// admitted reports whether p may use the console: the access of its
// every page, capability.AccessOperator.
func admitted(p capability.Principal) bool {
	_, err := capability.AccessOperator.Scope(p)
	return err == nil
}

// actor is who the audit log records for s's actions: the operator, as
// the REST API names them.
func (s *session) actor() string { return "operator:" + s.principal.String() }

func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// safeNext keeps a redirect target inside the console.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix+"/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Prefix + "/"
	}
	return next
}
