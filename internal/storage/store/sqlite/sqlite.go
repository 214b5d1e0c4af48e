// Package sqlite is the embedded default [store.Store]: one SQLite file,
// through the pure-Go modernc.org/sqlite driver (no cgo), with schema
// migrations applied on open.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is a SQLite-backed store. It is safe for concurrent use.
type DB struct {
	db   *sql.DB
	path string
	// Now is the clock; tests replace it.
	Now func() time.Time
	// BulkFirstScan lets the first scan into an empty store run without
	// the write-ahead log (see bulkLoad). Set it in processes that do
	// nothing else with the store while they scan, as `skillgate scan`
	// does: a connection opened meanwhile would wait for the scan's end.
	BulkFirstScan bool
	// audit holds the prepared statements of audit appends.
	audit auditStmts
}

var (
	_ store.DB              = (*DB)(nil)
	_ store.Store           = (*DB)(nil)
	_ store.ScanStreamer    = (*DB)(nil)
	_ store.VersionStreamer = (*DB)(nil)
	_ store.RootApplier     = (*DB)(nil)
)

// migrations are applied in order; each runs once, in its own transaction,
// recorded in schema_migrations. Never edit one that has shipped: append.
var migrations = []string{
	`CREATE TABLE roots (
		path      TEXT PRIMARY KEY,
		scope     TEXT NOT NULL,
		position  INTEGER NOT NULL,
		last_scan INTEGER NOT NULL,
		notes     TEXT NOT NULL DEFAULT '[]'
	);
	CREATE TABLE versions (
		id           INTEGER PRIMARY KEY,
		key          TEXT NOT NULL,
		name         TEXT NOT NULL,
		description  TEXT NOT NULL,
		category     TEXT NOT NULL,
		version      TEXT NOT NULL,
		tier         INTEGER NOT NULL,
		invokable_by TEXT NOT NULL,
		root         TEXT NOT NULL REFERENCES roots(path) ON DELETE CASCADE,
		dir          TEXT NOT NULL,
		rel          TEXT NOT NULL,
		file         TEXT NOT NULL,
		digest       TEXT NOT NULL,
		fingerprint  TEXT NOT NULL,
		valid        INTEGER NOT NULL,
		enabled      INTEGER NOT NULL,
		frontmatter  TEXT,
		diagnostics  TEXT NOT NULL,
		files        TEXT,
		current      INTEGER NOT NULL,
		first_seen   INTEGER NOT NULL,
		last_seen    INTEGER NOT NULL,
		UNIQUE (dir, digest)
	);
	CREATE INDEX versions_root_current ON versions (root, current);
	CREATE INDEX versions_key ON versions (key);
	CREATE UNIQUE INDEX versions_one_current ON versions (dir) WHERE current = 1;`,
	// 2: agent sessions (store.SessionStore, in session.go).
	`CREATE TABLE sessions (
		id         TEXT PRIMARY KEY,
		tenant     TEXT NOT NULL,
		agent      TEXT NOT NULL,
		tier       TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE TABLE session_skills (
		session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		position   INTEGER NOT NULL,
		key        TEXT NOT NULL,
		mount      TEXT NOT NULL,
		loaded_at  INTEGER NOT NULL,
		PRIMARY KEY (session_id, key),
		UNIQUE (session_id, mount)
	);`,
	// 3: directory listings, since kept in discover's scan cache
	// (scancache.go), and dropped by migration 11.
	`CREATE TABLE dir_listings (
		root    TEXT NOT NULL REFERENCES roots(path) ON DELETE CASCADE,
		path    TEXT PRIMARY KEY,
		mtime   INTEGER NOT NULL,
		entries BLOB NOT NULL
	);
	CREATE INDEX dir_listings_root ON dir_listings (root);`,
	// 4: the hash-chained audit log (audit.go).
	migrationAudit,
	// 5: installs, their states and artefacts (install.go).
	migrationInstall,
	// 6: policies and approval grants (policy.go).
	migrationPolicy,
	// 7: the packed refs of each root (refs.go).
	migrationRootRefs,
	// 8: rate-limit buckets shared by processes (ratelimit.go).
	migrationRateBuckets,
	// 9: when each session was last used, for idle expiry (session.go).
	migrationSessionLastUsed,
	// 10: the registry generation, bumped by every change of what the
	// registry serves (generation.go).
	migrationRegistryGeneration,
	// 11: the directory listings of migration 3 move to the scan cache.
	`DROP TABLE dir_listings;`,
	// 12: where an install came from: source, ref, commit, archive
	// digest, fetch time (install.go).
	`ALTER TABLE installs ADD COLUMN provenance TEXT;`,
	// 13: each root's trust (capability.Trust), which every skill under it
	// has. Roots recorded before trust existed were never trusted more
	// than an import.
	`ALTER TABLE roots ADD COLUMN trust TEXT NOT NULL DEFAULT 'imported';`,
	// 14: per-file digests (see migrationFileDigests).
	migrationFileDigests,
	// 15: the changes queue and what applied changes registered
	// (change.go).
	migrationChanges,
}

