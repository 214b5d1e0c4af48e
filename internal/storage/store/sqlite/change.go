package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// migrationChanges creates the changes queue (changes a human decides on
// the admin changes page) and what applied promote_provider changes
// registered: executors and their backends. A backend's (executor,
// provider) pair is unique: an executor has at most one registered backend
// per provider.
const migrationChanges = `CREATE TABLE changes (
		id         INTEGER PRIMARY KEY,
		kind       TEXT NOT NULL,
		state      TEXT NOT NULL,
		key        TEXT NOT NULL UNIQUE,
		subject    TEXT NOT NULL,
		summary    TEXT NOT NULL,
		proposal   TEXT NOT NULL,
		queued_by  TEXT NOT NULL,
		why        TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		decided_at INTEGER NOT NULL DEFAULT 0,
		decided_by TEXT NOT NULL DEFAULT '',
		decision   TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE registered_executors (
		change_id  INTEGER NOT NULL REFERENCES changes(id),
		executor   TEXT NOT NULL,
		definition TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE registered_backends (
		change_id INTEGER NOT NULL REFERENCES changes(id),
		executor  TEXT NOT NULL,
		provider  TEXT NOT NULL,
		skill     TEXT NOT NULL,
		server    TEXT NOT NULL,
		tool      TEXT NOT NULL,
		arguments TEXT NOT NULL,
		UNIQUE (executor, provider)
	);`

var _ store.ChangeStore = (*DB)(nil)

const changeCols = `id, kind, state, key, subject, summary, proposal, queued_by, why, created_at, decided_at, decided_by, decision`

// QueueChange implements [store.ChangeStore].
func (s *DB) QueueChange(ctx context.Context, c store.Change, rec store.AuditRecord, seal store.AuditSeal) (store.Change, bool, error) {
	var out store.Change
	created := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		prev, err := scanChange(tx.QueryRowContext(ctx, `SELECT `+changeCols+` FROM changes WHERE key = ?`, c.Key))
		if err == nil {
			out = prev
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if c.Created.IsZero() {
			c.Created = s.Now()
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO changes (kind, state, key, subject, summary, proposal, queued_by, why, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, string(c.Kind), string(store.ChangePending), c.Key, c.Subject, c.Summary,
			string(c.Proposal), c.QueuedBy, c.Why, c.Created.UnixNano())
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if rec.Time.IsZero() {
			rec.Time = c.Created
		}
		if rec.Subject == "" {
			rec.Subject = fmt.Sprintf("change %d", id)
		}
		if _, err := appendAudit(ctx, tx, seal, rec); err != nil {
			return err
		}
		out, err = scanChange(tx.QueryRowContext(ctx, `SELECT `+changeCols+` FROM changes WHERE id = ?`, id))
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
	q := `SELECT ` + changeCols + ` FROM changes WHERE 1 = 1`
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
		q += ` AND state IN (?` + strings.Repeat(`, ?`, len(f.States)-1) + `)`
		for _, st := range f.States {
			args = append(args, string(st))
		}
	}
	q += ` ORDER BY id DESC`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	defer rows.Close()
	var out []store.Change
	for rows.Next() {
		c, err := scanChange(rows)
		if err != nil {
			return nil, fmt.Errorf("changes: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DecideChange implements [store.ChangeStore].
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
		cur, err := scanChange(tx.QueryRowContext(ctx, `SELECT `+changeCols+` FROM changes WHERE id = ?`, d.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("change %d: %w", d.ID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if cur.State != store.ChangePending {
			return fmt.Errorf("change %d is %s, not pending: %w", d.ID, cur.State, store.ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE changes SET state = ?, decided_at = ?, decided_by = ?, decision = ? WHERE id = ?`,
			string(d.To), at.UnixNano(), d.By, d.Reason, d.ID); err != nil {
			return err
		}
		if r := d.Register; r != nil {
			if err := register(ctx, tx, d.ID, r); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE install_generation SET n = n + 1 WHERE id = 1`); err != nil {
				return fmt.Errorf("install generation: %w", err)
			}
		}
		if rec.Time.IsZero() {
			rec.Time = at
		}
		if rec.Subject == "" {
			rec.Subject = fmt.Sprintf("change %d", d.ID)
		}
		if _, err := appendAudit(ctx, tx, seal, rec); err != nil {
			return err
		}
		out, err = scanChange(tx.QueryRowContext(ctx, `SELECT `+changeCols+` FROM changes WHERE id = ?`, d.ID))
		return err
	})
	if err != nil {
		return store.Change{}, fmt.Errorf("decide change %d: %w", d.ID, err)
	}
	return out, nil
}

// register records r inside tx.
func register(ctx context.Context, tx *sql.Tx, id int64, r *store.Registration) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO registered_executors (change_id, executor, definition) VALUES (?, ?, ?)`,
		id, r.Executor, string(r.Definition)); err != nil {
		return err
	}
	for _, b := range r.Backends {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM registered_backends WHERE executor = ? AND provider = ?`,
			r.Executor, b.Provider).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("executor %s already has a registered %s backend: %w", r.Executor, b.Provider, store.ErrConflict)
		}
		args, err := json.Marshal(b.Arguments)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO registered_backends (change_id, executor, provider, skill, server, tool, arguments)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, id, r.Executor, b.Provider, b.Skill, b.Server, b.Tool, string(args)); err != nil {
			return err
		}
	}
	return nil
}

// Registrations implements [store.ChangeStore].
func (s *DB) Registrations(ctx context.Context) ([]store.Registration, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT change_id, executor, definition FROM registered_executors ORDER BY change_id`)
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
	brows, err := s.db.QueryContext(ctx, `SELECT change_id, provider, skill, server, tool, arguments FROM registered_backends ORDER BY change_id, provider`)
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

func scanChange(r scanner) (store.Change, error) {
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
