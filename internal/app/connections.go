package app

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// ConfigConnections is the connections section of config.yaml: how
// skillgate reaches the authorization servers of remote MCP servers
// (docs/connections.md).
type ConfigConnections struct {
	// Timeout bounds one outbound OAuth request (discovery, registration,
	// token, revocation), its body included ("10s" when empty).
	Timeout string `yaml:"timeout"`
	// AllowPrivateNetworks lets OAuth requests reach loopback, private
	// and link-local addresses. For tests and labs only.
	AllowPrivateNetworks bool `yaml:"allow_private_networks"`
	// AllowInsecureHTTP lets OAuth endpoints use http instead of https.
	// For tests and labs only.
	AllowInsecureHTTP bool `yaml:"allow_insecure_http"`
	// RefreshLead is how long before its expiry serve refreshes an
	// access token ("2m" when empty), plus a stable per-connection jitter
	// of up to a quarter of it (at most 30s).
	RefreshLead string `yaml:"refresh_lead"`
	// RefreshInterval is how often serve looks for grants due for a
	// refresh ("15s" when empty).
	RefreshInterval string `yaml:"refresh_interval"`
	// Clients are configured OAuth clients by provider (the remote
	// server's ID), for authorization servers that offer no dynamic
	// client registration; a provider without one registers a client.
	Clients map[string]ConfigOAuthClient `yaml:"clients"`
}

// ConfigOAuthClient is one configured OAuth client. Its secret is never
// in the file: ClientSecretEnv names the variable of skillgate's
// environment that holds it.
type ConfigOAuthClient struct {
	// ClientID is the client identifier the authorization server issued.
	ClientID string `yaml:"client_id"`
	// ClientSecretEnv names the environment variable holding the client
	// secret; empty for a public client (PKCE only).
	ClientSecretEnv string `yaml:"client_secret_env"`
}

// timeout is the configured request timeout, or the oauth package's
// default.
func (c ConfigConnections) timeout() (time.Duration, error) {
	if c.Timeout == "" {
		return oauth.DefaultTimeout, nil
	}
	d, err := time.ParseDuration(c.Timeout)
	if err != nil || d <= 0 || d > 10*time.Minute {
		return 0, fmt.Errorf("connections.timeout: %q: use a duration from 1s to 10m, such as 10s", c.Timeout)
	}
	return d, nil
}

// refreshOptions are the Refresher's lead, jitter and scan interval the
// section configures: the connection package's defaults when unset, and
// a jitter of a quarter of the lead (at most the default jitter) when the
// lead is set.
func (c ConfigConnections) refreshOptions() (lead, jitter, interval time.Duration, err error) {
	if c.RefreshLead != "" {
		lead, err = time.ParseDuration(c.RefreshLead)
		if err != nil || lead < time.Second || lead > 24*time.Hour {
			return 0, 0, 0, fmt.Errorf("connections.refresh_lead: %q: use a duration from 1s to 24h, such as 2m", clipText(c.RefreshLead))
		}
		jitter = min(lead/4, connection.DefaultJitter)
	}
	if c.RefreshInterval != "" {
		interval, err = time.ParseDuration(c.RefreshInterval)
		if err != nil || interval < 100*time.Millisecond || interval > time.Hour {
			return 0, 0, 0, fmt.Errorf("connections.refresh_interval: %q: use a duration from 100ms to 1h, such as 15s", clipText(c.RefreshInterval))
		}
	}
	return lead, jitter, interval, nil
}

