package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Store persists stored policies and approval grants; store/sqlite and
// store/postgres implement it (it is store.GrantStore with Installs). Every method is safe for concurrent use and every change
// is one transaction. The store keeps the columns; this package gives them
// their meaning and writes the audit record of every grant change, which
// the store seals and appends in the change's transaction.
type Store interface {
	PolicyStore
	// PutPolicy creates or replaces a stored policy.
	PutPolicy(ctx context.Context, p StoredPolicy) error
	// DeletePolicy removes a stored policy; deleting a missing id is not
	// an error.
	DeletePolicy(ctx context.Context, id string) error
	// Grants returns every grant that is not revoked, ordered by creation.
	Grants(ctx context.Context) ([]store.Grant, error)
	// CreateGrant records a new grant with its audit record.
	CreateGrant(ctx context.Context, g store.Grant, rec store.AuditRecord, seal store.AuditSeal) error
	// RevokeGrant marks a grant revoked at the given time, with the audit
	// record rec gives for the grant. It returns an error wrapping
	// store.ErrNotFound when no unrevoked grant has the id.
	RevokeGrant(ctx context.Context, id string, at time.Time, rec func(store.Grant) (store.AuditRecord, error), seal store.AuditSeal) error
	// UseGrant atomically consumes one use of a grant that is unrevoked,
	// unexpired at the given time and not used up, and returns it with its
	// new use count. Otherwise it returns an error wrapping
	// store.ErrConflict (or store.ErrNotFound for an unknown id).
	UseGrant(ctx context.Context, id string, at time.Time) (store.Grant, error)
	// ReleaseGrant gives back one use consumed by UseGrant for a call that
	// was then not relayed to its server. A grant with no use consumed is
	// left as it is.
	ReleaseGrant(ctx context.Context, id string) error
	// Installs and RescopeGrants serve the one-time rewrite of grants
	// stored before capability ids named their skill (see scopeGrants).
	Installs(ctx context.Context, f store.InstallFilter) ([]store.Install, error)
	RescopeGrants(ctx context.Context, cs []store.GrantRescope, seal store.AuditSeal) error
}

// storedRow is g as the store keeps it.
func storedRow(g Grant) (store.Grant, error) {
	row := store.Grant{ID: g.ID, Principal: g.Principal, Capability: g.Capability, Level: string(g.Level),
		Uses: g.Uses, Used: g.Used, Reason: g.Reason, CreatedBy: g.CreatedBy, CreatedAt: g.CreatedAt}
	if g.Args != nil {
		b, err := json.Marshal(g.Args)
		if err != nil {
			return store.Grant{}, fmt.Errorf("grant %s: args: %w", g.ID, err)
		}
		row.Args = b
	}
	if g.ExpiresAt != nil {
		row.ExpiresAt = *g.ExpiresAt
	}
	if g.RevokedAt != nil {
		row.RevokedAt = *g.RevokedAt
	}
	return row, nil
}

// grantOf is the grant a stored row holds.
func grantOf(row store.Grant) (Grant, error) {
	g := Grant{ID: row.ID, Principal: row.Principal, Capability: row.Capability, Level: capability.RiskLevel(row.Level),
		Uses: row.Uses, Used: row.Used, Reason: row.Reason, CreatedBy: row.CreatedBy, CreatedAt: row.CreatedAt}
	if row.Args != nil {
		if err := json.Unmarshal(row.Args, &g.Args); err != nil {
			return Grant{}, fmt.Errorf("grant %s: args: %w", row.ID, err)
		}
	}
	if !row.ExpiresAt.IsZero() {
		t := row.ExpiresAt
		g.ExpiresAt = &t
	}
	if !row.RevokedAt.IsZero() {
		t := row.RevokedAt
		g.RevokedAt = &t
	}
	return g, nil
}

// storedGrants returns the grants in force in the store, after rewriting
// any stored in the old form (see scopeGrants).
func (e *Engine) storedGrants(ctx context.Context) ([]Grant, error) {
	rows, err := e.opts.Store.Grants(ctx)
	if err != nil {
		return nil, err
	}
	if rescoped, err := scopeGrants(ctx, e.opts.Store, rows); err != nil {
		return nil, err
	} else if rescoped {
		if rows, err = e.opts.Store.Grants(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]Grant, 0, len(rows))
	for _, row := range rows {
		g, err := grantOf(row)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// operatorActor names who changed a grant in audit records:
// "operator:NAME" (the REST API passes it so already, the CLI passes
// $USER).
func operatorActor(by string) string {
	switch {
	case strings.HasPrefix(by, "operator:"):
		return by
	case by == "":
		return "operator:local"
	}
	return "operator:" + by
}

// grantRecord is the audit record of a grant change.
func grantRecord(at time.Time, actor, action, capability, reason string, data map[string]any) (store.AuditRecord, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return store.AuditRecord{}, err
	}
	return store.AuditRecord{Time: at, Actor: actor, Action: action, Subject: capability, Reasons: []string{reason}, Data: raw}, nil
}

// addRecord returns g as the store keeps it and its "grant.add" record.
func addRecord(g Grant) (store.Grant, store.AuditRecord, error) {
	row, err := storedRow(g)
	if err != nil {
		return store.Grant{}, store.AuditRecord{}, err
	}
	data := map[string]any{"grant": g.ID, "principal": g.Principal, "level": g.Level, "uses": g.Uses}
	if g.ExpiresAt != nil {
		data["expires_at"] = g.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if g.Args != nil {
		data["args"] = g.Args
	}
	reason := g.Reason
	if reason == "" {
		reason = "no reason given"
	}
	rec, err := grantRecord(g.CreatedAt, operatorActor(g.CreatedBy), "grant.add", g.Capability, reason, data)
	return row, rec, err
}

// revokeRecord returns the "grant.revoke" record of a revocation by the
// operator by.
func revokeRecord(by string) func(store.Grant) (store.AuditRecord, error) {
	return func(g store.Grant) (store.AuditRecord, error) {
		return grantRecord(g.RevokedAt, operatorActor(by), "grant.revoke", g.Capability, "revoked", map[string]any{"grant": g.ID, "principal": g.Principal})
	}
}
