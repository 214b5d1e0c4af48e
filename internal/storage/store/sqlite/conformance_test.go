package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/storage/store/storetest"
)

// TestConformance runs the store conformance suite on SQLite files.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T, now func() time.Time) store.DB {
			db := open(t, filepath.Join(t.TempDir(), "skillgate.db"))
			if now != nil {
				db.Now = now
			}
			return db
		},
		Share: func(t *testing.T, db store.DB) store.DB {
			return open(t, db.(*sqlite.DB).Path())
		},
	})
}

// open opens the store at path, closed when t ends.
func open(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
