package credential

import (
	"context"
	"errors"
	"fmt"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// absent is the error for a key with no connection.
func absent(k ConnectionKey) error {
	return fmt.Errorf("%w: no %s (list them with skillgate connection ls)", ErrNoConnection, k)
}

// PutConnection stores c, replacing the connection with the same key. An
// empty State is active; a zero Created is now (a replaced connection
// keeps its first Created). The first connection of a scope to a provider
// becomes its default; c.Default makes c the default in place of another;
// a replaced default stays the default. It fails with
// ErrInvalidScope or ErrInvalidConnection for a malformed connection, and
// when the store holds MaxConnections already.
func (s *Store) PutConnection(ctx context.Context, c Connection) error {
	c = c.clone()
	if c.State == "" {
		c.State = StateActive
	}
	if err := c.ConnectionKey.Check(); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return fmt.Errorf("%s: %w", c.ConnectionKey, err)
	}
	return s.update(ctx, func(t *contents) error {
		old, replaced := t.conns[c.ConnectionKey]
		if !replaced && len(t.conns) >= MaxConnections {
			return fmt.Errorf("%w: %d connections; the limit is %d (remove some with skillgate connection rm)", ErrInvalidConnection, len(t.conns), MaxConnections)
		}
		switch {
		case replaced:
			c.Created = old.Created
			c.Default = c.Default || old.Default
		case c.Created.IsZero():
			c.Created = s.opts.Now().UTC()
		}
		if !c.Default && !t.hasProvider(c.Scope, c.Provider, c.ConnectionKey) {
			c.Default = true
		}
		if c.Default {
			t.clearDefault(c.Scope, c.Provider)
		}
		t.conns[c.ConnectionKey] = c
		return nil
	})
}

// hasProvider reports whether scope holds a connection to provider other
// than except.
func (t *contents) hasProvider(scope Scope, provider string, except ConnectionKey) bool {
	for k := range t.conns {
		if k.Scope == scope && k.Provider == provider && k != except {
			return true
		}
	}
	return false
}

// clearDefault unmarks the default of scope's connections to provider.
func (t *contents) clearDefault(scope Scope, provider string) {
	for k, c := range t.conns {
		if k.Scope == scope && k.Provider == provider && c.Default {
			c.Default = false
			t.conns[k] = c
		}
	}
}

// promoteDefault makes the first account (in order) of scope's
// connections to provider the default, if there is any and none is.
func (t *contents) promoteDefault(scope Scope, provider string) {
	var first *ConnectionKey
	for k, c := range t.conns {
		if k.Scope != scope || k.Provider != provider {
			continue
		}
		if c.Default {
			return
		}
		if first == nil || k.Account < first.Account {
			first = &k
		}
	}
	if first != nil {
		c := t.conns[*first]
		c.Default = true
		t.conns[*first] = c
	}
}

// Connection returns the connection k with its secrets, after reloading a
// changed store; it is for the broker that sends the token, never for a
// listing. It fails with ErrNoConnection when there is none.
func (s *Store) Connection(ctx context.Context, k ConnectionKey) (Connection, error) {
	if err := k.Check(); err != nil {
		return Connection{}, err
	}
	if _, err := s.Reload(ctx); err != nil {
		return Connection{}, err
	}
	c, ok := s.snap.Load().c.conns[k]
	if !ok {
		return Connection{}, absent(k)
	}
	return c.clone(), nil
}

// Connections lists every connection without its secrets, sorted by
// tenant, agent, provider and account, after reloading a changed store.
func (s *Store) Connections(ctx context.Context) ([]ConnectionInfo, error) {
	if _, err := s.Reload(ctx); err != nil {
		return nil, err
	}
	t := s.snap.Load().c
	out := make([]ConnectionInfo, 0, len(t.conns))
	for _, k := range t.sortedKeys() {
		out = append(out, t.conns[k].Info())
	}
	return out, nil
}

// SetDefaultConnection makes k its scope's default account for its
// provider. It fails with ErrNoConnection when k does not exist.
func (s *Store) SetDefaultConnection(ctx context.Context, k ConnectionKey) error {
	if err := k.Check(); err != nil {
		return err
	}
	return s.update(ctx, func(t *contents) error {
		c, ok := t.conns[k]
		if !ok {
			return absent(k)
		}
		t.clearDefault(k.Scope, k.Provider)
		c.Default = true
		t.conns[k] = c
		return nil
	})
}

// RenameConnection gives the connection k the account label account,
// keeping everything else (its default flag too). It fails with
// ErrNoConnection when k does not exist and ErrConnectionExists when the
// new label is taken.
func (s *Store) RenameConnection(ctx context.Context, k ConnectionKey, account string) error {
	if err := k.Check(); err != nil {
		return err
	}
	if err := CheckAccount(account); err != nil {
		return err
	}
	nk := k
	nk.Account = account
	return s.update(ctx, func(t *contents) error {
		c, ok := t.conns[k]
		if !ok {
			return absent(k)
		}
		if nk == k {
			return nil
		}
		if _, taken := t.conns[nk]; taken {
			return fmt.Errorf("%w: %s already exists; remove it or choose another label", ErrConnectionExists, nk)
		}
		delete(t.conns, k)
		c.ConnectionKey = nk
		t.conns[nk] = c
		return nil
	})
}

