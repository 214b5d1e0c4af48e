package postgres

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// TakeTokens implements [store.RateBuckets]: the bucket's row is made if
// new, then locked, refilled and taken from in one transaction, so
// concurrent takers in any process wait for one another and never take
// the same token twice. Keys may hold any bytes (the policy engine joins
// principal, capability and rate with NUL bytes): they are stored as txt(key).
func (s *DB) TakeTokens(ctx context.Context, key string, perSecond float64, burst, want int, now time.Time) (taken int, available float64, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO rate_buckets (key, tokens, at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`,
			txt(key), float64(burst), now.UnixNano()); err != nil {
			return err
		}
		var tokens float64
		var at int64
		if err := tx.QueryRow(ctx, `SELECT tokens, at FROM rate_buckets WHERE key = $1 FOR UPDATE`, txt(key)).Scan(&tokens, &at); err != nil {
			return err
		}
		if elapsed := now.UnixNano() - at; elapsed > 0 {
			tokens = math.Min(float64(burst), tokens+float64(elapsed)/1e9*perSecond)
			at = now.UnixNano()
		}
		available = tokens
		taken = min(want, int(math.Floor(tokens)))
		tokens -= float64(taken)
		_, err := tx.Exec(ctx, `UPDATE rate_buckets SET tokens = $2, at = $3 WHERE key = $1`, txt(key), tokens, at)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("rate bucket: %w", err)
	}
	return taken, available, nil
}
