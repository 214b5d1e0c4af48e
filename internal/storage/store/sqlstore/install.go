package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
)

const installCols = `id, key, name, category, description, label, digest, tier, invokable_by, dir, source, state, reason,
	proposed, manifest, report, pending, blocked, created_at, updated_at, provenance`

// CreateInstall implements [store.InstallStore].
func (s *DB) CreateInstall(ctx context.Context, in store.Install, reason string, rec store.InstallAudit, seal store.AuditSeal) (store.Install, error) {
	var out store.Install
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.Now()
		inv, _ := json.Marshal(nonNil(in.InvokableBy))
		prev, err := s.installBy(ctx, tx, in.Digest, true)
		was := in
		was.State = ""
		switch {
		case errors.Is(err, store.ErrNotFound):
			_, err = tx.ExecContext(ctx, s.q(`INSERT INTO installs (key, name, category, description, label, digest, tier, invokable_by,
				dir, source, state, reason, created_at, updated_at, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
				in.Key, in.Name, in.Category, in.Description, in.Label, in.Digest, in.Tier, string(inv),
				in.Dir, in.Source, string(store.StatePendingInstall), reason, now.UnixNano(), now.UnixNano(), nullJSON(in.Provenance))
			if s.d.IsUnique(err) {
				// Another process recorded the same version meanwhile.
				return fmt.Errorf("%s version %s is already recorded: %w", in.Key, in.Digest, store.ErrConflict)
			}
		case err != nil:
			return err
		case prev.State == store.StateRemoved || prev.State == store.StateRejected:
			was.State = prev.State
			_, err = tx.ExecContext(ctx, s.q(`UPDATE installs SET key = ?, name = ?, category = ?, description = ?, label = ?,
				tier = ?, invokable_by = ?, dir = ?, source = ?, state = ?, reason = ?, proposed = NULL, manifest = NULL,
				report = NULL, pending = NULL, blocked = '{}', created_at = ?, updated_at = ?, provenance = ? WHERE digest = ?`),
				in.Key, in.Name, in.Category, in.Description, in.Label, in.Tier, string(inv), in.Dir, in.Source,
				string(store.StatePendingInstall), reason, now.UnixNano(), now.UnixNano(), nullJSON(in.Provenance), in.Digest)
		default:
			return fmt.Errorf("%s version %s is already %s: %w", prev.Key, in.Digest, prev.State, store.ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("record install of %s: %w", in.Key, err)
		}
		if err := s.recordInstall(ctx, tx, was, rec, seal, now); err != nil {
			return err
		}
		out, err = s.installBy(ctx, tx, in.Digest, false)
		return err
	})
	return out, err
}

// Installs implements [store.InstallStore].
func (s *DB) Installs(ctx context.Context, f store.InstallFilter) ([]store.Install, error) {
	q := `SELECT ` + installCols + ` FROM installs WHERE TRUE`
	var args []any
	for _, c := range []struct{ col, val string }{{"key", f.Key}, {"name", f.Name}, {"digest", f.Digest}} {
		if c.val != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, c.val)
		}
	}
	if len(f.States) > 0 {
		var cond string
		cond, args = in(s.d, "state", strs(f.States), args)
		q += ` AND ` + cond
	}
	q += ` ORDER BY created_at DESC, id DESC`
	return queryAll(ctx, s, "installs", q, args, scanInstall)
}

// TransitionInstall implements [store.InstallStore]. Each install is read
// with a row lock where the dialect has them, so a concurrent transition
// of the same install, in this process or another, sees the state this
// one leaves.
func (s *DB) TransitionInstall(ctx context.Context, seal store.AuditSeal, ts ...store.Transition) ([]store.Install, error) {
	out := make([]store.Install, 0, len(ts))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		now := s.Now()
		for _, t := range ts {
			cur, err := s.installBy(ctx, tx, t.Digest, true)
			if err != nil {
				return err
			}
			if !slices.Contains(t.From, cur.State) {
				return fmt.Errorf("%s is %s, not %s: %w", cur.Key, cur.State, joinStates(t.From), store.ErrConflict)
			}
			if !t.To.Valid() {
				return fmt.Errorf("transition of %s to unknown state %q", cur.Key, t.To)
			}
			set := []string{`state = ?`, `reason = ?`, `updated_at = ?`}
			args := []any{string(t.To), t.Reason, now.UnixNano()}
			for _, c := range []struct {
				col string
				val *json.RawMessage
			}{{"proposed", t.Change.Proposed}, {"manifest", t.Change.Manifest}, {"report", t.Change.Report}, {"pending", t.Change.Pending}} {
				if c.val != nil {
					set = append(set, c.col+` = ?`)
					args = append(args, nullJSON(*c.val))
				}
			}
			if t.Change.Blocked != nil {
				b, err := json.Marshal(*t.Change.Blocked)
				if err != nil {
					return err
				}
				if *t.Change.Blocked == nil {
					b = []byte("{}")
				}
				set = append(set, `blocked = ?`)
				args = append(args, string(b))
			}
			if t.Change.Dir != nil {
				set = append(set, `dir = ?`)
				args = append(args, *t.Change.Dir)
			}
			args = append(args, t.Digest)
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE installs SET `+strings.Join(set, ", ")+` WHERE digest = ?`), args...); err != nil {
				return fmt.Errorf("transition %s to %s: %w", cur.Key, t.To, err)
			}
			if err := s.recordInstall(ctx, tx, cur, t.Audit, seal, now); err != nil {
				return err
			}
			in, err := s.installBy(ctx, tx, t.Digest, false)
			if err != nil {
				return err
			}
			out = append(out, in)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// InstallGeneration implements [store.InstallStore].
func (s *DB) InstallGeneration(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT n FROM install_generation WHERE id = 1`)).Scan(&n); err != nil {
		return 0, fmt.Errorf("install generation: %w", err)
	}
	return n, nil
}

// recordInstall bumps the generation and appends the audit record rec
// gives for one change of the install was, inside tx. A zero record Time is
// the change's time.
func (s *DB) recordInstall(ctx context.Context, tx *sql.Tx, was store.Install, rec store.InstallAudit, seal store.AuditSeal, now time.Time) error {
	if rec == nil {
		return fmt.Errorf("install change of %s: no audit record given", was.Key)
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE install_generation SET n = n + 1 WHERE id = 1`)); err != nil {
		return fmt.Errorf("install generation: %w", err)
	}
	r, err := rec(was)
	if err != nil {
		return err
	}
	if r.Time.IsZero() {
		r.Time = now
	}
	_, err = s.appendAudit(ctx, tx, seal, r)
	return err
}

