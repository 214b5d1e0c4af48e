// Package postgres is the [store.DB] that several skillgate processes, on
// one host or many, share: a PostgreSQL database reached through pgx and
// its connection pool, with its own schema migrations applied on open.
//
// Every change is one transaction. What must be exact across processes is
// made so by PostgreSQL's locks: a grant's use and a rate bucket's take
// are conditional updates of a locked row, the audit log's appends are
// serialized by a transaction-scoped advisory lock so that the hash chain
// stays one and gap-free, scans by another, and migrations by a third so
// that processes opening a new database at once migrate it once.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// DB is a PostgreSQL-backed store. It is safe for concurrent use, by
// several goroutines and by several processes on the same database.
type DB struct {
	pool *pgxpool.Pool
	// name is the database as errors name it: host:port/database, never
	// the password.
	name string
	// Now is the clock; tests replace it.
	Now func() time.Time
}

var _ store.DB = (*DB)(nil)

// IsDSN reports whether s names a PostgreSQL database: a postgres:// or
// postgresql:// URL.
func IsDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// defaultMaxConns is the pool size when the DSN sets no pool_max_conns:
// a serving process streams the catalog while it records audit batches,
// uses grants and takes rate tokens, each on a connection of its own.
const defaultMaxConns = 16

// Advisory lock keys (pg_advisory_xact_lock), one per serialized kind of
// change. Their values are arbitrary but fixed: every skillgate process
// on a database must agree on them.
const (
	lockMigrate int64 = 0x736b67_01 // "skg" 1: schema migrations
	lockAudit   int64 = 0x736b67_02 // the audit log's hash chain
	lockScan    int64 = 0x736b67_03 // scans of the registry
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations in order: file names start
// with their version number, from 1 without gaps.
func migrations() ([]string, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for i, n := range names {
		if want := fmt.Sprintf("migrations/%04d_", i+1); !strings.HasPrefix(n, want) {
			return nil, fmt.Errorf("migration %s: want a name starting %s", n, want)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

// LatestSchema is the schema version this build migrates to.
func LatestSchema() int {
	ms, err := migrations()
	if err != nil {
		panic(err) // the embedded files are part of the build
	}
	return len(ms)
}

// Open connects to the database dsn names (a postgres:// URL, see
// [IsDSN]) and migrates it to the current schema. The pool is configured
// by the DSN's pool_* parameters (pool_max_conns, pool_min_conns,
// pool_max_conn_lifetime, pool_max_conn_idle_time,
// pool_health_check_period); pool_max_conns defaults to 16.
func Open(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open store: PostgreSQL DSN: %w", redact(err, dsn))
	}
	if !hasParam(dsn, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	name := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", name, err)
	}
	s := &DB{pool: pool, name: name, Now: time.Now}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// hasParam reports whether the URL dsn sets the query parameter key.
func hasParam(dsn, key string) bool {
	u, err := url.Parse(dsn)
	if err != nil {
		return false
	}
	return u.Query().Has(key)
}

// redact keeps a DSN's password out of an error about it.
func redact(err error, dsn string) error {
	u, perr := url.Parse(dsn)
	if perr != nil || u.User == nil {
		return err
	}
	if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(err.Error(), pw) {
		return errors.New(strings.ReplaceAll(err.Error(), pw, "xxxxx"))
	}
	return err
}

// Name returns the database as host:port/database.
func (s *DB) Name() string { return s.name }

// Close closes the pool's connections.
func (s *DB) Close() error {
	s.pool.Close()
	return nil
}

// migrate brings the database to the current schema in one transaction
// under an advisory lock: of several processes opening a new database at
// once, one applies the migrations and the others find them done.
func (s *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", s.name, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockMigrate); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
			return err
		}
		if have > len(ms) {
			return fmt.Errorf("store %s has schema version %d, newer than this skillgate understands (%d): upgrade skillgate", s.name, have, len(ms))
		}
		for v := have + 1; v <= len(ms); v++ {
			if _, err := tx.Exec(ctx, ms[v-1]); err != nil {
				return fmt.Errorf("to version %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, v, s.Now().UnixNano()); err != nil {
				return fmt.Errorf("to version %d: %w", v, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate %s: %w", s.name, err)
	}
	return nil
}

// SchemaVersion returns the applied schema version.
func (s *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version of %s: %w", s.name, err)
	}
	return v, nil
}

// Ping checks that the database answers a query, for readiness checks.
func (s *DB) Ping(ctx context.Context) error {
	var one int
	if err := s.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("postgres: %s: %w", s.name, err)
	}
	return nil
}

// inTx runs fn in a transaction, committed when fn returns nil and rolled
// back otherwise; fn's error is returned as it is.
func (s *DB) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// lock takes the advisory lock key until tx ends.
func lock(ctx context.Context, tx pgx.Tx, key int64) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, key); err != nil {
		return fmt.Errorf("advisory lock: %w", err)
	}
	return nil
}

// isUnique reports whether err is a unique constraint's violation: a row
// another transaction wrote first.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// querier is what the pool and a transaction share.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// nullJSON stores an absent JSON value as NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// nullTxt stores an absent JSON value as NULL, and a present one as txt.
func nullTxt(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return txt(string(b))
}

func jsonOr(b []byte, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
