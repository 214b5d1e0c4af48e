package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
)

// migrationRateBuckets keeps the rate-limit token buckets shared by every
// process on the store (policy.Buckets).
const migrationRateBuckets = `CREATE TABLE rate_buckets (
		key    TEXT PRIMARY KEY,
		tokens REAL NOT NULL,
		at     INTEGER NOT NULL
	);`

// TakeTokens implements policy.Buckets: the bucket is refilled and taken
// from in one immediate transaction, so processes sharing the store never
// take the same token twice.
func (s *DB) TakeTokens(ctx context.Context, key string, perSecond float64, burst, want int, now time.Time) (taken int, available float64, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		tokens, at := float64(burst), now.UnixNano()
		switch err := tx.QueryRowContext(ctx, `SELECT tokens, at FROM rate_buckets WHERE key = ?`, key).Scan(&tokens, &at); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		}
		if elapsed := now.UnixNano() - at; elapsed > 0 {
			tokens = math.Min(float64(burst), tokens+float64(elapsed)/1e9*perSecond)
			at = now.UnixNano()
		}
		available = tokens
		taken = min(want, int(math.Floor(tokens)))
		tokens -= float64(taken)
		_, err := tx.ExecContext(ctx, `INSERT INTO rate_buckets (key, tokens, at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, at = excluded.at`, key, tokens, at)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("rate bucket: %w", err)
	}
	return taken, available, nil
}
