package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// LoadMigrations returns the migrations in the directory dir of fsys (a
// driver's embedded files) in order: the files *.sql, whose names start
// with their version number on four digits, from 0001 without gaps.
func LoadMigrations(fsys fs.FS, dir string) ([]string, error) {
	fsys, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for i, n := range names {
		if want := fmt.Sprintf("%04d_", i+1); !strings.HasPrefix(n, want) {
			return nil, fmt.Errorf("migration %s: want a name starting %s", n, want)
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

// selectVersion reads the applied schema version.
const selectVersion = `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`

// Migrate brings the database to the schema of migrations (see
// [LoadMigrations]): version v is migrations[v-1], applied once, recorded
// in the table schema_migrations (version, applied_at in Unix
// nanoseconds) that createTable creates if it does not exist. A database
// already current is only read. Otherwise the migrations run in one
// transaction under [LockMigrate], the version read again inside it, so
// of several processes opening a new database at once exactly one applies
// them and the others find them done. A database newer than migrations is
// refused.
func (s *DB) Migrate(ctx context.Context, migrations []string, createTable string) error {
	var have int
	if err := s.db.QueryRowContext(ctx, selectVersion).Scan(&have); err == nil && have == len(migrations) {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.d.Lock(ctx, tx, LockMigrate); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, createTable); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, selectVersion).Scan(&have); err != nil {
			return err
		}
		if have > len(migrations) {
			return fmt.Errorf("store %s has schema version %d, newer than this skillgate understands (%d): upgrade skillgate", s.name, have, len(migrations))
		}
		for v := have + 1; v <= len(migrations); v++ {
			if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
				return fmt.Errorf("to version %d: %w", v, err)
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), v, s.Now().UnixNano()); err != nil {
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
	if err := s.db.QueryRowContext(ctx, selectVersion).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version of %s: %w", s.name, err)
	}
	return v, nil
}