// installBy reads the install of digest in tx; forUpdate locks its row
// until tx ends.
func (s *DB) installBy(ctx context.Context, tx *sql.Tx, digest string, forUpdate bool) (store.Install, error) {
	q := `SELECT ` + installCols + ` FROM installs WHERE digest = ?`
	if forUpdate {
		q += s.d.ForUpdate()
	}
	in, err := scanInstall(tx.QueryRowContext(ctx, s.q(q), digest))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Install{}, fmt.Errorf("install %s: %w", digest, store.ErrNotFound)
	}
	return in, err
}

func scanInstall(r row) (store.Install, error) {
	var in store.Install
	var inv, state, blocked string
	var proposed, manifest, report, pending, provenance sql.NullString
	var created, updated int64
	if err := r.Scan(&in.ID, &in.Key, &in.Name, &in.Category, &in.Description, &in.Label, &in.Digest, &in.Tier, &inv,
		&in.Dir, &in.Source, &state, &in.Reason, &proposed, &manifest, &report, &pending, &blocked, &created, &updated, &provenance); err != nil {
		return in, err
	}
	in.State = store.InstallState(state)
	if err := json.Unmarshal([]byte(inv), &in.InvokableBy); err != nil {
		return in, fmt.Errorf("install %s: invokable_by: %w", in.Key, err)
	}
	if err := json.Unmarshal([]byte(blocked), &in.Blocked); err != nil {
		return in, fmt.Errorf("install %s: blocked: %w", in.Key, err)
	}
	if len(in.Blocked) == 0 {
		in.Blocked = nil
	}
	in.Proposed, in.Manifest, in.Report, in.Pending = raw(proposed), raw(manifest), raw(report), raw(pending)
	in.Provenance = raw(provenance)
	in.CreatedAt, in.UpdatedAt = time.Unix(0, created), time.Unix(0, updated)
	return in, nil
}

func joinStates(ss []store.InstallState) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, " or ")
}
