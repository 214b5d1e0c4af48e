package app

import (
	"context"
	"time"

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
