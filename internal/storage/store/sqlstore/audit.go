package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
)

const insertAudit = `INSERT INTO audit (seq, time, actor, session, action, subject, decision, reasons, args_hash, latency_ns, data, prev, hash)
	VALUES `

// auditRow is the placeholders of one audit row.
const auditRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const selectAuditHead = `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`

// auditBatch bounds the rows of one multi-row audit insert.
const auditBatch = 1000

// auditStmts are the statements of an append, prepared once per DB where
// rows are inserted one by one: the group-commit writer appends a batch
// every few milliseconds while agents call tools, and parsing the SQL
// again each time was most of its cost.
type auditStmts struct {
	once         sync.Once
	head, insert *sql.Stmt
	err          error
}

// auditPrepared returns the DB's append statements, preparing them on first use.
func (s *DB) auditPrepared(ctx context.Context) (*auditStmts, error) {
	a := &s.audit
	a.once.Do(func() {
		if a.head, a.err = s.db.PrepareContext(ctx, selectAuditHead); a.err != nil {
			return
		}
		if a.insert, a.err = s.db.PrepareContext(ctx, s.q(insertAudit+auditRow)); a.err != nil {
			a.head.Close()
		}
	})
	return a, a.err
}

func (a *auditStmts) close() {
	if a.err == nil && a.head != nil {
		a.head.Close()
		a.insert.Close()
	}
}

// appendAudit seals r with seal against the log's current head and inserts
// it inside tx, so a state change and its audit record commit or roll back
// together. A zero r.Time is set to now.
func (s *DB) appendAudit(ctx context.Context, tx *sql.Tx, seal store.AuditSeal, r store.AuditRecord) (store.AuditRecord, error) {
	out, err := s.appendAudits(ctx, tx, seal, []store.AuditRecord{r}, time.Now, nil)
	if err != nil {
		return store.AuditRecord{}, err
	}
	return out[0], nil
}

// appendAudits seals rs after the chain's head, in order, and inserts them
// in tx. The head is read under [LockAudit], held until tx ends: an append
// in another transaction, of this process or another, waits for this one
// to commit and then chains to its last record, so the log stays one
// chain without gaps. stmts, when not nil, are the DB's prepared
// statements (dialects that insert row by row).
func (s *DB) appendAudits(ctx context.Context, tx *sql.Tx, seal store.AuditSeal, rs []store.AuditRecord, now func() time.Time, stmts *auditStmts) ([]store.AuditRecord, error) {
	if seal == nil {
		return nil, errors.New("append audit records: no seal given (audit.SealStored)")
	}
	if err := s.d.Lock(ctx, tx, LockAudit); err != nil {
		return nil, fmt.Errorf("append audit records: %w", err)
	}
	var head store.AuditHead
	var headRow *sql.Row
	if stmts != nil {
		headRow = tx.StmtContext(ctx, stmts.head).QueryRowContext(ctx)
	} else {
		headRow = tx.QueryRowContext(ctx, selectAuditHead)
	}
	if err := headRow.Scan(&head.Seq, &head.Hash); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("audit head: %w", err)
	}
	out := make([]store.AuditRecord, 0, len(rs))
	args := make([]any, 0, 13*min(len(rs), auditBatch))
	for _, r := range rs {
		if r.Time.IsZero() {
			r.Time = now()
		}
		sealed, err := seal(head, r)
		if err != nil {
			return nil, err
		}
		reasons, err := json.Marshal(nonNil(sealed.Reasons))
		if err != nil {
			return nil, fmt.Errorf("audit record %d: %w", sealed.Seq, err)
		}
		args = append(args, sealed.Seq, sealed.Time.UnixNano(), sealed.Actor, sealed.Session, sealed.Action, sealed.Subject,
			string(sealed.Decision), string(reasons), sealed.ArgsHash, sealed.LatencyNS, nullJSON(sealed.Data), sealed.Prev, sealed.Hash)
		head = store.AuditHead{Seq: sealed.Seq, Hash: sealed.Hash}
		out = append(out, sealed)
	}
	if err := s.insertAudits(ctx, tx, out, args, stmts); err != nil {
		return nil, err
	}
	return out, nil
}