// migrationFileDigests makes the next scan parse again every current valid
// version recorded before the file list held each file's own SHA-256
// (store.Version.Files "digest", which the MCP Skills extension serves):
// its fingerprint is cleared, so no directory matches it, and the packed
// refs are dropped (a scan reads them again from the versions table). The
// re-parse finds the same tree digest, so it updates the same row (the
// file list with digests) and approvals pinned to the digest still hold.
// Until that scan the extension computes the digests itself (see package
// mcpskills).
const migrationFileDigests = `UPDATE versions SET fingerprint = ''
		WHERE current = 1 AND valid = 1 AND files IS NOT NULL AND files != '[]' AND instr(files, '"digest"') = 0;
	DELETE FROM root_refs;`

// LatestSchema is the schema version this build migrates to.
func LatestSchema() int { return len(migrations) }

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
	s := &DB{db: db, path: path, Now: time.Now}
	if err := s.wal(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
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
	deadline := time.Now().Add(walWait)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var mode string
		err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
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

// Close closes the database.
func (s *DB) Close() error {
	s.audit.close()
	return s.db.Close()
}

// schemaMigrationsTable records the schema versions applied.
const schemaMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`

// migrate brings the database to the current schema in one immediate
// transaction: the version is read under the write lock, so of several
// processes opening a new data directory at once exactly one applies the
// migrations and the others, waiting on the busy timeout, find them done.
func (s *DB) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, schemaMigrationsTable); err != nil {
		return fmt.Errorf("migrate %s: %w", s.path, err)
	}
	var have int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("migrate %s: %w", s.path, err)
	}
	if have == len(migrations) {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
			return fmt.Errorf("migrate %s: %w", s.path, err)
		}
		if have > len(migrations) {
			return fmt.Errorf("store %s has schema version %d, newer than this skillgate understands (%d): upgrade skillgate", s.path, have, len(migrations))
		}
		for v := have + 1; v <= len(migrations); v++ {
			if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
				return fmt.Errorf("migrate %s to version %d: %w", s.path, v, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, s.Now().UnixNano()); err != nil {
				return fmt.Errorf("migrate %s to version %d: %w", s.path, v, err)
			}
		}
		return nil
	})
}

// SchemaVersion returns the applied schema version.
func (s *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

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
func queryRefs(ctx context.Context, q querier, root string) (map[string]store.Ref, error) {
	rows, err := q.QueryContext(ctx, `SELECT dir, fingerprint, key, name, valid,
			CASE WHEN valid = 1 THEN NULL ELSE diagnostics END
		FROM versions WHERE root = ? AND current = 1`, root)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]store.Ref{}
	for rows.Next() {
		var r store.Ref
		var dir string
		var diags sql.NullString
		if err := rows.Scan(&dir, &r.Fingerprint, &r.Key, &r.Name, &r.Valid, &diags); err != nil {
			return nil, err
		}
		if diags.Valid {
			r.Diagnostics = json.RawMessage(diags.String)
		}
		out[dir] = r
	}
	return out, rows.Err()
}

// ApplyScans implements [store.Store].
func (s *DB) ApplyScans(ctx context.Context, scans []store.RootScan) error {
	roots := make([]string, 0, len(scans))
	for _, sc := range scans {
		roots = append(roots, sc.Root)
	}
	w, err := s.beginScan(ctx, roots, true)
	if err != nil {
		return err
	}
	for _, sc := range scans {
		if err := w.Root(ctx, sc); err != nil {
			w.Rollback()
			return err
		}
	}
	return w.Commit()
}

// BeginScan implements [store.ScanStreamer].
func (s *DB) BeginScan(ctx context.Context, roots []string) (store.ScanWriter, error) {
	return s.beginScan(ctx, roots, true)
}

// ApplyRoot implements [store.RootApplier].
func (s *DB) ApplyRoot(ctx context.Context, sc store.RootScan) error {
	w, err := s.beginScan(ctx, nil, false)
	if err != nil {
		return err
	}
	if err := w.Root(ctx, sc); err != nil {
		w.Rollback()
		return err
	}
	return w.Commit()
}

// beginScan starts a scan of roots; with forget, the roots not among them
// are forgotten (but the root of store.ScopeImported).
func (s *DB) beginScan(ctx context.Context, roots []string, forget bool) (*scanWriter, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	bulk := s.bulkLoad(ctx, conn)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		w := &scanWriter{db: s, conn: conn, bulk: bulk}
		w.release()
		return nil, err
	}
	var forgot int64
	if forget {
		keep := []any{store.ScopeImported}
		for _, r := range roots {
			keep = append(keep, r)
		}
		// The root of the installs' skills is never configured: scans
		// leave it to ApplyRoot.
		q := `DELETE FROM roots WHERE scope != ?`
		if len(keep) > 1 {
			q += ` AND path NOT IN (?` + strings.Repeat(`, ?`, len(keep)-2) + `)`
		}
		res, err := tx.ExecContext(ctx, q, keep...)
		if err != nil {
			tx.Rollback()
			return nil, fmt.Errorf("forget old roots: %w", err)
		}
		forgot, _ = res.RowsAffected()
	}
	return &scanWriter{db: s, conn: conn, bulk: bulk, tx: tx, now: s.Now().UnixNano(), nested: nested(roots), roots: roots, changed: forgot > 0, keepRoots: !forget}, nil
}

// bulkLoad prepares conn for the first scan into an empty store. In WAL
// mode every page of a scan is written twice, to the log and then to the
// database at the checkpoint; the first scan writes the whole registry
// (about 2 KB per skill), and the second copy is most of its commit. A
// rollback journal records only the pages that existed before a
// transaction, none here, so the first scan runs in that mode and writes
// each page once; the store returns to WAL when it ends (see release). The
// switch needs the database to itself: when another connection, in this
// process or another, has it open, the mode stays WAL and nothing else
// changes. A crash in between leaves a journal that the next open rolls
// back, and that open's pragmas restore WAL.
func (s *DB) bulkLoad(ctx context.Context, conn *sql.Conn) bool {
	if !s.BulkFirstScan {
		return false
	}
	var empty bool
	if err := conn.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM versions) AND NOT EXISTS (SELECT 1 FROM roots)`).Scan(&empty); err != nil || !empty {
		return false
	}
	// This process's idle connections would keep the log open.
	s.db.SetMaxIdleConns(0)
	s.db.SetMaxIdleConns(maxIdle)
	var mode string
	if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode = DELETE`).Scan(&mode); err != nil || mode != "delete" {
		return false
	}
	return true
}

// maxIdle is the database/sql default of idle connections kept open.
const maxIdle = 2

// nested reports whether a root is below another: a skill directory may
// then be recorded under either, so refs are not packed per root.
func nested(roots []string) bool {
	sep := string(filepath.Separator)
	for _, a := range roots {
		prefix := a
		if !strings.HasSuffix(prefix, sep) {
			prefix += sep
		}
		for _, b := range roots {
			if a != b && strings.HasPrefix(b, prefix) {
				return true
			}
		}
	}
	return false
}

// scanWriter is the transaction of one scan (store.ScanWriter).
type scanWriter struct {
	db *DB
	// conn holds the transaction; bulk says it runs without the
	// write-ahead log (see bulkLoad).
	conn *sql.Conn
	bulk bool
	tx   *sql.Tx
	now  int64
	// root is the root being recorded; prev its current versions before
	// its upserts, read at the first one.
	root string
	prev map[string]current
	// full is the upsert of a full batch, prepared once.
	full *sql.Stmt
	args []any
	// changes are the current root's, applied to its packed refs when the
	// root is done (endRoot). nested says the roots overlap, and keep no
	// packed refs. roots are the scan's (BeginScan's), whose scan cache
	// records are kept once the scan is committed.
	changes *rootChanges
	nested  bool
	roots   []string
	// changed says the scan changed what the registry serves: the commit
	// then bumps the registry generation.
	changed bool
	// keepRoots says the scan records one root among others (ApplyRoot):
	// the scan cache of the others is kept.
	keepRoots bool
}

// current is what an upsert needs to know of a directory's current version.
type current struct {
	id      int64
	digest  string
	enabled bool
}

// upsertBatch is how many versions one statement writes: one statement per
// row costs a lock round trip each, which dominated cold scans of
// thousands of skills.
const upsertBatch = 64

// Root implements [store.ScanWriter].
func (w *scanWriter) Root(ctx context.Context, sc store.RootScan) error {
	if err := w.endRoot(ctx); err != nil {
		return err
	}
	w.root, w.prev = sc.Root, nil
	if err := w.rootScan(ctx, sc); err != nil {
		return fmt.Errorf("apply scan of %s: %w", sc.Root, err)
	}
	w.changes = &rootChanges{root: sc.Root, gone: sc.Gone}
	return w.Upsert(ctx, sc.Upserts)
}

// endRoot writes what remains of the current root's scan: its packed refs.
func (w *scanWriter) endRoot(ctx context.Context) error {
	rc := w.changes
	w.changes = nil
	if rc == nil {
		return nil
	}
	if err := w.writeRefs(ctx, rc); err != nil {
		return fmt.Errorf("apply scan of %s: %w", rc.root, err)
	}
	return nil
}

func (w *scanWriter) rootScan(ctx context.Context, sc store.RootScan) error {
	// A root whose scope or position changed changes precedence; one
	// whose trust changed changes what agents are shown of its skills.
	var scope, was string
	var pos int
	trust := cmpOr(sc.Trust, "imported")
	switch err := w.tx.QueryRowContext(ctx, `SELECT scope, trust, position FROM roots WHERE path = ?`, sc.Root).Scan(&scope, &was, &pos); {
	case err == nil:
		if scope != sc.Scope || pos != sc.Position || was != trust {
			w.changed = true
		}
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	notes, _ := json.Marshal(nonNil(sc.Notes))
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO roots (path, scope, trust, position, last_scan, notes) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET scope = excluded.scope, trust = excluded.trust, position = excluded.position, last_scan = excluded.last_scan, notes = excluded.notes`,
		sc.Root, sc.Scope, trust, sc.Position, w.now, string(notes)); err != nil {
		return err
	}
	for _, dir := range sc.Gone {
		res, err := w.tx.ExecContext(ctx, `DELETE FROM versions WHERE dir = ?`, dir)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			w.changed = true
		}
	}
	return nil
}

