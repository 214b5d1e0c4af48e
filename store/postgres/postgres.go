// Package postgres is the [store.DB] that several skillgate processes, on
// one host or many, share: a PostgreSQL database reached through pgx's
// connection pool and its database/sql adapter, with its own schema
// migrations (migrations/*.sql) applied on open. Its queries are
// store/sqlstore's, in PostgreSQL's dialect (dialect.go); what is
// PostgreSQL's own stays here: the pool, the scan cache's table, change
// notifications, leader election and shared files (replicas.go).
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
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/skillgate/skillgate/store"
	"github.com/skillgate/skillgate/store/sqlstore"
)

// DB is a PostgreSQL-backed store. It is safe for concurrent use, by
// several goroutines and by several processes on the same database.
type DB struct {
	*sqlstore.DB
	db   *sql.DB
	pool *pgxpool.Pool
	// name is the database as errors name it: host:port/database, never
	// the password.
	name string
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

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations in order: file names start
// with their version number, from 1 without gaps.
func migrations() ([]string, error) {
	return sqlstore.LoadMigrations(migrationFiles, "migrations")
}

// LatestSchema is the schema version this build migrates to.
func LatestSchema() int {
	ms, err := migrations()
	if err != nil {
		panic(err) // the embedded files are part of the build
	}
	return len(ms)
}

// schemaMigrationsTable records the schema versions applied.
const schemaMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`

// Open connects to the database dsn names (a postgres:// URL, see
// [IsDSN]) and migrates it to the current schema. The pool is configured
// by the DSN's pool_* parameters (pool_max_conns, pool_min_conns,
// pool_max_conn_lifetime, pool_max_conn_idle_time,
// pool_health_check_period); pool_max_conns defaults to 16. Queries go
// through database/sql (pgx's stdlib adapter) over that pool.
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
	db := stdlib.OpenDBFromPool(pool)
	s := &DB{db: db, pool: pool, name: name}
	s.DB = sqlstore.New(db, sqlstore.Config{Dialect: dialect{}, Name: name, OpenScan: s.beginScan})
	ms, err := migrations()
	if err == nil {
		err = s.Migrate(ctx, ms, schemaMigrationsTable)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// beginScan starts a scan (see [sqlstore.DB.StartScan]); a scan of the
// configured roots drops the scan cache records of the others when it
// commits.
func (s *DB) beginScan(ctx context.Context, roots []string, forget bool) (store.ScanWriter, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin scan: %w", err)
	}
	var hooks sqlstore.ScanHooks
	if forget {
		hooks.BeforeCommit = func(ctx context.Context, tx *sql.Tx) error {
			// The scan cache records of roots no longer configured go with
			// the scan that dropped them.
			if _, err := tx.ExecContext(ctx, `DELETE FROM scan_cache WHERE NOT (root = ANY($1))`, txts(roots)); err != nil {
				return fmt.Errorf("scan cache: %w", err)
			}
			return nil
		}
	}
	w, err := s.StartScan(ctx, conn, roots, forget, hooks)
	if err != nil {
		return nil, err
	}
	return w, nil
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
	err := s.DB.Close()
	s.pool.Close()
	return err
}
