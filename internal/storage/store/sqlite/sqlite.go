// Package sqlite is the embedded default [store.DB]: one SQLite file,
// through the pure-Go modernc.org/sqlite driver (no cgo), with schema
// migrations (migrations/*.sql) applied on open. Its queries are
// store/sqlstore's, in SQLite's dialect; what is SQLite's own stays here:
// the file and its journal modes, the bulk first scan, the packed refs of
// each root (refs.go) and the scan cache kept as files (scancache.go).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlstore"
)

// DB is a SQLite-backed store. It is safe for concurrent use.
type DB struct {
	*sqlstore.DB
	db   *sql.DB
	path string
	// BulkFirstScan lets the first scan into an empty store run without
	// the write-ahead log (see bulkLoad). Set it in processes that do
	// nothing else with the store while they scan, as `skillgate scan`
	// does: a connection opened meanwhile would wait for the scan's end.
	BulkFirstScan bool
}

var (
	_ store.DB              = (*DB)(nil)
	_ store.Store           = (*DB)(nil)
	_ store.ScanStreamer    = (*DB)(nil)
	_ store.VersionStreamer = (*DB)(nil)
	_ store.RootApplier     = (*DB)(nil)
)

// migrationFiles are the schema's versions, applied in order; each runs
// once, in its own transaction, recorded in schema_migrations. Never edit
// one that has shipped: add the next.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations in order.
func migrations() []string {
	ms, err := sqlstore.LoadMigrations(migrationFiles, "migrations", sqlstore.Types{Int64: "INTEGER", Float: "REAL", Bool: "INTEGER", IntegerBooleans: true, Serial: "INTEGER PRIMARY KEY"})
	if err != nil {
		panic(err) // the embedded files are part of the build
	}
	return ms
}

// LatestSchema is the schema version this build migrates to.
func LatestSchema() int { return len(migrations()) }

// Open opens (creating if needed) the database file at path and migrates
// it to the current schema.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := create(ctx, path); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	private(path)
	// mmap_size: reads map the file instead of a pread per page, which
	// halves the cost of reading the registry back on a rescan.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-16384)&_pragma=mmap_size(" + strconv.Itoa(mmapSize) + ")&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &DB{db: db, path: path}
	s.DB = sqlstore.New(db, sqlstore.Config{
		Dialect: dialect{},
		Name:    path,
		OpenScan: func(ctx context.Context, roots []string, forget bool) (store.ScanWriter, error) {
			w, err := s.beginScan(ctx, roots, forget)
			if err != nil {
				return nil, err
			}
			return w, nil
		},
		WholeRead: s.wholeRead,
	})
	if err := s.wal(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// The version is read under the write lock of an immediate
	// transaction: of several processes opening a new data directory at
	// once exactly one applies the migrations and the others, waiting on
	// the busy timeout, find them done.
	if err := s.Migrate(ctx, migrations(), schemaMigrationsTable); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// walWait bounds how long Open waits to return a store to WAL mode while
// another process holds it (the first scan runs with a rollback journal).
const walWait = 10 * time.Second

// wal puts the store in WAL mode, which new stores are made in and the
// first scan leaves for its duration. Changing the journal mode needs the
// database to itself and SQLite answers SQLITE_BUSY at once, without its
// busy timeout, while another process holds it: Open retries for walWait,
// then goes on with the rollback journal, which works, more slowly, until
// the next Open.
func (s *DB) wal(ctx context.Context) error {
	db := s.db
	deadline := time.Now().Add(walWait)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var mode string
		err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		if err == nil && mode == "wal" {
			return nil
		}
		if err != nil && !strings.Contains(err.Error(), "SQLITE_BUSY") {
			return err
		}
		if time.Now().After(deadline) {
			slog.Warn("store: another process holds the database; going on without WAL", "path", s.path, "mode", mode, "err", err)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// mmapSize is how much of the database file reads map (PRAGMA mmap_size).
const mmapSize = 134217728

// pageSize is the page size of new databases. A scan writes every page
// twice (to the write-ahead log, then to the database at the checkpoint),
// one system call per page each time: 16 KiB pages take a quarter of the
// calls of SQLite's default 4 KiB and hold a registry row (about 1.5 KiB)
// without overflow pages. Existing databases keep theirs.
const pageSize = 16384

// private narrows a database made by an earlier version with a looser mode
// to 0600, with its -wal and -shm files: it holds the registry, sessions,
// grants and the audit log. Best effort: a file of another user (read
// through group permissions) stays as it is.
func private(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		_ = os.Chmod(p, fi.Mode().Perm()&0o700)
	}
}

// create makes a new database at path, when there is none, with pageSize
// pages, in WAL mode and readable by its owner only (SQLite gives its -wal
// and -shm files the same mode). The page size must be chosen before
// anything is written, and setting the journal mode would fix the default.
// The database is made under a name of its
// own and linked into place, which fails if another process got there
// first: processes opening a new data directory at once never configure
// the same file together (that could fail at once with SQLITE_BUSY).
func create(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Size() > 0:
		return nil
	case err == nil:
		// An empty file made by someone else: configure it in place.
		return configure(ctx, path)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	tmp := fmt.Sprintf("%s.new-%d", path, os.Getpid())
	defer func() {
		for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
			os.Remove(p)
		}
	}()
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := configure(ctx, tmp); err != nil {
		return err
	}
	err = os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return nil
	}
	// A file system without hard links: rename, unless another process
	// made the database meanwhile.
	if _, serr := os.Stat(path); serr == nil {
		return nil
	}
	return os.Rename(tmp, path)
}

// configure sets the page size and WAL mode of the empty database file at
// path and writes its first table, so that the file is no longer empty.
func configure(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, stmt := range []string{
		"PRAGMA page_size = " + strconv.Itoa(pageSize),
		"PRAGMA journal_mode = WAL",
		schemaMigrationsTable,
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// Path returns the database file's path.
func (s *DB) Path() string { return s.path }

// schemaMigrationsTable records the schema versions applied.
const schemaMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`

// wholeRead is the connection of a brief read of the whole registry (a
// catalog), which goes through the page cache instead of the memory map:
// mapped pages count in the process's resident set, and this read touches
// every row's page (with its frontmatter and files) for a few columns.
func (s *DB) wholeRead(ctx context.Context) (*sql.Conn, func(), error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA mmap_size = 0`); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, func() {
		// The connection goes back to the pool either way: a failed reset
		// leaves it reading through the page cache, which is still correct.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA mmap_size = `+strconv.Itoa(mmapSize))
		conn.Close()
	}, nil
}

// Refs implements [store.Store]. It reads the root's packed refs (see
// refs.go), or the versions table when there are none.
func (s *DB) Refs(ctx context.Context, root string) (map[string]store.Ref, error) {
	packed, ok, err := packedRefs(ctx, s.db, root)
	if err != nil {
		return nil, fmt.Errorf("refs of %s: %w", root, err)
	}
	if ok {
		if refs, ok := unpackRefs(root, packed); ok {
			return refs, nil
		}
	}
	refs, err := queryRefs(ctx, s.db, root)
	if err != nil {
		return nil, fmt.Errorf("refs of %s: %w", root, err)
	}
	return refs, nil
}

// queryRefs reads the refs of root from the versions table.
func queryRefs(ctx context.Context, q sqlstore.Querier, root string) (map[string]store.Ref, error) {
	return sqlstore.QueryRefs(ctx, dialect{}, q, root)
}
