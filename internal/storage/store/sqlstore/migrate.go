package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"text/template"
)

// schemaFiles are the definitions of the tables both drivers have, in
// either's types (see [Types]): a driver's migration includes one as
// {{template "audit.sql" .}}. Shipped migrations include them, so like
// migrations they are never edited: a change of a table is a new
// migration of each driver.
//
//go:embed schema/*.sql
var schemaFiles embed.FS

// Types are the column types a driver's schema is written in, which the
// shared table definitions (schema/*.sql) are rendered with.
type Types struct {
	// Int64 is a 64-bit integer: times in Unix nanoseconds, counters,
	// sequence numbers.
	Int64 string
	// Float is a double-precision number.
	Float string
	// Bool is a boolean; IntegerBooleans says it holds 1 and 0.
	Bool            string
	IntegerBooleans bool
	// Serial is a 64-bit primary key the database numbers.
	Serial string
}

// Is is the condition that the boolean column col is true, in the form
// partial indexes are written with.
func (t Types) Is(col string) string {
	if t.IntegerBooleans {
		return col + " = 1"
	}
	return col
}

// LoadMigrations returns the migrations in the directory dir of fsys (a
// driver's embedded files) in order: the files *.sql, whose names start
// with their version number on four digits, from 0001 without gaps. Each
// is a text/template rendered with types, in which the shared table
// definitions (schema/*.sql) are templates by their file name.
func LoadMigrations(fsys fs.FS, dir string, types Types) ([]string, error) {
	fsys, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	shared, err := template.New("").Option("missingkey=error").ParseFS(schemaFiles, "schema/*.sql")
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
		t, err := shared.Clone()
		if err == nil {
			t, err = t.New(n).Parse(string(b))
		}
		var sql strings.Builder
		if err == nil {
			err = t.Execute(&sql, types)
		}
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", n, err)
		}
		out = append(out, sql.String())
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
