package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/skillgate/skillgate/internal/storage/store/sqlstore"
)

// scanWriter is a scan of the SQLite store: sqlstore's, with what SQLite
// adds around it (the bulk first scan, the packed refs, the scan cache's
// files).
type scanWriter struct {
	*sqlstore.ScanWriter
	db *DB
	// bulk says the scan runs without the write-ahead log (see bulkLoad).
	bulk bool
	// nested says the roots overlap, and keep no packed refs.
	nested bool
}

// beginScan starts a scan of roots on a connection of its own; with
// forget, the roots not among them are forgotten (but the root of
// store.ScopeImported) and, once it commits, their scan cache records.
func (s *DB) beginScan(ctx context.Context, roots []string, forget bool) (*scanWriter, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &scanWriter{db: s, bulk: s.bulkLoad(ctx, conn), nested: nested(roots)}
	hooks := sqlstore.ScanHooks{RootDone: w.writeRefs, Release: w.release}
	if forget {
		hooks.AfterCommit = func() { s.pruneScanCache(roots) }
	}
	sw, err := s.StartScan(ctx, conn, roots, forget, hooks)
	if err != nil {
		return nil, err
	}
	w.ScanWriter = sw
	return w, nil
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

// release returns the store to WAL mode after a bulk load, before the
// scan's connection goes back to the pool.
func (w *scanWriter) release(conn *sql.Conn) {
	if !w.bulk {
		return
	}
	var mode string
	if err := conn.QueryRowContext(context.Background(), `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil || mode != "wal" {
		// The next Open sets WAL again; until then the store works
		// with a rollback journal.
		slog.Warn("store: could not return to WAL mode after the first scan", "path", w.db.path, "mode", mode, "err", err)
	}
}

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
