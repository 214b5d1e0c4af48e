// Package sqlstore is the one SQL layer of skillgate's metadata store: the
// queries, transactions and row mapping of every [store.DB] method, written
// once over database/sql, for the drivers that hold the database.
// store/sqlite (one SQLite file) and store/postgres (a PostgreSQL database
// several processes share) each give it a *sql.DB and a [Dialect], the
// little that truly differs between them: placeholders and boolean
// literals, how text is stored, locks between processes, row locks, unique
// violations and how a set of values is bound. A driver keeps only what is
// its own: opening, migrations' files, its scan cache, and what it adds
// around a scan ([ScanHooks]) or to a process (PostgreSQL's notifications
// and leader election).
//
// The schema is the drivers': each embeds its migrations as .sql files,
// loaded with [LoadMigrations] and applied with [DB.Migrate], which keeps
// the version bookkeeping (schema_migrations) of both. sqlstore holds the
// definitions of the tables both have (schema/*.sql), which their
// migrations include, rendered with each driver's column types ([Types]).
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// DB is a [store.DB] over a database/sql database and a dialect, less the
// scan cache, which each driver keeps its own way. It is safe for
// concurrent use. Drivers embed it.
type DB struct {
	db   *sql.DB
	d    Dialect
	name string
	// Now is the clock; tests replace it.
	Now func() time.Time

	openScan  func(ctx context.Context, roots []string, forget bool) (store.ScanWriter, error)
	wholeRead func(ctx context.Context) (*sql.Conn, func(), error)
	// audit holds the prepared statements of audit appends.
	audit auditStmts
	// rebound caches the dialect's form of each query (see [DB.q]), at
	// most maxRebound of them.
	rebound  sync.Map
	nrebound atomic.Int64
}

// maxRebound bounds the queries whose dialect form is cached.
const maxRebound = 1024

// Config is what a driver gives [New] besides the database.
type Config struct {
	// Dialect is the driver's SQL dialect.
	Dialect Dialect
	// Name names the database in errors (a file's path, host:port/db),
	// never with a password.
	Name string
	// OpenScan, when set, starts the transaction of a scan (see
	// [DB.StartScan]); the driver then takes part in it with its hooks.
	// Without it a scan runs on a connection of the pool, without hooks.
	OpenScan func(ctx context.Context, roots []string, forget bool) (store.ScanWriter, error)
	// WholeRead, when set, gives the connection on which a brief read of
	// the whole registry (a catalog) runs, and a function that gives it
	// back; without it such a read runs on the pool.
	WholeRead func(ctx context.Context) (conn *sql.Conn, done func(), err error)
}

// New returns the store over db, which it owns from then on (Close closes
// it).
func New(db *sql.DB, cfg Config) *DB {
	return &DB{db: db, d: cfg.Dialect, name: cfg.Name, Now: time.Now, openScan: cfg.OpenScan, wholeRead: cfg.WholeRead}
}

var _ interface {
	store.Store
	store.ScanStreamer
	store.VersionStreamer
	store.RootApplier
	store.InstallStore
	store.AuditStore
	store.SessionStore
	store.GrantStore
	store.ChangeStore
	store.RateBuckets
} = (*DB)(nil)

// Close releases the prepared statements and closes the database.
func (s *DB) Close() error {
	s.audit.close()
	return s.db.Close()
}

// Ping checks that the database answers a query, for readiness checks.
func (s *DB) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("%s: %s: %w", s.d.Name(), s.name, err)
	}
	return nil
}

// q returns query in the dialect's form, rewritten once per query text.
// Queries are written with ? placeholders and TRUE and FALSE literals.
func (s *DB) q(query string) string {
	if v, ok := s.rebound.Load(query); ok {
		return v.(string)
	}
	out := s.d.Rebind(query)
	// Queries built for a number of values (IN lists, batches) have many
	// texts: the cache keeps the first maxRebound, the static queries
	// among them.
	if s.nrebound.Add(1) <= maxRebound {
		s.rebound.Store(query, out)
	}
	return out
}

// inTx runs fn in a transaction, committed when fn returns nil and rolled
// back otherwise; fn's error is returned as it is.
func (s *DB) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// queryAll runs query and returns its rows as scan maps them, with
// errors wrapped in what.
func queryAll[T any](ctx context.Context, s *DB, what, query string, args []any, scan func(row) (T, error)) ([]T, error) {
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// row is what *sql.Row and *sql.Rows share.
type row interface{ Scan(...any) error }

// Querier is what *sql.DB, *sql.Conn and *sql.Tx share for reading.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// in returns the condition "col is one of vals" in d's form, with the
// arguments it binds appended to args: col = ANY(?) with one array where
// the dialect binds arrays, else col IN (?, …). No values is FALSE.
func in[T any](d Dialect, col string, vals []T, args []any) (string, []any) {
	if d.Arrays() {
		return col + ` = ANY(?)`, append(args, vals)
	}
	if len(vals) == 0 {
		return `FALSE`, args
	}
	for _, v := range vals {
		args = append(args, v)
	}
	return col + ` IN (?` + strings.Repeat(`, ?`, len(vals)-1) + `)`, args
}

// strs returns ss as plain strings, which every driver binds.
func strs[S ~string](ss []S) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// inChunk bounds the values of one IN list, far below every driver's
// limit of bound values.
const inChunk = 500

// chunks calls fn with vals in slices of at most inChunk.
func chunks[T any](vals []T, fn func([]T) error) error {
	for start := 0; start < len(vals); start += inChunk {
		if err := fn(vals[start:min(start+inChunk, len(vals))]); err != nil {
			return err
		}
	}
	return nil
}

// cmpOr returns s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// nullJSON stores an absent JSON value as NULL.
func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func jsonOr(b json.RawMessage, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// raw is a nullable JSON column's value, nil for NULL.
func raw(ns sql.NullString) json.RawMessage {
	if !ns.Valid {
		return nil
	}
	return json.RawMessage(ns.String)
}
