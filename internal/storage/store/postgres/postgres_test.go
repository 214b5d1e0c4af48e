package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/postgres"
	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
	"github.com/skillgate/skillgate/internal/storage/store/storetest"
)

// TestConformance runs the store conformance suite on PostgreSQL, each
// case on a database of its own.
func TestConformance(t *testing.T) {
	var mu sync.Mutex
	dsns := map[store.DB]string{}
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T, now func() time.Time) store.DB {
			dsn := pgtest.NewDatabase(t)
			db := open(t, dsn)
			if now != nil {
				db.Now = now
			}
			mu.Lock()
			dsns[db] = dsn
			mu.Unlock()
			return db
		},
		Share: func(t *testing.T, db store.DB) store.DB {
			mu.Lock()
			dsn := dsns[db]
			mu.Unlock()
			return open(t, dsn)
		},
	})
}

// open opens the store at dsn, closed when t ends.
func open(t *testing.T, dsn string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestMigrations: processes opening a new database at once migrate it
// once; reopening applies nothing twice; a database from a newer
// skillgate is refused, not damaged.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	dbs := make([]*postgres.DB, 4)
	for i := range dbs {
		wg.Go(func() {
			db, err := postgres.Open(ctx, dsn)
			if err != nil {
				t.Error(err)
				return
			}
			dbs[i] = db
		})
	}
	wg.Wait()
	for _, db := range dbs {
		if db == nil {
			t.FailNow()
		}
		defer db.Close()
	}
	if v, err := dbs[0].SchemaVersion(ctx); err != nil || v != postgres.LatestSchema() || v < 1 {
		t.Fatalf("schema version %d %v", v, err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != postgres.LatestSchema() {
		t.Fatalf("%d migrations recorded (%v), want %d", n, err, postgres.LatestSchema())
	}
	if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations VALUES (99, 0)`); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dsn)
	want := fmt.Sprintf("migrate %s:%s%s: store %s:%s%s has schema version 99, newer than this skillgate understands (%d): upgrade skillgate",
		u.Hostname(), u.Port(), u.Path, u.Hostname(), u.Port(), u.Path, postgres.LatestSchema())
	if _, err := postgres.Open(ctx, dsn); err == nil || err.Error() != want {
		t.Errorf("newer schema: %v\nwant %s", err, want)
	}
}

// TestOpenErrors: a DSN that cannot be parsed or reached is an error that
// never shows the password.
func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://u:sekrit@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"postgres://u:sekrit@127.0.0.1:notaport/db",
	} {
		_, err := postgres.Open(ctx, dsn)
		if err == nil || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("Open(%s) = %v", dsn, err)
		}
	}
}

func TestIsDSN(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"postgres://h/db", true},
		{"postgresql://u@h:5432/db?sslmode=disable", true},
		{"/var/lib/skillgate/skillgate.db", false},
		{"sqlite://x", false},
		{"", false},
	} {
		if got := postgres.IsDSN(tt.s); got != tt.want {
			t.Errorf("IsDSN(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