// Upsert implements [store.ScanWriter].
func (w *scanWriter) Upsert(ctx context.Context, vs []store.Version) error {
	if len(vs) == 0 {
		return nil
	}
	if err := w.upsert(ctx, vs); err != nil {
		return fmt.Errorf("apply scan of %s: %w", w.root, err)
	}
	w.changed = true
	if rc := w.changes; rc != nil {
		rc.upserts = append(rc.upserts, vs)
		rc.prevEmpty = len(w.prev) == 0
	}
	return nil
}

func (w *scanWriter) upsert(ctx context.Context, vs []store.Version) error {
	if w.prev == nil {
		// One query for the current versions of the root, not one per skill.
		w.prev = map[string]current{}
		rows, err := w.tx.QueryContext(ctx, `SELECT id, dir, digest, enabled FROM versions WHERE root = ? AND current = 1`, w.root)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c current
			var dir string
			if err := rows.Scan(&c.id, &dir, &c.digest, &c.enabled); err != nil {
				rows.Close()
				return err
			}
			w.prev[dir] = c
		}
		if err := rows.Close(); err != nil {
			return err
		}
	}
	for start := 0; start < len(vs); start += upsertBatch {
		end := min(start+upsertBatch, len(vs))
		if err := w.upsertRows(ctx, vs[start:end]); err != nil {
			return fmt.Errorf("record skills %s…: %w", vs[start].Dir, err)
		}
	}
	return nil
}

