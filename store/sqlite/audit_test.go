package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/audit"
	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/store/sqlite"
)

// auditLog opens a fresh store with n records and returns it with its path.
func auditLog(t *testing.T, n int) (*sqlite.DB, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		r := audit.Record{
			Time: base.Add(time.Duration(i) * time.Second), Actor: "agent:acme/a1", Session: "s1",
			Action: "capability.invoke", Subject: "fs/read_file", Decision: capability.Allow,
			Reasons: []string{"policy permit-read"}, ArgsHash: "sha256:x", LatencyNS: int64(1000 + i),
		}
		if i%3 == 1 {
			r.Action, r.Subject, r.Decision, r.Actor = "install.approve", "escrituras/compraventa", "", "operator:ana"
			r.Data = json.RawMessage(`{"from":"awaiting_approval","to":"installed"}`)
		}
		if _, err := audit.NewLog(db).Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return db, path
}

func TestAuditAppendAndVerify(t *testing.T) {
	ctx := context.Background()
	db, _ := auditLog(t, 5)
	rep, err := audit.Verify(ctx, audit.NewLog(db), audit.Head{})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := audit.NewLog(db).Head(ctx)
	if rep.Records != 5 || rep.Head != head || head.Seq != 5 {
		t.Fatalf("report %+v head %+v", rep, head)
	}
	all, _ := audit.NewLog(db).Query(ctx, audit.Filter{})
	if all[0].Prev != audit.Genesis {
		t.Errorf("first prev %s", all[0].Prev)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Prev != all[i-1].Hash || all[i].Seq != int64(i+1) {
			t.Fatalf("chain broken at %d", i)
		}
	}
	// Verifying against a kept head passes while the log is whole.
	if _, err := audit.Verify(ctx, audit.NewLog(db), head); err != nil {
		t.Fatal(err)
	}
	// An empty log verifies.
	empty, _ := auditLog(t, 0)
	if rep, err := audit.Verify(ctx, audit.NewLog(empty), audit.Head{}); err != nil || rep.Records != 0 || rep.Head != (audit.Head{}) {
		t.Fatalf("empty: %+v %v", rep, err)
	}
}

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

func TestAuditQuery(t *testing.T) {
	ctx := context.Background()
	db, _ := auditLog(t, 9)
	seqs := func(rs []audit.Record) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, r.Seq)
		}
		return out
	}
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		f    audit.Filter
		want []int64
	}{
		{"all", audit.Filter{}, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"after", audit.Filter{AfterSeq: 7}, []int64{8, 9}},
		{"before", audit.Filter{BeforeSeq: 4}, []int64{1, 2, 3}},
		{"a page before", audit.Filter{BeforeSeq: 9, Limit: 3, Last: true}, []int64{6, 7, 8}},
		{"action prefix", audit.Filter{Action: "install."}, []int64{2, 5, 8}},
		{"action star", audit.Filter{Action: "install.*"}, []int64{2, 5, 8}},
		{"action exact", audit.Filter{Action: "capability.invoke", Limit: 2}, []int64{1, 3}},
		{"last", audit.Filter{Subject: "fs/read_file", Limit: 2, Last: true}, []int64{7, 9}},
		{"decision", audit.Filter{Decision: capability.Allow, Actor: "agent:acme/a1", Session: "s1"}, []int64{1, 3, 4, 6, 7, 9}},
		{"time window", audit.Filter{Since: base.Add(2 * time.Second), Until: base.Add(4 * time.Second)}, []int64{3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := audit.NewLog(db).Query(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if g := seqs(got); !equalInts(g, tt.want) {
				t.Fatalf("got %v want %v", g, tt.want)
			}
		})
	}
	got, _ := audit.NewLog(db).Query(ctx, audit.Filter{AfterSeq: 1, Limit: 1})
	if r := got[0]; string(r.Data) != `{"from":"awaiting_approval","to":"installed"}` || r.Actor != "operator:ana" || r.Reasons[0] != "policy permit-read" || !r.Time.Equal(base.Add(time.Second)) {
		t.Fatalf("round trip %+v", r)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAuditConcurrentAppend(t *testing.T) {
	ctx := context.Background()
	db, _ := auditLog(t, 0)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if _, err := audit.NewLog(db).Append(ctx, audit.Record{Actor: "system", Action: "test.append", Subject: "x"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rep, err := audit.Verify(ctx, audit.NewLog(db), audit.Head{})
	if err != nil || rep.Records != 200 {
		t.Fatalf("%+v %v", rep, err)
	}
}

func TestAuditRejectsIncomplete(t *testing.T) {
	ctx := context.Background()
	db, _ := auditLog(t, 1)
	tests := []struct {
		r    audit.Record
		want string
	}{
		{audit.Record{Action: "a", Subject: "s"}, "invalid audit record: actor is empty"},
		{audit.Record{Actor: "a", Subject: "s"}, "invalid audit record: action is empty"},
		{audit.Record{Actor: "a", Action: "a"}, "invalid audit record: subject is empty"},
		{audit.Record{Actor: "a", Action: "a", Subject: "s", Decision: "maybe"}, `invalid audit record: decision "maybe" is not allow, deny or require_approval`},
		{audit.Record{Actor: "a", Action: "a", Subject: "s", Data: json.RawMessage(`[1]`)}, "invalid audit record: data is not a JSON object"},
	}
	for _, tt := range tests {
		_, err := audit.NewLog(db).Append(ctx, audit.Record{Actor: "system", Action: "ok", Subject: "s"}, tt.r)
		if !errors.Is(err, audit.ErrInvalidRecord) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("got %v want %s", err, tt.want)
		}
	}
	// Nothing of a failed batch was stored.
	if h, _ := audit.NewLog(db).Head(ctx); h.Seq != 1 {
		t.Fatalf("head %d after failed appends", h.Seq)
	}
}

func TestAuditWriterGroupCommit(t *testing.T) {
	ctx := context.Background()
	db, _ := auditLog(t, 0)
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{MaxBatch: 16})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := w.Record(audit.Record{Actor: "agent:acme/a1", Action: "capability.invoke", Subject: "fs/read_file", Decision: capability.Allow}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if h, _ := audit.NewLog(db).Head(ctx); h.Seq != 400 {
		t.Fatalf("after flush: %d records", h.Seq)
	}
	if err := w.Record(audit.Record{Actor: "system", Action: "x"}); !errors.Is(err, audit.ErrInvalidRecord) {
		t.Fatalf("incomplete record: %v", err)
	}
	w.Record(audit.Record{Actor: "system", Action: "last", Subject: "x"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := audit.Verify(ctx, audit.NewLog(db), audit.Head{}); err != nil || rep.Records != 401 {
		t.Fatalf("%+v %v", rep, err)
	}
	if err := w.Record(audit.Record{Actor: "system", Action: "late", Subject: "x"}); !errors.Is(err, audit.ErrWriterClosed) {
		t.Fatalf("after close: %v", err)
	}
}
