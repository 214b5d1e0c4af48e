package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// Connections is what the Connections page does with connections
// (issue 34); *connection.Service implements it. Every change names the
// operator who makes it (actor), for the audit log.
type Connections interface {
	// List returns every connection without its secrets.
	List(ctx context.Context) ([]credential.ConnectionInfo, error)
	// Start starts connecting k and returns the authorization URL the
	// operator's browser opens; the authorization server sends it back to
	// redirectURI.
	Start(ctx context.Context, k credential.ConnectionKey, redirectURI string, makeDefault bool, actor string) (authURL string, err error)
	// Complete finishes the authorization a callback's query answers.
	Complete(ctx context.Context, callback url.Values) (credential.ConnectionInfo, error)
	// Rename gives k the account label account.
	Rename(ctx context.Context, k credential.ConnectionKey, account, actor string) error
	// SetDefault makes k its scope's default account for its provider.
	SetDefault(ctx context.Context, k credential.ConnectionKey, actor string) error
	// Revoke revokes k's grant, then forgets k or marks it revoked.
	Revoke(ctx context.Context, k credential.ConnectionKey, forget bool, actor string) error
}

var _ Connections = (*connection.Service)(nil)

// CallbackPath is where authorization servers send the operator's
// browser back to, under Prefix.
const CallbackPath = "/connections/callback"

// errNoConnections is the answer to a connection action on a server
// without connections.
var errNoConnections = errors.New("connections are not configured on this server: skillgate serve needs a credential store (skillgate credential init)")

