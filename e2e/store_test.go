package e2e

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" driver, to edit a store behind skillgate's back

	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
)

// EnvE2EStore selects the metadata store of the skillgate processes the
// tests start: unset or "sqlite" for the default SQLite file in the data
// directory, "postgres" for a fresh database per test on the server
// SKILLGATE_TEST_POSTGRES names (scripts/test.sh runs the store-dependent
// tests both ways).
const EnvE2EStore = "SKILLGATE_E2E_STORE"

// withStore points the data directory data at the test's store: with
// SKILLGATE_E2E_STORE=postgres, a database of the test's own, named by
// store: in data/config.yaml; otherwise nothing changes. It returns the
// database's DSN, or "" for SQLite.
func withStore(t *testing.T, data string) string {
	t.Helper()
	switch mode := os.Getenv(EnvE2EStore); mode {
	case "", "sqlite":
		return ""
	case "postgres":
		if !pgtest.Available() {
			t.Fatalf("%s=postgres needs %s (eval \"$(scripts/setup-postgres.sh)\")", EnvE2EStore, pgtest.EnvDSN)
		}
		dsn := pgtest.NewDatabase(t)
		writeFile(t, filepath.Join(data, "config.yaml"), "store: "+dsn+"\n")
		t.Cleanup(func() {
			if _, err := os.Stat(filepath.Join(data, "skillgate.db")); err == nil {
				t.Errorf("a SQLite store was made in %s, whose store is PostgreSQL", data)
			}
		})
		return dsn
	default:
		t.Fatalf("%s=%q: want sqlite or postgres", EnvE2EStore, mode)
		return ""
	}
}

// emptyFixture is a fixture with a data directory on the test's store and
// nothing scanned.
func emptyFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{data: t.TempDir()}
	f.dsn = withStore(t, f.data)
	return f
}

// writeConfig writes the data directory's config.yaml, keeping the
// test's store.
func (f *fixture) writeConfig(t *testing.T, content string) {
	t.Helper()
	if f.dsn != "" {
		content = "store: " + f.dsn + "\n" + content
	}
	writeFile(t, filepath.Join(f.data, "config.yaml"), content)
}

// execSQL runs a statement on the fixture's store behind skillgate's back.
func (f *fixture) execSQL(t *testing.T, stmt string) {
	t.Helper()
	if f.dsn != "" {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, f.dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
		return
	}
	db, err := sql.Open("sqlite", filepath.Join(f.data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
