package credential

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

var _ mcpclient.Bearers = (*Store)(nil)

// ProviderOf is the provider a remote server's connections are made to:
// its mcp.json server ID, lower-cased. ok is false for an ID that is no
// provider name (then the server is never sent a connection's token).
func ProviderOf(serverID string) (string, bool) {
	p := strings.ToLower(serverID)
	return p, CheckProvider(p) == nil
}

// Bearer returns the access token who's calls to the remote server d
// carry: who's connection to d's provider (pinned by account, else the
// agent's default, else the tenant's), when it is active and its grant
// was issued for d's URL. A server to which no scope holds a connection
// for that URL is called without a token (""); otherwise a principal
// without a usable connection gets an error wrapping
// [mcpclient.ErrConnectionRequired] that says which and how to connect,
// never an authorization URL. It reads the in-memory snapshot only.
func (s *Store) Bearer(who capability.Principal, d mcpclient.ServerDecl, account string) (string, error) {
	c, _, err := s.usable(who, d, account)
	if err != nil || c == nil {
		return "", err
	}
	if c.OAuth == nil {
		return c.Secret, nil
	}
	return c.OAuth.AccessToken, nil
}

// usable returns the connection who's calls to d use with the account
// pin, and its provider: nil and no error when d is called without one,
// an error wrapping ErrConnectionRequired when who lacks a usable one.
func (s *Store) usable(who capability.Principal, d mcpclient.ServerDecl, account string) (*Connection, string, error) {
	if !mcpclient.BearerTarget(d) { // a stdio server, or its own Authorization header
		return nil, "", nil
	}
	provider, ok := ProviderOf(d.ID)
	if !ok {
		return nil, "", nil
	}
	info, err := s.ResolveConnection(who, provider, account)
	if err != nil {
		switch {
		case !errors.Is(err, ErrNoConnection):
			return nil, "", required(who, provider, err.Error())
		case account != "":
			return nil, "", required(who, provider, fmt.Sprintf("account %s is not connected; an operator connects it with skillgate connect %s --tenant %s --account %s",
				account, provider, who.Tenant, account))
		case !s.connected(provider, d.URL):
			return nil, "", nil
		}
		return nil, "", required(who, provider, fmt.Sprintf("no account is connected; an operator connects one with skillgate connect %s --tenant %s", provider, who.Tenant))
	}
	c := s.snap.Load().c.conns[info.ConnectionKey]
	switch {
	case c.State != StateActive:
		return nil, "", required(who, provider, fmt.Sprintf("account %s is %s; an operator reconnects it with skillgate connect %s --tenant %s --account %s",
			c.Account, c.State, provider, who.Tenant, c.Account))
	case c.OAuth != nil && !sameResource(c.OAuth.Resource, d.URL):
		return nil, "", required(who, provider, fmt.Sprintf("account %s was authorized for %s, not for the server at %s; connect it to this server",
			c.Account, c.OAuth.Resource, d.URL))
	}
	return &c, provider, nil
}

// required wraps why in ErrConnectionRequired with the provider and tenant.
func required(who capability.Principal, provider, why string) error {
	return &mcpclient.ConnectionRequiredError{Provider: provider, Tenant: who.Tenant, Why: why}
}

// connected reports whether any scope holds an OAuth connection to
// provider issued for url: then the server needs one.
func (s *Store) connected(provider, url string) bool {
	return s.snap.Load().c.index().resources[provider][strings.TrimSuffix(url, "/")]
}

// sameResource compares a grant's resource with a server URL, ignoring a
// trailing slash.
func sameResource(resource, url string) bool {
	return resource != "" && strings.TrimSuffix(resource, "/") == strings.TrimSuffix(url, "/")
}

// Use returns the provider and account of who's connection that calls
// to the remote server d use, pinned by pin or else the default: what
// the audit record names and Cedar sees as context.account. It is the
// zero ConnectionUse when d is reached without a connection, and fails
// as [Store.Bearer] does when who lacks a usable one.
func (s *Store) Use(who capability.Principal, d mcpclient.ServerDecl, pin string) (mcpclient.ConnectionUse, error) {
	c, provider, err := s.usable(who, d, pin)
	if err != nil || c == nil {
		return mcpclient.ConnectionUse{}, err
	}
	return mcpclient.ConnectionUse{Provider: provider, Tenant: who.Tenant, Account: c.Account}, nil
}

// connIndex answers the broker's per-call questions about connections
// without a scan: each scope's default account of each provider, and the
// servers (resources) each provider's OAuth connections were issued for.
type connIndex struct {
	defaults  map[providerKey]ConnectionKey
	resources map[string]map[string]bool // provider → resource without its trailing slash
}

// index returns t's index, building it on first use.
func (t *contents) index() *connIndex {
	t.idxOnce.Do(func() {
		x := &connIndex{defaults: map[providerKey]ConnectionKey{}, resources: map[string]map[string]bool{}}
		for k, c := range t.conns {
			if c.Default {
				x.defaults[providerKey{k.Scope, k.Provider}] = k
			}
			if c.OAuth != nil && c.OAuth.Resource != "" {
				if x.resources[k.Provider] == nil {
					x.resources[k.Provider] = map[string]bool{}
				}
				x.resources[k.Provider][strings.TrimSuffix(c.OAuth.Resource, "/")] = true
			}
		}
		t.idx = x
	})
	return t.idx
}
