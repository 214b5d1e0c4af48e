package credential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/upstream/oauth"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// formatVersion is the version of the decrypted store document written.
// Version 1 (credentials only) is still read.
const formatVersion = 2

// maxDocumentDepth bounds the nesting of a store document:
// document → connections → connection → oauth → scopes.
const maxDocumentDepth = 6

// document is the decrypted store:
// {"version":2,"credentials":[…],"connections":[…]}.
type document struct {
	Version     int                `json:"version"`
	Credentials []storedEntry      `json:"credentials"`
	Connections []storedConnection `json:"connections,omitempty"`
}

// storedEntry is one entry as kept in the decrypted document.
type storedEntry struct {
	Name   string `json:"name"`
	Tenant string `json:"tenant"`
	Agent  string `json:"agent,omitempty"`
	Value  string `json:"value"`
}

// storedConnection is one connection as kept in the decrypted document.
type storedConnection struct {
	Tenant    string       `json:"tenant"`
	Agent     string       `json:"agent,omitempty"`
	Provider  string       `json:"provider"`
	Account   string       `json:"account"`
	Default   bool         `json:"default,omitempty"`
	State     string       `json:"state"`
	Created   time.Time    `json:"created"`
	Refreshed time.Time    `json:"refreshed,omitzero"`
	LastError string       `json:"last_error,omitempty"`
	Secret    string       `json:"secret,omitempty"`
	OAuth     *storedGrant `json:"oauth,omitempty"`
}

// storedGrant is an OAuth grant as kept in the decrypted document.
type storedGrant struct {
	AccessToken        string    `json:"access_token"`
	RefreshToken       string    `json:"refresh_token,omitempty"`
	TokenType          string    `json:"token_type"`
	Expiry             time.Time `json:"expiry,omitzero"`
	Scopes             []string  `json:"scopes,omitempty"`
	Issuer             string    `json:"issuer,omitempty"`
	TokenEndpoint      string    `json:"token_endpoint"`
	RevocationEndpoint string    `json:"revocation_endpoint,omitempty"`
	Resource           string    `json:"resource,omitempty"`
	ClientID           string    `json:"client_id"`
	ClientSecret       string    `json:"client_secret,omitempty"`
	AuthMethod         string    `json:"auth_method"`
}

// entryKey identifies an entry: its name and scope.
type entryKey struct {
	name, tenant, agent string
}

// table is a parsed store: entry key → value.
type table map[entryKey]string

// contents is a parsed store: its credential entries and connections.
type contents struct {
	creds table
	conns map[ConnectionKey]Connection

	// idx indexes conns for the broker's per-call lookups; built on
	// first use, once contents is published in a snapshot (it is never
	// changed after).
	idxOnce sync.Once
	idx     *connIndex
}

func newContents() *contents {
	return &contents{creds: table{}, conns: map[ConnectionKey]Connection{}}
}

// decode parses and validates a decrypted store document strictly: one
// JSON object with exactly the known fields, version 1 (no connections)
// or 2, every entry's name, scope and value valid, no entry twice, at most
// MaxEntries; every connection's key and content valid, none twice, at
// most MaxConnections, exactly one default per scope and provider. Errors
// name the entry by index and field, never a value.
func decode(data []byte) (*contents, error) {
	var doc document
	if err := strictjson.Decode(data, &doc, maxDocumentDepth); err != nil {
		return nil, fmt.Errorf("not a credential store document: %w", err)
	}
	switch {
	case doc.Version == 1 && doc.Connections != nil:
		return nil, fmt.Errorf("version 1 has no connections (they came with version 2)")
	case doc.Version != 1 && doc.Version != formatVersion:
		return nil, fmt.Errorf("version %d is not supported (this skillgate reads versions 1 and %d)", doc.Version, formatVersion)
	}
	if len(doc.Credentials) > MaxEntries {
		return nil, fmt.Errorf("%d entries; the limit is %d", len(doc.Credentials), MaxEntries)
	}
	c := newContents()
	t := c.creds
	for i, e := range doc.Credentials {
		if err := CheckName(e.Name); err != nil {
			return nil, fmt.Errorf("credentials[%d].name: %w", i, err)
		}
		if err := (Scope{Tenant: e.Tenant, Agent: e.Agent}).Check(); err != nil {
			return nil, fmt.Errorf("credentials[%d] (%s): %w", i, e.Name, err)
		}
		if err := checkValue(e.Value); err != nil {
			return nil, fmt.Errorf("credentials[%d] (%s): %w", i, e.Name, err)
		}
		k := entryKey{e.Name, e.Tenant, e.Agent}
		if _, dup := t[k]; dup {
			return nil, fmt.Errorf("credentials[%d]: %s for %s appears twice", i, e.Name, Scope{e.Tenant, e.Agent})
		}
		t[k] = e.Value
	}
	if len(doc.Connections) > MaxConnections {
		return nil, fmt.Errorf("%d connections; the limit is %d", len(doc.Connections), MaxConnections)
	}
	for i, sc := range doc.Connections {
		k := ConnectionKey{Scope: Scope{Tenant: sc.Tenant, Agent: sc.Agent}, Provider: sc.Provider, Account: sc.Account}
		if err := k.Scope.Check(); err != nil {
			return nil, fmt.Errorf("connections[%d]: %w", i, err)
		}
		if err := CheckProvider(k.Provider); err != nil {
			return nil, fmt.Errorf("connections[%d].provider: %w", i, err)
		}
		if err := CheckAccount(k.Account); err != nil {
			return nil, fmt.Errorf("connections[%d].account: %w", i, err)
		}
		conn := sc.connection(k)
		if err := conn.check(); err != nil {
			return nil, fmt.Errorf("connections[%d] (%s): %w", i, k, err)
		}
		if _, dup := c.conns[k]; dup {
			return nil, fmt.Errorf("connections[%d]: %s appears twice", i, k)
		}
		c.conns[k] = conn
	}
	if err := c.checkDefaults(); err != nil {
		return nil, err
	}
	return c, nil
}