// upsertRows writes at most upsertBatch versions in one statement.
func (w *scanWriter) upsertRows(ctx context.Context, vs []store.Version) error {
	// Retire replaced versions first: the partial unique index allows one
	// current version per directory.
	enabled := make([]bool, len(vs))
	for i, v := range vs {
		enabled[i] = true
		if p, ok := w.prev[v.Dir]; ok {
			enabled[i] = p.enabled
			if p.digest != v.Digest {
				if _, err := w.tx.ExecContext(ctx, `UPDATE versions SET current = 0, last_seen = ? WHERE id = ?`, w.now, p.id); err != nil {
					return err
				}
			}
		}
	}
	args := w.args[:0]
	for i, v := range vs {
		inv, _ := json.Marshal(nonNil(v.InvokableBy))
		args = append(args, v.Key, v.Name, v.Description, v.Category, v.Version, v.Tier, string(inv),
			w.root, v.Dir, v.Rel, v.File, v.Digest, v.Fingerprint, v.Valid, enabled[i],
			nullJSON(v.Frontmatter), jsonOr(v.Diagnostics, "[]"), nullJSON(v.Files), w.now, w.now)
	}
	w.args = args
	if len(vs) < upsertBatch {
		_, err := w.tx.ExecContext(ctx, upsertSQL(len(vs)), args...)
		return err
	}
	// The statement of a full batch is prepared once: SQLite's parser costs
	// about as much per statement as binding its 1,280 values.
	if w.full == nil {
		st, err := w.tx.PrepareContext(ctx, upsertSQL(upsertBatch))
		if err != nil {
			return err
		}
		w.full = st
	}
	_, err := w.full.ExecContext(ctx, args...)
	return err
}

