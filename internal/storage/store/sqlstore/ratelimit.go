package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"
)

// TakeTokens implements [store.RateBuckets]: the bucket's row is made if
// new, then read (locked where the dialect has row locks), refilled and
// taken from in one transaction, so concurrent takers in any process wait
// for one another and never take the same token twice. Keys may hold any
// bytes (the policy engine joins principal, capability and rate with NUL
// bytes): they are stored encoded for a text column.
func (s *DB) TakeTokens(ctx context.Context, key string, perSecond float64, burst, want int, now time.Time) (taken int, available float64, err error) {
	k := s.d.EncodeText(key)
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO rate_buckets (key, tokens, at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`),
			k, float64(burst), now.UnixNano()); err != nil {
			return err
		}
		var tokens float64
		var at int64
		if err := tx.QueryRowContext(ctx, s.q(`SELECT tokens, at FROM rate_buckets WHERE key = ?`+s.d.ForUpdate()), k).Scan(&tokens, &at); err != nil {
			return err
		}
		if elapsed := now.UnixNano() - at; elapsed > 0 {
			tokens = math.Min(float64(burst), tokens+float64(elapsed)/1e9*perSecond)
			at = now.UnixNano()
		}
		available = tokens
		taken = min(want, int(math.Floor(tokens)))
		tokens -= float64(taken)
		_, err := tx.ExecContext(ctx, s.q(`UPDATE rate_buckets SET tokens = ?, at = ? WHERE key = ?`), tokens, at, k)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("rate bucket: %w", err)
	}
	return taken, available, nil
}
