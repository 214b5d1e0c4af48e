package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// CreateSession implements [store.SessionStore].
func (s *DB) CreateSession(ctx context.Context, sess store.Session) error {
	now := s.Now().UnixNano()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO sessions (id, tenant, agent, tier, created_at, updated_at, last_used) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`), sess.ID, sess.Tenant, sess.Agent, sess.Tier, now, now, now)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("session %q exists: %w", sess.ID, store.ErrConflict)
		}
		return s.insertSessionSkills(ctx, tx, sess.ID, sess.Skills, now)
	})
	if err != nil {
		return fmt.Errorf("create session %q: %w", sess.ID, err)
	}
	return nil
}

// Session implements [store.SessionStore].
func (s *DB) Session(ctx context.Context, id string) (store.Session, error) {
	sess := store.Session{ID: id, Skills: []store.LoadedSkill{}}
	var created, updated, used int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT tenant, agent, tier, created_at, updated_at, last_used FROM sessions WHERE id = ?`), id).
		Scan(&sess.Tenant, &sess.Agent, &sess.Tier, &created, &updated, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{}, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("session %q: %w", id, err)
	}
	sess.CreatedAt, sess.UpdatedAt, sess.LastUsed = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC(), time.Unix(0, used).UTC()
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT key, mount, loaded_at FROM session_skills WHERE session_id = ? ORDER BY position`), id)
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

// SetSessionSkills implements [store.SessionStore]. The session's row is
// locked by its update, so concurrent changes of one session apply one
// after the other.
func (s *DB) SetSessionSkills(ctx context.Context, id string, skills []store.LoadedSkill) error {
	now := s.Now().UnixNano()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE sessions SET updated_at = ?, last_used = CASE WHEN last_used > ? THEN last_used ELSE ? END WHERE id = ?`), now, now, now, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM session_skills WHERE session_id = ?`), id); err != nil {
			return err
		}
		return s.insertSessionSkills(ctx, tx, id, skills, now)
	})
	if err != nil {
		return fmt.Errorf("set skills of session %q: %w", id, err)
	}
	return nil
}

// DeleteSession implements [store.SessionStore].
func (s *DB) DeleteSession(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM sessions WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("delete session %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete session %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// Sessions implements [store.SessionStore].
func (s *DB) Sessions(ctx context.Context, f store.SessionFilter) ([]store.Session, error) {
	q := `SELECT id, tenant, agent, tier, created_at, updated_at, last_used FROM sessions`
	var args []any
	if !f.UnusedSince.IsZero() {
		q += ` WHERE last_used < ?`
		args = append(args, f.UnusedSince.UnixNano())
	}
	q += ` ORDER BY last_used, id`
	out := []store.Session{}
	byID := map[string]int{}
	err := func() error {
		rows, err := s.db.QueryContext(ctx, s.q(q), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			sess := store.Session{Skills: []store.LoadedSkill{}}
			var created, updated, used int64
			if err := rows.Scan(&sess.ID, &sess.Tenant, &sess.Agent, &sess.Tier, &created, &updated, &used); err != nil {
				return err
			}
			sess.CreatedAt, sess.UpdatedAt, sess.LastUsed = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC(), time.Unix(0, used).UTC()
			byID[sess.ID] = len(out)
			out = append(out, sess)
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	sq := `SELECT session_id, key, mount, loaded_at FROM session_skills`
	if !f.UnusedSince.IsZero() {
		sq += ` WHERE session_id IN (SELECT id FROM sessions WHERE last_used < ?)`
	}
	rows, err := s.db.QueryContext(ctx, s.q(sq+` ORDER BY session_id, position`), args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions' skills: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var ls store.LoadedSkill
		var at int64
		if err := rows.Scan(&id, &ls.Key, &ls.Mount, &at); err != nil {
			return nil, fmt.Errorf("list sessions' skills: %w", err)
		}
		if i, ok := byID[id]; ok {
			ls.LoadedAt = time.Unix(0, at).UTC()
			out[i].Skills = append(out[i].Skills, ls)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions' skills: %w", err)
	}
	return out, nil
}

// TouchSessions implements [store.SessionStore].
func (s *DB) TouchSessions(ctx context.Context, at time.Time, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return chunks(ids, func(ids []string) error {
			cond, args := in(s.d, "id", ids, []any{at.UnixNano()})
			_, err := tx.ExecContext(ctx, s.q(`UPDATE sessions SET last_used = ? WHERE `+cond+` AND last_used < ?`), append(args, at.UnixNano())...)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("touch sessions: %w", err)
	}
	return nil
}

// DeleteIdleSession implements [store.SessionStore]. The condition and
// the deletion are one statement, so a concurrent touch either lands
// before (and the session is kept) or finds it gone.
func (s *DB) DeleteIdleSession(ctx context.Context, id string, before time.Time) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM sessions WHERE id = ? AND last_used < ?`), id, before.UnixNano())
	if err != nil {
		return fmt.Errorf("delete idle session %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	var used int64
	err = s.db.QueryRowContext(ctx, s.q(`SELECT last_used FROM sessions WHERE id = ?`), id).Scan(&used)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("delete idle session %q: %w", id, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("delete idle session %q: %w", id, err)
	}
	return fmt.Errorf("delete idle session %q: used at %s: %w", id, time.Unix(0, used).UTC().Format(time.RFC3339), store.ErrConflict)
}

// insertSessionSkills writes skills in order. Duplicate keys or mounts are
// refused with ErrConflict before anything is written, so the constraint
// error of the driver never reaches callers.
func (s *DB) insertSessionSkills(ctx context.Context, tx *sql.Tx, id string, skills []store.LoadedSkill, now int64) error {
	keys, mounts := map[string]bool{}, map[string]bool{}
	for _, ls := range skills {
		if keys[ls.Key] || mounts[ls.Mount] {
			return fmt.Errorf("skill %q (mount %q) listed twice: %w", ls.Key, ls.Mount, store.ErrConflict)
		}
		keys[ls.Key], mounts[ls.Mount] = true, true
	}
	return chunks(positions(len(skills)), func(ps []int) error {
		args := make([]any, 0, 5*len(ps))
		for _, i := range ps {
			ls := skills[i]
			at := now
			if !ls.LoadedAt.IsZero() {
				at = ls.LoadedAt.UnixNano()
			}
			args = append(args, id, i, ls.Key, ls.Mount, at)
		}
		q := `INSERT INTO session_skills (session_id, position, key, mount, loaded_at) VALUES (?, ?, ?, ?, ?)` + strings.Repeat(`, (?, ?, ?, ?, ?)`, len(ps)-1)
		_, err := tx.ExecContext(ctx, s.q(q), args...)
		return err
	})
}

// positions returns 0, 1, …, n-1.
func positions(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
