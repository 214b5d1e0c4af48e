package app

import (
	"context"
	"path/filepath"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
)

// auditFollowEvery is how often a followed audit log is read again.
const auditFollowEvery = 500 * time.Millisecond

// QueryAudit returns the audit records q matches.
func (a *App) QueryAudit(ctx context.Context, q audit.Filter) ([]audit.Record, error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return audit.NewLog(db).Query(ctx, q)
}

// TailAudit gives print the last records q matches (q.Last is set) and,
// with follow, every record written since that q matches, until ctx ends.
func (a *App) TailAudit(ctx context.Context, q audit.Filter, follow bool, print func([]audit.Record)) error {
	q.Last = true
	db, err := a.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	log := audit.NewLog(db)
	rs, err := log.Query(ctx, q)
	if err != nil {
		return err
	}
	last := int64(0)
	if len(rs) > 0 {
		last = rs[len(rs)-1].Seq
	} else if h, err := log.Head(ctx); err == nil {
		last = h.Seq
	}
	print(rs)
	if !follow {
		return nil
	}
	q.Last, q.Limit = false, 0
	t := time.NewTicker(auditFollowEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		q.AfterSeq = last
		rs, err := log.Query(ctx, q)
		if err != nil {
			return err
		}
		if len(rs) > 0 {
			last = rs[len(rs)-1].Seq
			print(rs)
		}
	}
}

// VerifyAudit recomputes the audit log's hash chain up to the head to
// reach: head (SEQ:HASH) when given, else the newest checkpoint of the
// checkpoint file (its signatures checked by key, or by this data
// directory's signing key), else the log's own end. Giving head and
// checkpoint, key without checkpoint, or a malformed head is a usage
// error; a broken chain is audit.ErrTampered, with the report so far.
func (a *App) VerifyAudit(ctx context.Context, head, checkpoint, key string) (audit.Report, error) {
	var want audit.Head
	switch {
	case head != "" && checkpoint != "":
		return audit.Report{}, Usagef("--head and --checkpoint are alternatives: give one")
	case key != "" && checkpoint == "":
		return audit.Report{}, Usagef("--key goes with --checkpoint")
	case head != "":
		h, err := audit.ParseHead(head)
		if err != nil {
			return audit.Report{}, Usagef("--head: %v", err)
		}
		want = h
	case checkpoint != "":
		cp, err := a.VerifyCheckpoint(checkpoint, key)
		if err != nil {
			return audit.Report{}, err
		}
		want = cp.Head
	}
	db, err := a.OpenStore(ctx)
	if err != nil {
		return audit.Report{}, err
	}
	defer db.Close()
	return audit.Verify(ctx, audit.NewLog(db), want)
}

// AuditHead returns the audit log's last record's head (zero when the
// log is empty).
func (a *App) AuditHead(ctx context.Context) (audit.Head, error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return audit.Head{}, err
	}
	defer db.Close()
	return audit.NewLog(db).Head(ctx)
}

// AuditFilter completes q, the filters of 'audit tail' and 'audit query',
// with the decision and the times since and until (RFC 3339, or a
// duration before now): a usage error naming the flag when one is wrong.
func AuditFilter(q audit.Filter, decision, since, until string, now time.Time) (audit.Filter, error) {
	q.Decision = capability.Effect(decision)
	if q.Decision != "" && !q.Decision.Valid() {
		return q, Usagef("--decision must be allow, deny or require_approval, not %q", decision)
	}
	var err error
	if q.Since, err = ParseWhen(since, now); err != nil {
		return q, Usagef("--since: %v", err)
	}
	if q.Until, err = ParseWhen(until, now); err != nil {
		return q, Usagef("--until: %v", err)
	}
	return q, nil
}

// CheckpointAudit signs the audit log's head and appends it to file, or
// to DATA/audit-checkpoints.jsonl when file is empty, and returns the
// checkpoint and the file.
func (a *App) CheckpointAudit(ctx context.Context, file string) (audit.Checkpoint, string, error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return audit.Checkpoint{}, file, err
	}
	defer db.Close()
	if file == "" {
		file = filepath.Join(a.Data(), AuditCheckpointFile)
	}
	cp, err := a.Checkpoint(ctx, audit.NewLog(db), file)
	return cp, file, err
}