// check validates the section; each error names its field.
func (c ConfigConnections) check() []error {
	var errs []error
	if _, err := c.timeout(); err != nil {
		errs = append(errs, err)
	}
	if c.RefreshLead != "" {
		if _, _, _, err := (ConfigConnections{RefreshLead: c.RefreshLead}).refreshOptions(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.RefreshInterval != "" {
		if _, _, _, err := (ConfigConnections{RefreshInterval: c.RefreshInterval}).refreshOptions(); err != nil {
			errs = append(errs, err)
		}
	}
	providers := make([]string, 0, len(c.Clients))
	for p := range c.Clients {
		providers = append(providers, p)
	}
	slices.Sort(providers)
	for _, p := range providers {
		at := "connections.clients." + p
		if err := credential.CheckProvider(p); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			continue
		}
		cl := c.Clients[p]
		if cl.ClientID == "" || len(cl.ClientID) > credential.MaxClientIDBytes || !utf8.ValidString(cl.ClientID) ||
			strings.IndexFunc(cl.ClientID, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
			errs = append(errs, fmt.Errorf("%s.client_id: required, 1 to %d bytes without control characters (the id the authorization server issued)", at, credential.MaxClientIDBytes))
		}
		if cl.ClientSecretEnv != "" {
			if err := credential.CheckName(cl.ClientSecretEnv); err != nil {
				// The value is not quoted: it may be a secret pasted in.
				errs = append(errs, fmt.Errorf("%s.client_secret_env: not a variable name: name the environment variable (upper-case letters, digits and '_') that holds the secret, never the secret itself", at))
			}
		}
	}
	return errs
}

// clipText cuts s to 64 bytes for a message.
func clipText(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// OAuthClient returns the OAuth client connections use, with the bounds
// and allowances of the configuration's connections section, logging to
// the App's logger (never a token). A configuration that cannot be read
// is a usage error.
func (a *App) OAuthClient() (*oauth.Client, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	d, err := cfg.Connections.timeout()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	return oauth.New(&oauth.Options{
		Timeout:              d,
		AllowPrivateNetworks: cfg.Connections.AllowPrivateNetworks,
		AllowInsecureHTTP:    cfg.Connections.AllowInsecureHTTP,
		Logger:               a.log,
	}), nil
}

// OAuthRegistration returns the OAuth client configured for provider
// (connections.clients), its secret read from the environment variable
// client_secret_env names; nil when none is configured, so that the
// connection registers one dynamically. A named variable that is unset
// or empty is an error naming it.
func (a *App) OAuthRegistration(provider string) (*oauth.Registration, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	cl, ok := cfg.Connections.Clients[provider]
	if !ok {
		return nil, nil
	}
	secret := ""
	if cl.ClientSecretEnv != "" {
		if secret = a.getenv(cl.ClientSecretEnv); secret == "" {
			return nil, fmt.Errorf("connections.clients.%s.client_secret_env names %s, which is not set in skillgate's environment: export it, or remove client_secret_env for a public client", provider, cl.ClientSecretEnv)
		}
	}
	reg := oauth.StaticRegistration(cl.ClientID, secret)
	return &reg, nil
}

// connectionService is the connection service of one CLI command: over
// the credential store and the metadata store (whose audit log records
// each change in the name of [App.Actor]), making connections whose
// authorizations wait at most ttl (connection.DefaultFlowTTL when zero)
// and revoking them at their authorization servers. close closes the
// metadata store.
func (a *App) connectionService(ctx context.Context, ttl time.Duration) (svc *connection.Service, closeDB func(), err error) {
	client, err := a.OAuthClient()
	if err != nil {
		return nil, nil, err
	}
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	st, err := a.OpenCredentials(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	conn := connection.NewConnector(client, st, &connection.ConnectorOptions{TTL: ttl, Logger: a.log})
	svc = connection.NewService(st, conn, connection.New(st, client, &connection.Options{Logger: a.log}), nil, &connection.ServiceOptions{
		Audit: audit.NewLog(db), Logger: a.log, Client: a.OAuthRegistration,
	})
	return svc, func() { db.Close() }, nil
}

// remoteServer is one remote server a skill declares.
type remoteServer struct{ skill, url, shown string }

// ProviderURL returns the URL of the remote (streamable HTTP) server
// whose mcp.json ID is provider, among the servers of the enabled
// imported skills and of the first_party skills. It fails when none
// declares one, and when several declare different URLs (the message
// lists them: pass --url to choose). It opens the metadata store for the
// lookup; a running gateway asks its [Runtime.ProviderURL] instead.
func (a *App) ProviderURL(ctx context.Context, provider string) (string, error) {
	if err := credential.CheckProvider(provider); err != nil {
		return "", Usagef("%v", err)
	}
	db, err := a.OpenStore(ctx)
	if err != nil {
		return "", err
	}
	defer db.Close()
	svc, err := a.newInstallService(db, nil, nil, nil)
	if err != nil {
		return "", err
	}
	return providerURL(ctx, svc, registry.New(db, registry.Options{Logger: a.log}), provider)
}

// ProviderURL is [App.ProviderURL] over the runtime's own install
// service and registry: the resolver `serve` gives the console's
// connections.
func (d *Runtime) ProviderURL(ctx context.Context, provider string) (string, error) {
	if err := credential.CheckProvider(provider); err != nil {
		return "", Usagef("%v", err)
	}
	return providerURL(ctx, d.Installs, d.Registry, provider)
}

// providerURL finds provider's remote server among the enabled installs
// of svc and the first_party skills of fp.
func providerURL(ctx context.Context, svc *install.Service, fp broker.FirstPartySource, provider string) (string, error) {
	enabled, err := svc.Enabled(ctx)
	if err != nil {
		return "", err
	}
	var found []remoteServer
	for _, in := range enabled {
		if d, ok := in.Config.Server(provider); ok && d.Transport == capability.TransportHTTP {
			found = append(found, remoteServer{skill: in.Key, url: d.URL, shown: d.Redacted().URL})
		}
	}
	load, err := broker.ReadFirstParty(ctx, fp)
	if err != nil {
		return "", err
	}
	for _, s := range load.Skills {
		if d, ok := s.Servers[provider]; ok && d.Transport == capability.TransportHTTP {
			found = append(found, remoteServer{skill: s.Key, url: d.URL, shown: d.Redacted().URL})
		}
	}
	return pickProviderURL(provider, found)
}

// pickProviderURL is the one URL among found, or the error saying why
// there is none.
func pickProviderURL(provider string, found []remoteServer) (string, error) {
	if len(found) == 0 {
		return "", fmt.Errorf("no enabled skill declares a remote server %q: a provider is the mcp.json ID of a server with a url; see a skill's servers with 'skillgate review SKILL', or give the server's URL with --url", provider)
	}
	slices.SortFunc(found, func(x, y remoteServer) int { return strings.Compare(x.skill, y.skill) })
	var urls []string
	for _, f := range found {
		if !slices.Contains(urls, f.url) {
			urls = append(urls, f.url)
		}
	}
	if len(urls) == 1 {
		return urls[0], nil
	}
	lines := make([]string, len(found))
	for i, f := range found {
		lines[i] = "  " + f.skill + ": " + f.shown
	}
	return "", fmt.Errorf("remote server %q has %d different URLs:\n%s\npass --url URL to choose one", provider, len(urls), strings.Join(lines, "\n"))
}

// CheckConnectionKey checks a connection key given on the command line:
// a usage error when its tenant, agent, provider or account is malformed.
func CheckConnectionKey(k credential.ConnectionKey) error {
	if err := k.Check(); err != nil {
		return Usagef("%w", err)
	}
	return nil
}

// ConnectRequest is one connection `skillgate connect` makes.
type ConnectRequest struct {
	// Key is the connection: scope, provider, account.
	Key credential.ConnectionKey
	// URL is the remote server's URL; empty finds it with ProviderURL.
	URL string
	// Scopes to request; nil means what discovery found.
	Scopes []string
	// Default makes the connection its scope's default for the provider.
	Default bool
	// Wait bounds the wait for the browser's callback
	// (connection.DefaultFlowTTL when zero).
	Wait time.Duration
	// Open is called with the authorization URL once the callback
	// listener waits: it shows the URL to the human (and may open a
	// browser). The URL is for the operator's eyes only.
	Open func(authURL string)
}

// callbackPath is the path of the loopback callback.
const callbackPath = "/callback"

// Connect makes a connection with the OAuth authorization code flow and
// a loopback callback: it listens on 127.0.0.1 (a port the system picks,
// path /callback), starts the authorization with that redirect URI,
// hands the URL to req.Open, and waits for the browser to come back
// (answering it with a small page), for req.Wait, or for ctx. It returns
// the stored connection without its secrets, audited as
// connection.connect in the name of [App.Actor]. Bad input is a usage
// error; a denied consent, a failed exchange and a timeout are errors.
func (a *App) Connect(ctx context.Context, req ConnectRequest) (credential.ConnectionInfo, error) {
	if err := CheckConnectionKey(req.Key); err != nil {
		return credential.ConnectionInfo{}, err
	}
	if req.Wait <= 0 {
		req.Wait = connection.DefaultFlowTTL
	}
	serverURL := req.URL
	if serverURL == "" {
		u, err := a.ProviderURL(ctx, req.Key.Provider)
		if err != nil {
			return credential.ConnectionInfo{}, err
		}
		serverURL = u
	} else if u, err := url.Parse(serverURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return credential.ConnectionInfo{}, Usagef("--url %q: give the remote MCP server's http(s) URL, without user info", clipText(serverURL))
	}
	svc, closeDB, err := a.connectionService(ctx, req.Wait)
	if err != nil {
		return credential.ConnectionInfo{}, err
	}
	defer closeDB()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return credential.ConnectionInfo{}, fmt.Errorf("listening for the callback on 127.0.0.1: %w", err)
	}
	defer ln.Close()
	authURL, err := svc.StartWith(ctx, connection.ConnectRequest{
		Key: req.Key, ServerURL: serverURL, RedirectURI: "http://" + ln.Addr().String() + callbackPath,
		Scopes: req.Scopes, Default: req.Default,
	}, a.Actor())
	if err != nil {
		return credential.ConnectionInfo{}, err
	}

	type result struct {
		info credential.ConnectionInfo
		err  error
	}
	done := make(chan result, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+callbackPath, func(w http.ResponseWriter, r *http.Request) {
		info, err := svc.Complete(ctx, r.URL.Query())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
		}
		_ = callbackPage.Execute(w, callbackView{Info: info, Err: err})
		if errors.Is(err, connection.ErrUnknownFlow) {
			return // a stray or forged request: keep waiting for the real one
		}
		select {
		case done <- result{info, err}:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if req.Open != nil {
		req.Open(authURL)
	}
	timer := time.NewTimer(req.Wait)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.info, r.err
	case <-timer.C:
		return credential.ConnectionInfo{}, fmt.Errorf("connect %s: no answer from the browser within %s: open the URL and allow access, or run connect again (with a longer --timeout)", req.Key, req.Wait)
	case <-ctx.Done():
		return credential.ConnectionInfo{}, fmt.Errorf("connect %s: %w", req.Key, ctx.Err())
	}
}

// callbackView is what the loopback callback page shows.
type callbackView struct {
	Info credential.ConnectionInfo
	Err  error
}

// callbackPage answers the browser at the loopback callback.
var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>skillgate</title></head>
<body>{{if .Err}}<h1>Connection failed</h1><p>{{.Err}}</p>
{{else}}<h1>Connected; you can close this tab</h1><p>{{.Info.ConnectionKey}}</p>
{{end}}</body></html>
`))

// OpenBrowser asks the desktop to open u (xdg-open) without waiting for
// it; it reports whether the opener could be started.
func OpenBrowser(u string) bool {
	cmd := exec.Command("xdg-open", u)
	if err := cmd.Start(); err != nil {
		return false
	}
	go func() { _ = cmd.Wait() }()
	return true
}

// Connections lists the connections without their secrets, only
// tenant's when tenant is not empty; never nil.
func (a *App) Connections(ctx context.Context, tenant string) ([]credential.ConnectionInfo, error) {
	st, err := a.OpenCredentials(ctx)
	if err != nil {
		return nil, err
	}
	all, err := st.Connections(ctx)
	if err != nil {
		return nil, err
	}
	list := []credential.ConnectionInfo{}
	for _, c := range all {
		if tenant == "" || c.Tenant == tenant {
			list = append(list, c)
		}
	}
	return list, nil
}

// RenameConnection gives the connection k the account label account
// (audited as connection.rename).
func (a *App) RenameConnection(ctx context.Context, k credential.ConnectionKey, account string) error {
	if err := CheckConnectionKey(k); err != nil {
		return err
	}
	if err := credential.CheckAccount(account); err != nil {
		return Usagef("%v", err)
	}
	svc, closeDB, err := a.connectionService(ctx, 0)
	if err != nil {
		return err
	}
	defer closeDB()
	return svc.Rename(ctx, k, account, a.Actor())
}

// SetDefaultConnection makes k its scope's default account for its
// provider (audited as connection.default).
func (a *App) SetDefaultConnection(ctx context.Context, k credential.ConnectionKey) error {
	if err := CheckConnectionKey(k); err != nil {
		return err
	}
	svc, closeDB, err := a.connectionService(ctx, 0)
	if err != nil {
		return err
	}
	defer closeDB()
	return svc.SetDefault(ctx, k, a.Actor())
}

// RevokeConnection revokes k's grant at its authorization server when the
// server offers revocation, then removes the connection (forget) or
// marks it revoked (connection.Refresher.Revoke). When the server refuses
// or cannot be reached the connection is left as it was. Audited as
// connection.revoke.
func (a *App) RevokeConnection(ctx context.Context, k credential.ConnectionKey, forget bool) error {
	if err := CheckConnectionKey(k); err != nil {
		return err
	}
	svc, closeDB, err := a.connectionService(ctx, 0)
	if err != nil {
		return err
	}
	defer closeDB()
	return svc.Revoke(ctx, k, forget, a.Actor())
}

// RemoveConnection deletes the connection k without revoking its grant
// (for a server that cannot be reached; revoke --forget revokes first),
// audited as connection.remove.
func (a *App) RemoveConnection(ctx context.Context, k credential.ConnectionKey) error {
	if err := CheckConnectionKey(k); err != nil {
		return err
	}
	svc, closeDB, err := a.connectionService(ctx, 0)
	if err != nil {
		return err
	}
	defer closeDB()
	return svc.Remove(ctx, k, a.Actor())
}

// WriteConnectionTable writes connections as a table: TENANT AGENT
// PROVIDER ACCOUNT KIND STATE DEFAULT EXPIRES REFRESHED ("*" for a
// tenant-wide connection, "-" for an unknown time), never a secret.
func WriteConnectionTable(w io.Writer, list []credential.ConnectionInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tAGENT\tPROVIDER\tACCOUNT\tKIND\tSTATE\tDEFAULT\tEXPIRES\tREFRESHED")
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, c := range list {
		agent, def := c.Agent, "no"
		if agent == "" {
			agent = "*"
		}
		if c.Default {
			def = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Tenant, agent, c.Provider, c.Account, c.Kind, c.State, def, at(c.Expiry), at(c.Refreshed))
	}
	return tw.Flush()
}

// startConnections makes the connection service a server's console uses,
// and refreshes the store's OAuth grants before they expire until ctx
// ends or the returned stop is called. A grant found dead makes the
// capability path re-read the registry, so that the backends it served go
// dormant at once (their agents get tools/list_changed); a refreshed or a
// new connection is seen through the credential store's generation.
func (a *App) startConnections(ctx context.Context, d *Runtime) (*connection.Service, func(), error) {
	client, err := a.OAuthClient()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := a.Config()
	if err != nil {
		return nil, nil, Usagef("%v", err)
	}
	lead, jitter, interval, err := cfg.Connections.refreshOptions()
	if err != nil {
		return nil, nil, Usagef("%v", err)
	}
	var svc *connection.Service
	refresher := connection.New(d.Credentials, client, &connection.Options{Logger: d.Log,
		Lead: lead, Jitter: jitter, Interval: interval,
		OnExpired: func(ctx context.Context, k credential.ConnectionKey) {
			d.Caps.Refresh()
			_ = svc.Expired(ctx, k, "system") // a failure is logged by Expired
		}})
	conn := connection.NewConnector(client, d.Credentials, &connection.ConnectorOptions{Logger: d.Log})
	svc = connection.NewService(d.Credentials, conn, refresher, d.ProviderURL, &connection.ServiceOptions{
		Audit: audit.NewLog(d.DB), Logger: d.Log,
		Client: a.OAuthRegistration,
	})
	d.refresher.Store(refresher) // svc is set: a 401 may now refresh
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = refresher.Run(rctx)
	}()
	return svc, func() { cancel(); <-done }, nil
}
