package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
)

const insertAudit = `INSERT INTO audit (seq, time, actor, session, action, subject, decision, reasons, args_hash, latency_ns, data, prev, hash)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`

const selectAuditHead = `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`

// appendAudit seals r with seal against the log's current head and inserts
// it inside tx, so a state change and its audit record commit or roll back
// together. A zero r.Time is set to now.
func appendAudit(ctx context.Context, tx pgx.Tx, seal store.AuditSeal, r store.AuditRecord) (store.AuditRecord, error) {
	out, err := appendAudits(ctx, tx, seal, []store.AuditRecord{r}, time.Now)
	if err != nil {
		return store.AuditRecord{}, err
	}
	return out[0], nil
}

// appendAudits seals rs with seal and inserts them after the chain's head,
// in tx. The head is read under the audit lock, held until tx ends: an
// append in another transaction, of this process or another, waits for
// this one to commit and then chains to its last record, so the log stays
// one chain without gaps.
func appendAudits(ctx context.Context, tx pgx.Tx, seal store.AuditSeal, rs []store.AuditRecord, now func() time.Time) ([]store.AuditRecord, error) {
	if seal == nil {
		return nil, errors.New("append audit records: no seal given (audit.SealStored)")
	}
	if err := lock(ctx, tx, lockAudit); err != nil {
		return nil, fmt.Errorf("append audit records: %w", err)
	}
	var head store.AuditHead
	err := tx.QueryRow(ctx, selectAuditHead).Scan(&head.Seq, &head.Hash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("audit head: %w", err)
	}
	out := make([]store.AuditRecord, 0, len(rs))
	batch := &pgx.Batch{}
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
		batch.Queue(insertAudit, sealed.Seq, sealed.Time.UnixNano(), sealed.Actor, sealed.Session, sealed.Action, sealed.Subject,
			string(sealed.Decision), string(reasons), sealed.ArgsHash, sealed.LatencyNS, nullJSON(sealed.Data), sealed.Prev, sealed.Hash)
		head = store.AuditHead{Seq: sealed.Seq, Hash: sealed.Hash}
		out = append(out, sealed)
	}
	// One round trip for the batch: the group-commit writer appends many
	// records at once while agents call tools.
	br := tx.SendBatch(ctx, batch)
	for _, r := range out {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, fmt.Errorf("append audit record %d: %w", r.Seq, err)
		}
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("append audit records: %w", err)
	}
	return out, nil
}

// AppendAudit implements [store.AuditStore]: the records are sealed and
// stored in one transaction.
func (s *DB) AppendAudit(ctx context.Context, seal store.AuditSeal, rs ...store.AuditRecord) ([]store.AuditRecord, error) {
	var out []store.AuditRecord
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = appendAudits(ctx, tx, seal, rs, s.Now)
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
	err := s.pool.QueryRow(ctx, selectAuditHead).Scan(&h.Seq, &h.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
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
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	add := func(cond string, v any) { where = append(where, cond+" "+arg(v)) }
	if f.AfterSeq > 0 {
		add("seq >", f.AfterSeq)
	}
	if f.BeforeSeq > 0 {
		add("seq <", f.BeforeSeq)
	}
	if f.Actor != "" {
		add("actor =", f.Actor)
	}
	if f.Session != "" {
		add("session =", f.Session)
	}
	if f.Subject != "" {
		add("subject =", f.Subject)
	}
	if f.Decision != "" {
		add("decision =", string(f.Decision))
	}
	if a := f.Action; a != "" {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			a = p
		}
		if strings.HasSuffix(a, ".") {
			where = append(where, "left(action, "+arg(len(a))+") = "+arg(a))
		} else {
			add("action =", a)
		}
	}
	if !f.Since.IsZero() {
		add("time >=", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add("time <", f.Until.UnixNano())
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
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query audit: %w", err)
	}
	defer rows.Close()
	var out []store.AuditRecord
	for rows.Next() {
		r, err := scanAudit(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query audit: %w", err)
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
		rows, err := s.pool.Query(ctx, `SELECT `+auditColumns+` FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2`, afterSeq, page)
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
		rows.Close()
		if err := rows.Err(); err != nil {
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

func scanAudit(rows pgx.Rows) (store.AuditRecord, error) {
	var r store.AuditRecord
	var t int64
	var reasons, decision string
	var data *string
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
	if data != nil {
		r.Data = json.RawMessage(*data)
	}
	return r, nil
}
