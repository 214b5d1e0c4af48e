package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// Policies implements [store.GrantStore].
func (s *DB) Policies(ctx context.Context) ([]store.StoredPolicy, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, text, updated_at FROM policies ORDER BY id`))
	if err != nil {
		return nil, fmt.Errorf("stored policies: %w", err)
	}
	defer rows.Close()
	var out []store.StoredPolicy
	for rows.Next() {
		var p store.StoredPolicy
		var at int64
		if err := rows.Scan(&p.ID, &p.Text, &at); err != nil {
			return nil, fmt.Errorf("stored policies: %w", err)
		}
		p.UpdatedAt = time.Unix(0, at).UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

// PutPolicy implements [store.GrantStore].
func (s *DB) PutPolicy(ctx context.Context, p store.StoredPolicy) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO policies (id, text, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at`), p.ID, p.Text, s.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("store policy %q: %w", p.ID, err)
	}
	return nil
}

// DeletePolicy implements [store.GrantStore].
func (s *DB) DeletePolicy(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM policies WHERE id = ?`), id); err != nil {
		return fmt.Errorf("delete policy %q: %w", id, err)
	}
	return nil
}

const grantColumns = `id, principal, capability, args, level, expires_at, uses, used, reason, created_by, created_at, revoked_at`

func scanGrant(r row) (store.Grant, error) {
	var g store.Grant
	var args sql.NullString
	var expires, created, revoked int64
	if err := r.Scan(&g.ID, &g.Principal, &g.Capability, &args, &g.Level, &expires, &g.Uses, &g.Used, &g.Reason, &g.CreatedBy, &created, &revoked); err != nil {
		return store.Grant{}, err
	}
	g.Args = raw(args)
	if expires != 0 {
		g.ExpiresAt = time.Unix(0, expires).UTC()
	}
	if revoked != 0 {
		g.RevokedAt = time.Unix(0, revoked).UTC()
	}
	g.CreatedAt = time.Unix(0, created).UTC()
	return g, nil
}

// Grants implements [store.GrantStore]: every grant not
// revoked, by creation.
func (s *DB) Grants(ctx context.Context) ([]store.Grant, error) {
	return queryAll(ctx, s, "grants", `SELECT `+grantColumns+` FROM grants WHERE revoked_at = 0 ORDER BY created_at, id`, nil, scanGrant)
}

// CreateGrant implements [store.GrantStore]. The grant and
// its audit record rec, sealed with seal, commit together.
func (s *DB) CreateGrant(ctx context.Context, g store.Grant, rec store.AuditRecord, seal store.AuditSeal) error {
	var args any
	if g.Args != nil {
		args = string(g.Args)
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO grants (`+grantColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`),
			g.ID, g.Principal, g.Capability, args, g.Level, unixNano(g.ExpiresAt), g.Uses, g.Used, g.Reason, g.CreatedBy, g.CreatedAt.UnixNano()); err != nil {
			if s.d.IsUnique(err) {
				return fmt.Errorf("grant %s exists: %w", g.ID, store.ErrConflict)
			}
			return err
		}
		_, err := s.appendAudit(ctx, tx, seal, rec)
		return err
	})
	if err != nil {
		return fmt.Errorf("create grant %s: %w", g.ID, err)
	}
	return nil
}

// unixNano is t in Unix nanoseconds, 0 for the zero time ("never").
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// RevokeGrant implements [store.GrantStore]: the grant is
// revoked at at, and the audit record rec gives for it (as it was) is
// sealed with seal and appended in the same transaction. It returns
// store.ErrNotFound when no unrevoked grant has the id.
func (s *DB) RevokeGrant(ctx context.Context, id string, at time.Time, rec func(store.Grant) (store.AuditRecord, error), seal store.AuditSeal) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		g, err := scanGrant(tx.QueryRowContext(ctx, s.q(`UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at = 0 RETURNING `+grantColumns), at.UnixNano(), id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("revoke grant %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("revoke grant %s: %w", id, err)
		}
		r, err := rec(g)
		if err == nil {
			_, err = s.appendAudit(ctx, tx, seal, r)
		}
		if err != nil {
			return fmt.Errorf("revoke grant %s: %w", id, err)
		}
		return nil
	})
}

// RescopeGrants implements [store.GrantStore]: every change
// and its audit record in one transaction. A grant that is no longer in
// force with the pattern the change expects (another process rescoped or
// revoked it meanwhile) is left alone, without a record.
func (s *DB) RescopeGrants(ctx context.Context, cs []store.GrantRescope, seal store.AuditSeal) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.Now()
		for _, c := range cs {
			var res sql.Result
			var err error
			if c.To != "" {
				res, err = tx.ExecContext(ctx, s.q(`UPDATE grants SET capability = ? WHERE id = ? AND capability = ? AND revoked_at = 0`), c.To, c.ID, c.From)
			} else {
				res, err = tx.ExecContext(ctx, s.q(`UPDATE grants SET revoked_at = ? WHERE id = ? AND capability = ? AND revoked_at = 0`), now.UnixNano(), c.ID, c.From)
			}
			if err != nil {
				return fmt.Errorf("scope grant %s: %w", c.ID, err)
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				continue
			}
			r := c.Record
			if r.Time.IsZero() {
				r.Time = now
			}
			if _, err := s.appendAudit(ctx, tx, seal, r); err != nil {
				return fmt.Errorf("scope grant %s: %w", c.ID, err)
			}
		}
		return nil
	})
}

// ReleaseGrant implements [store.GrantStore].
func (s *DB) ReleaseGrant(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE grants SET used = used - 1 WHERE id = ? AND used > 0`), id); err != nil {
		return fmt.Errorf("release grant %s: %w", id, err)
	}
	return nil
}

// UseGrant implements [store.GrantStore]: one UPDATE … RETURNING, so two
// concurrent uses of the last remaining use cannot both succeed.
// It returns store.ErrNotFound for an unknown id and store.ErrConflict for
// a grant revoked, expired or used up.
func (s *DB) UseGrant(ctx context.Context, id string, at time.Time) (store.Grant, error) {
	now := at.UnixNano()
	g, err := scanGrant(s.db.QueryRowContext(ctx, s.q(`UPDATE grants SET used = used + 1
		WHERE id = ? AND revoked_at = 0 AND (expires_at = 0 OR expires_at > ?) AND (uses = 0 OR used < uses)
		RETURNING `+grantColumns), id, now))
	if errors.Is(err, sql.ErrNoRows) {
		var n int
		if err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM grants WHERE id = ?`), id).Scan(&n); err == nil && n == 0 {
			return store.Grant{}, fmt.Errorf("use grant %q: %w", id, store.ErrNotFound)
		}
		return store.Grant{}, fmt.Errorf("use grant %q: %w", id, store.ErrConflict)
	}
	if err != nil {
		return store.Grant{}, fmt.Errorf("use grant %s: %w", id, err)
	}
	return g, nil
}
