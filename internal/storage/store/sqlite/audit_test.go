package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/storage/store/storetest"
)

// auditLog opens a fresh store with n records (storetest.FillAudit) and
// returns it with its path.
func auditLog(t *testing.T, n int) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.db")
	db := open(t, path)
	storetest.FillAudit(t, db, n)
	return db, path
}

// TestAuditTamper edits the SQLite file behind the store's back: every
// edit, deletion and truncation is found by verification (the store
// conformance suite covers the log's behaviour; this covers its file).
func TestAuditTamper(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		head bool // verify against the head taken before tampering
		want string
	}{
		{"edit decision", `UPDATE audit SET decision = 'allow' WHERE seq = 2`, false,
			"audit log tampered: record 2 (install.approve escrituras/compraventa) was edited: its content hashes to"},
		{"edit reasons", `UPDATE audit SET reasons = '["forged"]' WHERE seq = 4`, false,
			"audit log tampered: record 4 (capability.invoke fs/read_file) was edited"},
		{"edit time", `UPDATE audit SET time = time + 1 WHERE seq = 1`, false,
			"audit log tampered: record 1 (capability.invoke fs/read_file) was edited"},
		{"delete middle", `DELETE FROM audit WHERE seq = 3`, false,
			"audit log tampered: records 3 to 3 are missing (deleted)"},
		{"delete first", `DELETE FROM audit WHERE seq = 1`, false,
			"audit log tampered: records 1 to 1 are missing (deleted)"},
		{"renumber after delete", `DELETE FROM audit WHERE seq = 3; UPDATE audit SET seq = seq - 1 WHERE seq > 3`, false,
			"audit log tampered: record 3 does not chain to record 2"},
		{"rehash edited record", `UPDATE audit SET actor = 'operator:eve', hash = 'sha256:0000000000000000000000000000000000000000000000000000000000000001' WHERE seq = 2`, false,
			"audit log tampered: record 2 (install.approve escrituras/compraventa) was edited"},
		{"truncate tail", `DELETE FROM audit WHERE seq >= 5`, true,
			"audit log tampered: the log ends at record 4, before the head 5:sha256:"},
		{"replace tail", `UPDATE audit SET latency_ns = 1 WHERE seq = 5`, true,
			"audit log tampered: record 5 (install.approve escrituras/compraventa) was edited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, path := auditLog(t, 5)
			head, _ := audit.NewLog(db).Head(ctx)
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(tt.sql); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			want := audit.Head{}
			if tt.head {
				want = head
			}
			_, err = audit.Verify(ctx, audit.NewLog(db), want)
			if !errors.Is(err, audit.ErrTampered) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("got %v\nwant prefix %s", err, tt.want)
			}
		})
	}
}
