package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillgate/skillgate/audit"
	"github.com/skillgate/skillgate/policy"
	"github.com/skillgate/skillgate/store"
)

// migrationPolicy creates the tables of stored Cedar policies and approval
// grants (policy.Store). Times are Unix nanoseconds; 0 means "never" for
// expires_at and "not revoked" for revoked_at. uses = 0 is unlimited.
const migrationPolicy = `CREATE TABLE policies (
		id         TEXT PRIMARY KEY,
		text       TEXT NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE TABLE grants (
		id         TEXT PRIMARY KEY,
		principal  TEXT NOT NULL,
		capability TEXT NOT NULL,
		args       TEXT,
		level      TEXT NOT NULL,
		expires_at INTEGER NOT NULL DEFAULT 0,
		uses       INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
		used       INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0),
		reason     TEXT NOT NULL DEFAULT '',
		created_by TEXT NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL,
		revoked_at INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX grants_active ON grants (revoked_at, created_at);`

var _ policy.Store = (*DB)(nil)

// Policies implements [policy.Store].
func (s *DB) Policies(ctx context.Context) ([]policy.StoredPolicy, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, text, updated_at FROM policies ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("stored policies: %w", err)
	}
	defer rows.Close()
	var out []policy.StoredPolicy
	for rows.Next() {
		var p policy.StoredPolicy
		var at int64
		if err := rows.Scan(&p.ID, &p.Text, &at); err != nil {
			return nil, fmt.Errorf("stored policies: %w", err)
		}
		p.UpdatedAt = time.Unix(0, at).UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

// PutPolicy implements [policy.Store].
func (s *DB) PutPolicy(ctx context.Context, p policy.StoredPolicy) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO policies (id, text, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at`, p.ID, p.Text, s.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("store policy %q: %w", p.ID, err)
	}
	return nil
}

// DeletePolicy implements [policy.Store].
func (s *DB) DeletePolicy(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM policies WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete policy %q: %w", id, err)
	}
	return nil
}

const grantColumns = `id, principal, capability, args, level, expires_at, uses, used, reason, created_by, created_at, revoked_at`

type grantRow interface{ Scan(...any) error }

func scanGrant(r grantRow) (policy.Grant, error) {
	var g policy.Grant
	var args sql.NullString
	var level string
	var expires, created, revoked int64
	if err := r.Scan(&g.ID, &g.Principal, &g.Capability, &args, &level, &expires, &g.Uses, &g.Used, &g.Reason, &g.CreatedBy, &created, &revoked); err != nil {
		return policy.Grant{}, err
	}
	g.Level = policy.RiskLevel(level)
	if args.Valid {
		if err := json.Unmarshal([]byte(args.String), &g.Args); err != nil {
			return policy.Grant{}, fmt.Errorf("grant %s: args: %w", g.ID, err)
		}
	}
	if expires != 0 {
		t := time.Unix(0, expires).UTC()
		g.ExpiresAt = &t
	}
	if revoked != 0 {
		t := time.Unix(0, revoked).UTC()
		g.RevokedAt = &t
	}
	g.CreatedAt = time.Unix(0, created).UTC()
	return g, nil
}

// Grants implements [policy.Store].
func (s *DB) Grants(ctx context.Context) ([]policy.Grant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+grantColumns+` FROM grants WHERE revoked_at = 0 ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	defer rows.Close()
	var out []policy.Grant
	for rows.Next() {
		g, err := scanGrant(rows)
		if err != nil {
			return nil, fmt.Errorf("grants: %w", err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// CreateGrant implements [policy.Store]. The grant and its "grant.add"
// audit record commit together.
func (s *DB) CreateGrant(ctx context.Context, g policy.Grant) error {
	var args any
	if g.Args != nil {
		b, err := json.Marshal(g.Args)
		if err != nil {
			return fmt.Errorf("create grant %s: %w", g.ID, err)
		}
		args = string(b)
	}
	var expires int64
	if g.ExpiresAt != nil {
		expires = g.ExpiresAt.UnixNano()
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO grants (`+grantColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
			g.ID, g.Principal, g.Capability, args, string(g.Level), expires, g.Uses, g.Used, g.Reason, g.CreatedBy, g.CreatedAt.UnixNano()); err != nil {
			return err
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
		return auditGrant(ctx, tx, g.CreatedAt, operatorActor(g.CreatedBy), "grant.add", g.Capability, reason, data)
	})
	if err != nil {
		return fmt.Errorf("create grant %s: %w", g.ID, err)
	}
	return nil
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

// auditGrant appends the audit record of a grant change inside tx.
func auditGrant(ctx context.Context, tx *sql.Tx, at time.Time, actor, action, capability, reason string, data map[string]any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = appendAudit(ctx, tx, audit.SealStored, store.AuditRecord{Time: at, Actor: actor, Action: action, Subject: capability, Reasons: []string{reason}, Data: raw})
	return err
}

// RevokeGrant implements [policy.Store]. The revocation and its
// "grant.revoke" audit record commit together.
func (s *DB) RevokeGrant(ctx context.Context, id, by string, at time.Time) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var capability, principal string
		err := tx.QueryRowContext(ctx, `UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at = 0 RETURNING capability, principal`, at.UnixNano(), id).Scan(&capability, &principal)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %q; list them with 'skillgate grant ls'", policy.ErrGrantNotFound, id)
		}
		if err != nil {
			return fmt.Errorf("revoke grant %s: %w", id, err)
		}
		if err := auditGrant(ctx, tx, at, operatorActor(by), "grant.revoke", capability, "revoked", map[string]any{"grant": id, "principal": principal}); err != nil {
			return fmt.Errorf("revoke grant %s: %w", id, err)
		}
		return nil
	})
}

// ReleaseGrant implements [policy.Store].
func (s *DB) ReleaseGrant(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE grants SET used = used - 1 WHERE id = ? AND used > 0`, id); err != nil {
		return fmt.Errorf("release grant %s: %w", id, err)
	}
	return nil
}

// UseGrant implements [policy.Store]: one UPDATE … RETURNING, so two
// concurrent uses of the last remaining use cannot both succeed.
func (s *DB) UseGrant(ctx context.Context, id string, at time.Time) (policy.Grant, error) {
	now := at.UnixNano()
	g, err := scanGrant(s.db.QueryRowContext(ctx, `UPDATE grants SET used = used + 1
		WHERE id = ? AND revoked_at = 0 AND (expires_at = 0 OR expires_at > ?) AND (uses = 0 OR used < uses)
		RETURNING `+grantColumns, id, now))
	if errors.Is(err, sql.ErrNoRows) {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM grants WHERE id = ?`, id).Scan(&n); err == nil && n == 0 {
			return policy.Grant{}, fmt.Errorf("%w: %q", policy.ErrGrantNotFound, id)
		}
		return policy.Grant{}, fmt.Errorf("%w: %q", policy.ErrGrantUnusable, id)
	}
	if err != nil {
		return policy.Grant{}, fmt.Errorf("use grant %s: %w", id, err)
	}
	return g, nil
}
