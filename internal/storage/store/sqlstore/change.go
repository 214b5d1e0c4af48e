package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
)

const changeCols = `id, kind, state, key, subject, summary, proposal, queued_by, why, created_at, decided_at, decided_by, decision`

// QueueChange implements [store.ChangeStore]. Of processes queueing the
// same key at once, one records the change and the others get it back.
func (s *DB) QueueChange(ctx context.Context, c store.Change, rec store.AuditRecord, seal store.AuditSeal) (store.Change, bool, error) {
	var out store.Change
	created := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		byKey := func() error {
			var err error
			out, err = scanChange(tx.QueryRowContext(ctx, s.q(`SELECT `+changeCols+` FROM changes WHERE key = ?`), c.Key))
			return err
		}
		switch err := byKey(); {
		case err == nil:
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if c.Created.IsZero() {
			c.Created = s.Now()
		}
		var id int64
		err := tx.QueryRowContext(ctx, s.q(`INSERT INTO changes (kind, state, key, subject, summary, proposal, queued_by, why, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING id`), string(c.Kind), string(store.ChangePending), c.Key, c.Subject, c.Summary,
			string(c.Proposal), c.QueuedBy, c.Why, c.Created.UnixNano()).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			// Another process queued the key meanwhile.
			return byKey()
		}
		if err != nil {
			return err
		}
		if rec.Time.IsZero() {
			rec.Time = c.Created
		}
		if rec.Subject == "" {
			rec.Subject = fmt.Sprintf("change %d", id)
		}
		if _, err := s.appendAudit(ctx, tx, seal, rec); err != nil {
			return err
		}
		out, err = scanChange(tx.QueryRowContext(ctx, s.q(`SELECT `+changeCols+` FROM changes WHERE id = ?`), id))
		created = true
		return err
	})
	if err != nil {
		return store.Change{}, false, fmt.Errorf("queue change %s: %w", c.Key, err)
	}
	return out, created, nil
}

// Changes implements [store.ChangeStore].
func (s *DB) Changes(ctx context.Context, f store.ChangeFilter) ([]store.Change, error) {
	q := `SELECT ` + changeCols + ` FROM changes WHERE TRUE`
	var args []any
	if f.ID != 0 {
		q += ` AND id = ?`
		args = append(args, f.ID)
	}
	if f.Kind != "" {
		q += ` AND kind = ?`
		args = append(args, string(f.Kind))
	}
	if len(f.States) > 0 {
		var cond string
		cond, args = in(s.d, "state", strs(f.States), args)
		q += ` AND ` + cond
	}
	q += ` ORDER BY id DESC`
	return queryAll(ctx, s, "changes", q, args, scanChange)
}

// DecideChange implements [store.ChangeStore]. The change's row is locked
// (where the dialect has row locks), so of concurrent decisions on it, in
// any processes, one applies and the others find it decided.
func (s *DB) DecideChange(ctx context.Context, d store.ChangeDecision, rec store.AuditRecord, seal store.AuditSeal) (store.Change, error) {
	if d.To != store.ChangeApplied && d.To != store.ChangeRejected {
		return store.Change{}, fmt.Errorf("decide change %d: state %q: want applied or rejected", d.ID, d.To)
	}
	if (d.To == store.ChangeApplied) != (d.Register != nil) {
		return store.Change{}, fmt.Errorf("decide change %d: an applied change, and only it, registers", d.ID)
	}
	at := d.At
	if at.IsZero() {
		at = s.Now()
	}
	var out store.Change
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := scanChange(tx.QueryRowContext(ctx, s.q(`SELECT `+changeCols+` FROM changes WHERE id = ?`+s.d.ForUpdate()), d.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("change %d: %w", d.ID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if cur.State != store.ChangePending {
			return fmt.Errorf("change %d is %s, not pending: %w", d.ID, cur.State, store.ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE changes SET state = ?, decided_at = ?, decided_by = ?, decision = ? WHERE id = ?`),
			string(d.To), at.UnixNano(), d.By, d.Reason, d.ID); err != nil {
			return err
		}
		if r := d.Register; r != nil {
			if err := s.register(ctx, tx, d.ID, r); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE install_generation SET n = n + 1 WHERE id = 1`)); err != nil {
				return fmt.Errorf("install generation: %w", err)
			}
		}
		if rec.Time.IsZero() {
			rec.Time = at
		}
		if rec.Subject == "" {
			rec.Subject = fmt.Sprintf("change %d", d.ID)
		}
		if _, err := s.appendAudit(ctx, tx, seal, rec); err != nil {
			return err
		}
		out, err = scanChange(tx.QueryRowContext(ctx, s.q(`SELECT `+changeCols+` FROM changes WHERE id = ?`), d.ID))
		return err
	})
	if err != nil {
		return store.Change{}, fmt.Errorf("decide change %d: %w", d.ID, err)
	}
	return out, nil
}