// RemoveConnection deletes the connection k. When it was the default, the
// first remaining account (in order) of its scope and provider becomes
// the default. It fails with ErrNoConnection when k does not exist. It
// does not revoke the grant: the lifecycle does that first.
func (s *Store) RemoveConnection(ctx context.Context, k ConnectionKey) error {
	if err := k.Check(); err != nil {
		return err
	}
	return s.update(ctx, func(t *contents) error {
		if _, ok := t.conns[k]; !ok {
			return absent(k)
		}
		delete(t.conns, k)
		t.promoteDefault(k.Scope, k.Provider)
		return nil
	})
}

// MarkConnection sets k's state and its last error's text (empty clears
// it; control characters become spaces and it is cut to MaxErrorBytes).
// The text must never hold a token: pass the oauth package's errors,
// which hold none. It fails with ErrNoConnection when k does not exist.
func (s *Store) MarkConnection(ctx context.Context, k ConnectionKey, state ConnectionState, errText string) error {
	if err := k.Check(); err != nil {
		return err
	}
	if !state.Valid() {
		return fmt.Errorf("%w: state %q: use active, expired or revoked", ErrInvalidConnection, clip(string(state)))
	}
	errText = cleanError(errText)
	return s.update(ctx, func(t *contents) error {
		c, ok := t.conns[k]
		if !ok {
			return absent(k)
		}
		c.State, c.LastError = state, errText
		t.conns[k] = c
		return nil
	})
}

// ResolveConnection picks the connection p uses for provider: with pin
// set, that account (p's agent-scope connection first, then the
// tenant's); else p's agent-scope default, else its tenant-scope default.
// It fails with ErrNoConnection naming what is missing. It reads the
// in-memory snapshot only, returns the connection whatever its state (an
// expired one makes the backend dormant; the caller decides), and never
// its secrets: fetch them with [Store.Connection].
func (s *Store) ResolveConnection(p capability.Principal, provider, pin string) (ConnectionInfo, error) {
	if err := CheckProvider(provider); err != nil {
		return ConnectionInfo{}, err
	}
	if pin != "" {
		if err := CheckAccount(pin); err != nil {
			return ConnectionInfo{}, err
		}
	}
	t := s.snap.Load().c
	scopes := []Scope{{Tenant: p.Tenant, Agent: p.Agent}, {Tenant: p.Tenant}}
	if p.Agent == "" {
		scopes = scopes[1:]
	}
	for _, sc := range scopes {
		if pin != "" {
			if c, ok := t.conns[ConnectionKey{Scope: sc, Provider: provider, Account: pin}]; ok {
				return c.Info(), nil
			}
			continue
		}
		if k, ok := t.index().defaults[providerKey{sc, provider}]; ok {
			return t.conns[k].Info(), nil
		}
	}
	if pin != "" {
		return ConnectionInfo{}, fmt.Errorf("%w: %s account %s for %s (connect it with skillgate connect %s --tenant %s --account %s)", ErrNoConnection, provider, pin, p.ID(), provider, p.Tenant, pin)
	}
	return ConnectionInfo{}, fmt.Errorf("%w: %s for %s (connect it with skillgate connect %s --tenant %s)", ErrNoConnection, provider, p.ID(), provider, p.Tenant)
}

// errUnchanged ends an update that has nothing to write.
var errUnchanged = errors.New("unchanged")

// UpdateConnection runs change on k's connection while holding the
// store's write lock: the lock file, or, when the store is shared, the
// database row every replica's writes take. change sees the connection as
// stored now (written by any process) and returns whether it changed it;
// a changed connection is checked and written, and an unchanged one
// writes nothing. So a refresh made inside change runs once across
// processes: those waiting see the grant the first stored. change runs
// with the lock held, so it must be bounded in time (the oauth client's
// requests are). Its error aborts the update and is returned as it is.
// It fails with ErrNoConnection when k does not exist.
func (s *Store) UpdateConnection(ctx context.Context, k ConnectionKey, change func(c *Connection) (bool, error)) error {
	if err := k.Check(); err != nil {
		return err
	}
	err := s.update(ctx, func(t *contents) error {
		c, ok := t.conns[k]
		if !ok {
			return absent(k)
		}
		def := c.Default
		c = c.clone()
		changed, err := change(&c)
		if err != nil {
			return err
		}
		if !changed {
			return errUnchanged
		}
		c.ConnectionKey, c.Default = k, def // the default is SetDefaultConnection's
		c.LastError = cleanError(c.LastError)
		if err := c.check(); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		t.conns[k] = c
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}