// Commit implements [store.ScanWriter].
func (w *scanWriter) Commit() error {
	if err := w.endRoot(context.Background()); err != nil {
		w.Rollback()
		return err
	}
	if w.changed {
		if err := bumpRegistry(context.Background(), w.tx); err != nil {
			w.Rollback()
			return err
		}
	}
	w.closeStmt()
	err := w.tx.Commit()
	w.release()
	if err != nil {
		return err
	}
	if !w.keepRoots {
		w.db.pruneScanCache(w.roots)
	}
	return nil
}

// Rollback implements [store.ScanWriter].
func (w *scanWriter) Rollback() error {
	w.closeStmt()
	err := w.tx.Rollback()
	w.release()
	return err
}

// release returns the store to WAL mode after a bulk load and gives the
// connection back to the pool.
func (w *scanWriter) release() {
	if w.conn == nil {
		return
	}
	if w.bulk {
		var mode string
		if err := w.conn.QueryRowContext(context.Background(), `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil || mode != "wal" {
			// The next Open sets WAL again; until then the store works
			// with a rollback journal.
			slog.Warn("store: could not return to WAL mode after the first scan", "path", w.db.path, "mode", mode, "err", err)
		}
	}
	w.conn.Close()
	w.conn = nil
}

func (w *scanWriter) closeStmt() {
	if w.full != nil {
		w.full.Close()
		w.full = nil
	}
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// upsertSQL is the insert-or-update of n versions in one statement.
func upsertSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO versions
		(key, name, description, category, version, tier, invokable_by, root, dir, rel, file, digest, fingerprint,
		 valid, enabled, frontmatter, diagnostics, files, current, first_seen, last_seen) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)")
	}
	b.WriteString(` ON CONFLICT (dir, digest) DO UPDATE SET
			key = excluded.key, name = excluded.name, description = excluded.description,
			category = excluded.category, version = excluded.version, tier = excluded.tier,
			invokable_by = excluded.invokable_by, root = excluded.root, rel = excluded.rel,
			file = excluded.file, fingerprint = excluded.fingerprint, valid = excluded.valid,
			frontmatter = excluded.frontmatter, diagnostics = excluded.diagnostics,
			files = excluded.files, current = 1, last_seen = excluded.last_seen`)
	return b.String()
}

// Versions implements [store.Store].
func (s *DB) Versions(ctx context.Context, f store.Filter) ([]store.Version, error) {
	if f.Summary {
		return s.summaries(ctx)
	}
	var out []store.Version
	err := s.EachVersion(ctx, f, func(v store.Version) error {
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachVersion implements [store.VersionStreamer]. Filter.Summary is
// ignored (Brief applies).
func (s *DB) EachVersion(ctx context.Context, f store.Filter, fn func(store.Version) error) error {
	bulky := `v.frontmatter, v.diagnostics, v.files`
	if f.Brief || f.Summary {
		bulky = `NULL, CASE WHEN v.valid = 1 THEN '[]' ELSE v.diagnostics END, NULL`
	}
	q := `SELECT v.id, v.key, v.name, v.description, v.category, v.version, v.tier, v.invokable_by,
			v.root, r.scope, r.trust, v.dir, v.rel, v.file, v.digest, v.fingerprint, v.valid, v.enabled,
			` + bulky + `, v.current, v.first_seen,
			CASE WHEN v.current = 1 THEN r.last_scan ELSE v.last_seen END
		FROM versions v JOIN roots r ON r.path = v.root WHERE 1 = 1`
	var args []any
	if !f.History {
		q += ` AND v.current = 1`
	}
	for _, c := range []struct{ col, val string }{{"v.key", f.Key}, {"v.name", f.Name}, {"v.dir", f.Dir}, {"v.category", f.Category}, {"r.scope", f.Scope}, {"r.trust", f.Trust}} {
		if c.val != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, c.val)
		}
	}
	q += ` ORDER BY v.key, r.position, v.dir, v.first_seen`
	var qr querier = s.db
	if f.Brief && f.Key == "" && f.Name == "" && f.Dir == "" {
		// A brief read of the whole registry (a catalog) goes through the
		// page cache instead of the memory map: mapped pages count in the
		// process's resident set, and this read touches every row's page
		// (with its frontmatter and files) for a few columns.
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("query versions: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `PRAGMA mmap_size = 0`); err != nil {
			return fmt.Errorf("query versions: %w", err)
		}
		defer func() {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA mmap_size = `+strconv.Itoa(mmapSize))
		}()
		qr = conn
	}
	rows, err := qr.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("query versions: %w", err)
	}
	defer rows.Close()
	// Invokable_by lists repeat across skills: each distinct one is decoded
	// once and shared (callers never modify them).
	invs := map[string][]string{}
	for rows.Next() {
		var v store.Version
		var inv string
		var fm, files sql.NullString
		var diags string
		var first, last int64
		if err := rows.Scan(&v.ID, &v.Key, &v.Name, &v.Description, &v.Category, &v.Version, &v.Tier, &inv,
			&v.Root, &v.Scope, &v.Trust, &v.Dir, &v.Rel, &v.File, &v.Digest, &v.Fingerprint, &v.Valid, &v.Enabled,
			&fm, &diags, &files, &v.Current, &first, &last); err != nil {
			return fmt.Errorf("query versions: %w", err)
		}
		if shared, ok := invs[inv]; ok {
			v.InvokableBy = shared
		} else {
			if err := json.Unmarshal([]byte(inv), &v.InvokableBy); err != nil {
				return fmt.Errorf("version %d: invokable_by: %w", v.ID, err)
			}
			if len(invs) < 64 {
				invs[inv] = slices.Clip(v.InvokableBy)
			}
		}
		if fm.Valid {
			v.Frontmatter = json.RawMessage(fm.String)
		}
		if files.Valid {
			v.Files = json.RawMessage(files.String)
		}
		v.Diagnostics = json.RawMessage(diags)
		v.FirstSeen, v.LastSeen = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		if err := fn(v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query versions: %w", err)
	}
	return nil
}