// register records r inside tx. A backend another transaction registered
// for the same executor and provider meanwhile is refused by the unique
// constraint, as one registered before is by the check.
func (s *DB) register(ctx context.Context, tx *sql.Tx, id int64, r *store.Registration) error {
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO registered_executors (change_id, executor, definition) VALUES (?, ?, ?)`),
		id, r.Executor, string(r.Definition)); err != nil {
		return err
	}
	for _, b := range r.Backends {
		var n int
		if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM registered_backends WHERE executor = ? AND provider = ?`),
			r.Executor, b.Provider).Scan(&n); err != nil {
			return err
		}
		taken := fmt.Errorf("executor %s already has a registered %s backend: %w", r.Executor, b.Provider, store.ErrConflict)
		if n > 0 {
			return taken
		}
		args, err := json.Marshal(b.Arguments)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO registered_backends (change_id, executor, provider, skill, server, tool, arguments)
			VALUES (?, ?, ?, ?, ?, ?, ?)`), id, r.Executor, b.Provider, b.Skill, b.Server, b.Tool, string(args)); err != nil {
			if s.d.IsUnique(err) {
				return taken
			}
			return err
		}
	}
	return nil
}

// Registrations implements [store.ChangeStore].
func (s *DB) Registrations(ctx context.Context) ([]store.Registration, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT change_id, executor, definition FROM registered_executors ORDER BY change_id`))
	if err != nil {
		return nil, fmt.Errorf("registrations: %w", err)
	}
	var out []store.Registration
	at := map[int64]int{}
	for rows.Next() {
		var r store.Registration
		var def string
		if err := rows.Scan(&r.Change, &r.Executor, &def); err != nil {
			rows.Close()
			return nil, fmt.Errorf("registrations: %w", err)
		}
		if def != "" {
			r.Definition = json.RawMessage(def)
		}
		at[r.Change] = len(out)
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("registrations: %w", err)
	}
	brows, err := s.db.QueryContext(ctx, s.q(`SELECT change_id, provider, skill, server, tool, arguments FROM registered_backends ORDER BY change_id, provider`))
	if err != nil {
		return nil, fmt.Errorf("registrations: %w", err)
	}
	defer brows.Close()
	for brows.Next() {
		var id int64
		var b store.RegisteredBackend
		var args string
		if err := brows.Scan(&id, &b.Provider, &b.Skill, &b.Server, &b.Tool, &args); err != nil {
			return nil, fmt.Errorf("registrations: %w", err)
		}
		if err := json.Unmarshal([]byte(args), &b.Arguments); err != nil {
			return nil, fmt.Errorf("registrations: change %d: arguments: %w", id, err)
		}
		if i, ok := at[id]; ok {
			out[i].Backends = append(out[i].Backends, b)
		}
	}
	return out, brows.Err()
}

func scanChange(r row) (store.Change, error) {
	var c store.Change
	var kind, state, proposal string
	var created, decided int64
	if err := r.Scan(&c.ID, &kind, &state, &c.Key, &c.Subject, &c.Summary, &proposal, &c.QueuedBy, &c.Why, &created, &decided, &c.DecidedBy, &c.Decision); err != nil {
		return c, err
	}
	c.Kind, c.State, c.Proposal = store.ChangeKind(kind), store.ChangeState(state), json.RawMessage(proposal)
	c.Created = time.Unix(0, created)
	if decided != 0 {
		c.Decided = time.Unix(0, decided)
	}
	return c, nil
}