// connStatus is the HTTP status of a connection error.
func connStatus(err error) int {
	switch {
	case errors.Is(err, credential.ErrInvalidScope), errors.Is(err, credential.ErrInvalidConnection),
		errors.Is(err, connection.ErrNoServer), errors.Is(err, connection.ErrUnknownFlow):
		return http.StatusBadRequest
	case errors.Is(err, credential.ErrNoConnection):
		return http.StatusNotFound
	case errors.Is(err, credential.ErrConnectionExists):
		return http.StatusConflict
	case errors.Is(err, oauth.ErrAuthorization):
		return http.StatusForbidden
	case errors.Is(err, oauth.ErrDiscovery), errors.Is(err, oauth.ErrRegistration), errors.Is(err, oauth.ErrTokenEndpoint),
		errors.Is(err, oauth.ErrRevocation), errors.Is(err, oauth.ErrMalformedResponse), errors.Is(err, oauth.ErrResponseTooLarge),
		errors.Is(err, oauth.ErrTimeout), errors.Is(err, oauth.ErrForbiddenRedirect), errors.Is(err, oauth.ErrForbiddenAddress),
		errors.Is(err, oauth.ErrInvalidURL):
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

func (c *Console) connectionsPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderConnections(w, r, s, http.StatusOK, "")
}

// renderConnections shows the connections and the forms, with problem
// above them (and the connect form filled as it was posted).
func (c *Console) renderConnections(w http.ResponseWriter, r *http.Request, s *session, status int, problem string) {
	data := map[string]any{"Problem": problem, "Form": r.PostForm}
	if c.opts.Connections == nil {
		data["Off"] = errNoConnections.Error()
		c.render(w, r, s, status, "connections", data)
		return
	}
	list, err := c.opts.Connections.List(r.Context())
	if err != nil {
		c.fail(w, r, s, http.StatusInternalServerError, err)
		return
	}
	data["Connections"] = list
	c.render(w, r, s, status, "connections", data)
}

// formKey reads a connection's key from a form: tenant, agent, provider
// and account, each checked.
func formKey(form url.Values) (credential.ConnectionKey, error) {
	k := credential.ConnectionKey{Scope: credential.Scope{Tenant: strings.TrimSpace(form.Get("tenant")), Agent: strings.TrimSpace(form.Get("agent"))},
		Provider: strings.TrimSpace(form.Get("provider")), Account: strings.TrimSpace(form.Get("account"))}
	return k, k.Check()
}

// redirectURI is the callback the authorization server sends the browser
// back to: Options.PublicURL, or the scheme and host r reached the
// console with, then Prefix and CallbackPath.
func (c *Console) redirectURI(r *http.Request) string {
	base := strings.TrimSuffix(c.opts.PublicURL, "/")
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + Prefix + CallbackPath
}

// connectionAction runs one form of the Connections page: connect,
// rename, default or revoke.
func (c *Console) connectionAction(w http.ResponseWriter, r *http.Request, s *session) {
	if c.opts.Connections == nil {
		c.fail(w, r, s, http.StatusNotFound, errNoConnections)
		return
	}
	op := r.PathValue("op")
	if op == "connect" && strings.TrimSpace(r.PostForm.Get("account")) == "" {
		r.PostForm.Set("account", "default")
	}
	k, err := formKey(r.PostForm)
	if err != nil {
		c.renderConnections(w, r, s, http.StatusBadRequest, err.Error())
		return
	}
	ctx, svc, actor := r.Context(), c.opts.Connections, s.actor()
	var done string
	switch op {
	case "connect":
		c.connect(w, r, s, k)
		return
	case "rename":
		to := strings.TrimSpace(r.PostForm.Get("to"))
		if err = credential.CheckAccount(to); err == nil {
			err = svc.Rename(ctx, k, to, actor)
		}
		done = fmt.Sprintf("Renamed %s to %s.", k, to)
	case "default":
		err = svc.SetDefault(ctx, k, actor)
		done = fmt.Sprintf("%s is the default.", k)
	case "revoke":
		forget := r.PostForm.Get("forget") != ""
		err = svc.Revoke(ctx, k, forget, actor)
		done = fmt.Sprintf("Revoked %s.", k)
		if forget {
			done = fmt.Sprintf("Revoked and forgot %s.", k)
		}
	default:
		c.fail(w, r, s, http.StatusNotFound, fmt.Errorf("unknown operation %q", op))
		return
	}
	if err != nil {
		c.renderConnections(w, r, s, connStatus(err), err.Error())
		return
	}
	c.log.InfoContext(ctx, "admin console: connection changed", "op", op, "connection", k.String(), "by", actor)
	http.Redirect(w, r, Prefix+"/connections?done="+url.QueryEscape(done), http.StatusSeeOther)
}

// connect starts connecting k and sends the browser to the authorization
// server. It answers with a page that continues there (a refresh, and a
// link) rather than a redirect: the console's Content-Security-Policy
// (form-action 'self') forbids a form's submission to end on another
// origin, and browsers enforce it on the redirects that follow it.
func (c *Console) connect(w http.ResponseWriter, r *http.Request, s *session, k credential.ConnectionKey) {
	authURL, err := c.opts.Connections.Start(r.Context(), k, c.redirectURI(r), r.PostForm.Get("default") != "", s.actor())
	if err != nil {
		c.renderConnections(w, r, s, connStatus(err), err.Error())
		return
	}
	u, err := url.Parse(authURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		c.fail(w, r, s, http.StatusBadGateway, fmt.Errorf("connect %s: the authorization URL is not an http(s) URL", k))
		return
	}
	c.log.InfoContext(r.Context(), "admin console: connection started", "connection", k.String(), "by", s.actor(), "authorization_server", u.Host)
	c.render(w, r, s, http.StatusOK, "authorize", map[string]any{"Key": k, "URL": urlOf(authURL), "Host": u.Host,
		"Refresh": "0; url=" + authURL})
}

// connectionCallback is where the authorization server sends the
// operator's browser back. It needs no session (the session cookie is
// SameSite=Strict, so a browser does not send it on this cross-site
// navigation): the flow's single-use state authenticates it. It answers
// with a page that continues to the Connections page, which the browser
// then requests from the console's own page, with the session cookie.
func (c *Console) connectionCallback(w http.ResponseWriter, r *http.Request) {
	if c.opts.Connections == nil {
		c.fail(w, r, nil, http.StatusNotFound, errNoConnections)
		return
	}
	info, err := c.opts.Connections.Complete(r.Context(), r.URL.Query())
	if err != nil {
		c.log.WarnContext(r.Context(), "admin console: connection callback refused", "err", err)
		c.fail(w, r, nil, connStatus(err), err)
		return
	}
	msg := "Connected " + info.Provider + " account " + info.Account + " for " + info.Scope.String() + "."
	to := Prefix + "/connections?" + url.Values{"done": {msg}}.Encode()
	c.render(w, r, nil, http.StatusOK, "connected", map[string]any{"Message": msg, "To": urlOf(to), "Refresh": "0; url=" + to})
}
