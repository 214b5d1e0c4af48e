package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/skillgate/skillgate/store"
)

var _ store.SessionStore = (*DB)(nil)

// CreateSession implements [store.SessionStore].
func (s *DB) CreateSession(ctx context.Context, sess store.Session) error {
	now := s.Now().UnixNano()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE id = ?`, sess.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("session %q exists: %w", sess.ID, store.ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, tenant, agent, tier, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			sess.ID, sess.Tenant, sess.Agent, sess.Tier, now, now); err != nil {
			return err
		}
		return insertSessionSkills(ctx, tx, sess.ID, sess.Skills, now)
	})
	if err != nil {
		return fmt.Errorf("create session %q: %w", sess.ID, err)
	}
	return nil
}

// Session implements [store.SessionStore].
func (s *DB) Session(ctx context.Context, id string) (store.Session, error) {
	sess := store.Session{ID: id, Skills: []store.LoadedSkill{}}
	var created, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT tenant, agent, tier, created_at, updated_at FROM sessions WHERE id = ?`, id).
		Scan(&sess.Tenant, &sess.Agent, &sess.Tier, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("session %q: %w", id, err)
	}
	sess.CreatedAt, sess.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	rows, err := s.db.QueryContext(ctx, `SELECT key, mount, loaded_at FROM session_skills WHERE session_id = ? ORDER BY position`, id)
	if err != nil {
		return store.Session{}, fmt.Errorf("session %q skills: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ls store.LoadedSkill
		var at int64
		if err := rows.Scan(&ls.Key, &ls.Mount, &at); err != nil {
			return store.Session{}, fmt.Errorf("session %q skills: %w", id, err)
		}
		ls.LoadedAt = time.Unix(0, at).UTC()
		sess.Skills = append(sess.Skills, ls)
	}
	if err := rows.Err(); err != nil {
		return store.Session{}, fmt.Errorf("session %q skills: %w", id, err)
	}
	return sess, nil
}

// SetSessionSkills implements [store.SessionStore].
func (s *DB) SetSessionSkills(ctx context.Context, id string, skills []store.LoadedSkill) error {
	now := s.Now().UnixNano()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ?`, now, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM session_skills WHERE session_id = ?`, id); err != nil {
			return err
		}
		return insertSessionSkills(ctx, tx, id, skills, now)
	})
	if err != nil {
		return fmt.Errorf("set skills of session %q: %w", id, err)
	}
	return nil
}

// DeleteSession implements [store.SessionStore].
func (s *DB) DeleteSession(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete session %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete session %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// insertSessionSkills writes skills in order. Duplicate keys or mounts are
// refused with ErrConflict before anything is written, so the constraint
// error of the driver never reaches callers.
func insertSessionSkills(ctx context.Context, tx *sql.Tx, id string, skills []store.LoadedSkill, now int64) error {
	keys, mounts := map[string]bool{}, map[string]bool{}
	for _, ls := range skills {
		if keys[ls.Key] || mounts[ls.Mount] {
			return fmt.Errorf("skill %q (mount %q) listed twice: %w", ls.Key, ls.Mount, store.ErrConflict)
		}
		keys[ls.Key], mounts[ls.Mount] = true, true
	}
	for i, ls := range skills {
		at := now
		if !ls.LoadedAt.IsZero() {
			at = ls.LoadedAt.UnixNano()
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_skills (session_id, position, key, mount, loaded_at) VALUES (?, ?, ?, ?, ?)`,
			id, i, ls.Key, ls.Mount, at); err != nil {
			return err
		}
	}
	return nil
}