// connection converts a stored connection to the API's type.
func (sc storedConnection) connection(k ConnectionKey) Connection {
	conn := Connection{ConnectionKey: k, Secret: sc.Secret, State: ConnectionState(sc.State), Default: sc.Default,
		Created: sc.Created, Refreshed: sc.Refreshed, LastError: sc.LastError}
	if g := sc.OAuth; g != nil {
		conn.OAuth = &Grant{
			Grant: oauth.Grant{AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, TokenType: g.TokenType,
				Expiry: g.Expiry, Scopes: g.Scopes},
			Client: oauth.Registration{ClientID: g.ClientID, ClientSecret: g.ClientSecret, AuthMethod: g.AuthMethod},
			Issuer: g.Issuer, TokenEndpoint: g.TokenEndpoint, RevocationEndpoint: g.RevocationEndpoint, Resource: g.Resource}
	}
	return conn
}

// stored converts a connection to its stored form.
func stored(conn Connection) storedConnection {
	sc := storedConnection{Tenant: conn.Tenant, Agent: conn.Agent, Provider: conn.Provider, Account: conn.Account,
		Default: conn.Default, State: string(conn.State), Created: conn.Created.UTC(), Refreshed: conn.Refreshed.UTC(),
		LastError: conn.LastError, Secret: conn.Secret}
	if g := conn.OAuth; g != nil {
		sc.OAuth = &storedGrant{AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, TokenType: g.TokenType,
			Expiry: g.Expiry.UTC(), Scopes: g.Scopes, Issuer: g.Issuer, TokenEndpoint: g.TokenEndpoint,
			RevocationEndpoint: g.RevocationEndpoint, Resource: g.Resource, ClientID: g.Client.ClientID,
			ClientSecret: g.Client.ClientSecret, AuthMethod: g.Client.AuthMethod}
	}
	return sc
}

// providerKey groups connections: one scope's connections to one provider.
type providerKey struct {
	Scope
	provider string
}

// checkDefaults reports a scope and provider whose connections have no
// default, or more than one.
func (c *contents) checkDefaults() error {
	n := map[providerKey]int{}
	for k, conn := range c.conns {
		pk := providerKey{k.Scope, k.Provider}
		if conn.Default {
			n[pk]++
		} else if _, ok := n[pk]; !ok {
			n[pk] = 0
		}
	}
	keys := make([]providerKey, 0, len(n))
	for pk := range n {
		keys = append(keys, pk)
	}
	sort.Slice(keys, func(i, j int) bool { return lessProvider(keys[i], keys[j]) })
	for _, pk := range keys {
		switch n[pk] {
		case 1:
		case 0:
			return fmt.Errorf("connections: %s for %s have no default account; mark exactly one default", pk.provider, pk.Scope)
		default:
			return fmt.Errorf("connections: %s for %s have %d default accounts; mark exactly one default", pk.provider, pk.Scope, n[pk])
		}
	}
	return nil
}

func lessProvider(a, b providerKey) bool {
	if a.Tenant != b.Tenant {
		return a.Tenant < b.Tenant
	}
	if a.Agent != b.Agent {
		return a.Agent < b.Agent
	}
	return a.provider < b.provider
}

// lessConnection orders connections by tenant, agent, provider, account.
func lessConnection(a, b ConnectionKey) bool {
	if a.Tenant != b.Tenant || a.Agent != b.Agent || a.Provider != b.Provider {
		return lessProvider(providerKey{a.Scope, a.Provider}, providerKey{b.Scope, b.Provider})
	}
	return a.Account < b.Account
}

// sortedKeys lists c's connection keys in order.
func (c *contents) sortedKeys() []ConnectionKey {
	keys := make([]ConnectionKey, 0, len(c.conns))
	for k := range c.conns {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return lessConnection(keys[i], keys[j]) })
	return keys
}

// encode writes c as a store document, entries sorted by tenant, agent,
// name and connections by tenant, agent, provider, account, so that the
// same contents always encode to the same bytes. A store without
// connections is written as version 1, which a skillgate from before
// connections still reads (an operator can go back a version until the
// first connection is made).
func (c *contents) encode() ([]byte, error) {
	doc := document{Version: formatVersion, Credentials: make([]storedEntry, 0, len(c.creds))}
	if len(c.conns) == 0 {
		doc.Version = 1
	}
	for k, v := range c.creds {
		doc.Credentials = append(doc.Credentials, storedEntry{Name: k.name, Tenant: k.tenant, Agent: k.agent, Value: v})
	}
	sort.Slice(doc.Credentials, func(i, j int) bool {
		a, b := doc.Credentials[i], doc.Credentials[j]
		if a.Tenant != b.Tenant {
			return a.Tenant < b.Tenant
		}
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		return a.Name < b.Name
	})
	for _, k := range c.sortedKeys() {
		doc.Connections = append(doc.Connections, stored(c.conns[k]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// entries lists t's names and scopes, sorted by tenant, agent, name.
func (t table) entries() []Entry {
	out := make([]Entry, 0, len(t))
	for k := range t {
		out = append(out, Entry{Name: k.name, Scope: Scope{Tenant: k.tenant, Agent: k.agent}})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Tenant != b.Tenant {
			return a.Tenant < b.Tenant
		}
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		return a.Name < b.Name
	})
	return out
}