// summaries is Versions with Filter.Summary: current versions, few columns.
func (s *DB) summaries(ctx context.Context) ([]store.Version, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT v.key, v.name, v.root, r.scope, r.trust, v.dir, v.rel, v.valid, v.enabled,
			CASE WHEN v.valid = 1 THEN '[]' ELSE v.diagnostics END
		FROM versions v JOIN roots r ON r.path = v.root WHERE v.current = 1
		ORDER BY v.key, r.position, v.dir, v.first_seen`)
	if err != nil {
		return nil, fmt.Errorf("query versions: %w", err)
	}
	defer rows.Close()
	var out []store.Version
	for rows.Next() {
		var v store.Version
		var diags string
		if err := rows.Scan(&v.Key, &v.Name, &v.Root, &v.Scope, &v.Trust, &v.Dir, &v.Rel, &v.Valid, &v.Enabled, &diags); err != nil {
			return nil, fmt.Errorf("query versions: %w", err)
		}
		v.Current = true
		v.Diagnostics = json.RawMessage(diags)
		out = append(out, v)
	}
	return out, rows.Err()
}

// SetEnabled implements [store.Store].
// The registry generation is bumped when a version's state changed.
func (s *DB) SetEnabled(ctx context.Context, key string, enabled bool) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE versions SET enabled = ? WHERE key = ? AND current = 1 AND enabled != ?`, enabled, key, enabled)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return bumpRegistry(ctx, tx)
		}
		var found bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM versions WHERE key = ? AND current = 1)`, key).Scan(&found); err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("skill %q: %w", key, store.ErrNotFound)
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("set enabled %s: %w", key, err)
	}
	return err
}

// Roots implements [store.Store].
func (s *DB) Roots(ctx context.Context) ([]store.Root, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, scope, trust, position, last_scan, notes FROM roots ORDER BY position`)
	if err != nil {
		return nil, fmt.Errorf("query roots: %w", err)
	}
	defer rows.Close()
	var out []store.Root
	for rows.Next() {
		var r store.Root
		var last int64
		var notes string
		if err := rows.Scan(&r.Path, &r.Scope, &r.Trust, &r.Position, &last, &notes); err != nil {
			return nil, fmt.Errorf("query roots: %w", err)
		}
		r.LastScan = time.Unix(0, last).UTC()
		if err := json.Unmarshal([]byte(notes), &r.Notes); err != nil {
			return nil, fmt.Errorf("root %s notes: %w", r.Path, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
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

// Ping checks that the database answers a query, for readiness checks.
func (s *DB) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("sqlite: %s: %w", s.path, err)
	}
	return nil
}