// insertAudits inserts the sealed records rs, whose values are args (13 a
// record): in multi-row statements, one round trip each, where the
// dialect batches inserts, else row by row through a prepared statement.
func (s *DB) insertAudits(ctx context.Context, tx *sql.Tx, rs []store.AuditRecord, args []any, stmts *auditStmts) error {
	const cols = 13
	if s.d.BatchInserts() {
		for start := 0; start < len(rs); start += auditBatch {
			end := min(start+auditBatch, len(rs))
			q := insertAudit + auditRow + strings.Repeat(", "+auditRow, end-start-1)
			if _, err := tx.ExecContext(ctx, s.q(q), args[start*cols:end*cols]...); err != nil {
				return fmt.Errorf("append audit records %d…%d: %w", rs[start].Seq, rs[end-1].Seq, err)
			}
		}
		return nil
	}
	var stmt *sql.Stmt
	if stmts != nil {
		stmt = tx.StmtContext(ctx, stmts.insert)
	} else {
		var err error
		if stmt, err = tx.PrepareContext(ctx, s.q(insertAudit+auditRow)); err != nil {
			return fmt.Errorf("append audit records: %w", err)
		}
	}
	defer stmt.Close()
	for i, r := range rs {
		if _, err := stmt.ExecContext(ctx, args[i*cols:(i+1)*cols]...); err != nil {
			return fmt.Errorf("append audit record %d: %w", r.Seq, err)
		}
	}
	return nil
}

// AppendAudit implements [store.AuditStore]: the records are sealed and
// stored in one transaction.
func (s *DB) AppendAudit(ctx context.Context, seal store.AuditSeal, rs ...store.AuditRecord) ([]store.AuditRecord, error) {
	var stmts *auditStmts
	if !s.d.BatchInserts() {
		var err error
		if stmts, err = s.auditPrepared(ctx); err != nil {
			return nil, fmt.Errorf("append audit records: %w", err)
		}
	}
	var out []store.AuditRecord
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.appendAudits(ctx, tx, seal, rs, s.Now, stmts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AuditHead implements [store.AuditStore].
func (s *DB) AuditHead(ctx context.Context) (store.AuditHead, error) {
	var h store.AuditHead
	err := s.db.QueryRowContext(ctx, selectAuditHead).Scan(&h.Seq, &h.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return store.AuditHead{}, nil
	}
	if err != nil {
		return store.AuditHead{}, fmt.Errorf("audit head: %w", err)
	}
	return h, nil
}

const auditColumns = `seq, time, actor, session, action, subject, decision, reasons, args_hash, latency_ns, data, prev, hash`

// AuditRecords implements [store.AuditStore].
func (s *DB) AuditRecords(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.AfterSeq > 0 {
		add("seq > ?", f.AfterSeq)
	}
	if f.BeforeSeq > 0 {
		add("seq < ?", f.BeforeSeq)
	}
	if f.Actor != "" {
		add("actor = ?", f.Actor)
	}
	if f.Session != "" {
		add("session = ?", f.Session)
	}
	if f.Subject != "" {
		add("subject = ?", f.Subject)
	}
	if f.Decision != "" {
		add("decision = ?", string(f.Decision))
	}
	if a := f.Action; a != "" {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			a = p
		}
		if strings.HasSuffix(a, ".") {
			add("substr(action, 1, ?) = ?", len(a))
			args = append(args, a)
		} else {
			add("action = ?", a)
		}
	}
	if !f.Since.IsZero() {
		add("time >= ?", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add("time < ?", f.Until.UnixNano())
	}
	q := `SELECT ` + auditColumns + ` FROM audit`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	order := "ASC"
	if f.Last {
		order = "DESC"
	}
	q += ` ORDER BY seq ` + order
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	out, err := queryAll(ctx, s, "query audit", q, args, scanAudit)
	if err != nil {
		return nil, err
	}
	if f.Last {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// ScanAudit implements [store.AuditStore], reading in pages so that a long
// log is never held in memory at once.
func (s *DB) ScanAudit(ctx context.Context, afterSeq int64, fn func(store.AuditRecord) error) error {
	const page = 1000
	for {
		rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+auditColumns+` FROM audit WHERE seq > ? ORDER BY seq LIMIT ?`), afterSeq, page)
		if err != nil {
			return fmt.Errorf("scan audit: %w", err)
		}
		var batch []store.AuditRecord
		for rows.Next() {
			r, err := scanAudit(rows)
			if err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, r)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("scan audit: %w", err)
		}
		for _, r := range batch {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(batch) < page {
			return nil
		}
		afterSeq = batch[len(batch)-1].Seq
	}
}

func scanAudit(rows row) (store.AuditRecord, error) {
	var r store.AuditRecord
	var t int64
	var reasons, decision string
	var data sql.NullString
	if err := rows.Scan(&r.Seq, &t, &r.Actor, &r.Session, &r.Action, &r.Subject, &decision, &reasons, &r.ArgsHash, &r.LatencyNS, &data, &r.Prev, &r.Hash); err != nil {
		return r, fmt.Errorf("read audit record: %w", err)
	}
	r.Decision = capability.Effect(decision)
	r.Time = time.Unix(0, t).UTC()
	if err := json.Unmarshal([]byte(reasons), &r.Reasons); err != nil {
		return r, fmt.Errorf("read audit record %d: reasons: %w", r.Seq, err)
	}
	if len(r.Reasons) == 0 {
		r.Reasons = nil
	}
	r.Data = raw(data)
	return r, nil
}
