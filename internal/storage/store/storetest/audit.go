package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// AuditBase is the time of the first record [FillAudit] appends; record
// i is i seconds later.
var AuditBase = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// FillAudit appends n records to db's audit log: capability calls, and
// every third one from the second an install approval.
func FillAudit(t testing.TB, db store.AuditStore, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		r := audit.Record{
			Time: AuditBase.Add(time.Duration(i) * time.Second), Actor: "agent:acme/a1", Session: "s1",
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
}

func testAuditAppendAndVerify(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	FillAudit(t, db, 5)
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
	empty := h.Open(t, nil)
	if rep, err := audit.Verify(ctx, audit.NewLog(empty), audit.Head{}); err != nil || rep.Records != 0 || rep.Head != (audit.Head{}) {
		t.Fatalf("empty: %+v %v", rep, err)
	}
}

func testAuditQuery(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	FillAudit(t, db, 9)
	seqs := func(rs []audit.Record) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, r.Seq)
		}
		return out
	}
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
		{"time window", audit.Filter{Since: AuditBase.Add(2 * time.Second), Until: AuditBase.Add(4 * time.Second)}, []int64{3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := audit.NewLog(db).Query(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if g := seqs(got); !slices.Equal(g, tt.want) {
				t.Fatalf("got %v want %v", g, tt.want)
			}
		})
	}
	got, _ := audit.NewLog(db).Query(ctx, audit.Filter{AfterSeq: 1, Limit: 1})
	if r := got[0]; string(r.Data) != `{"from":"awaiting_approval","to":"installed"}` || r.Actor != "operator:ana" || r.Reasons[0] != "policy permit-read" || !r.Time.Equal(AuditBase.Add(time.Second)) {
		t.Fatalf("round trip %+v", r)
	}
	// ScanAudit pages through every record after a sequence number.
	var scanned []int64
	if err := db.ScanAudit(ctx, 6, func(r store.AuditRecord) error { scanned = append(scanned, r.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(scanned, []int64{7, 8, 9}) {
		t.Errorf("scan after 6: %v", scanned)
	}
}

func testAuditRejectsIncomplete(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	FillAudit(t, db, 1)
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

func testAuditWriterGroupCommit(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{MaxBatch: 16})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if err := w.Record(audit.Record{Actor: "agent:acme/a1", Action: "capability.invoke", Subject: "fs/read_file", Decision: capability.Allow}); err != nil {
					t.Error(err)
					return
				}
			}
		})
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
	_ = w.Record(audit.Record{Actor: "system", Action: "last", Subject: "x"})
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

// testAuditConcurrentAppend: writers on two handles of one store (two
// processes) append at once, singly and in batches, and with the records
// of grant changes; the log is one gap-free chain that verifies.
func testAuditConcurrentAppend(t *testing.T, h Harness) {
	ctx := context.Background()
	a := h.Open(t, nil)
	dbs := []store.DB{a, h.Share(t, a)}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			db := dbs[g%2]
			for i := range 25 {
				var err error
				switch {
				case g == 0 && i%5 == 0:
					id := "g_" + string(rune('a'+i))
					err = db.CreateGrant(ctx, store.Grant{ID: id, Principal: "acme/a", Capability: "x", Level: "write", CreatedAt: AuditBase},
						store.AuditRecord{Actor: "operator:alice", Action: "grant.add", Subject: id}, audit.SealStored)
				case g%3 == 0:
					_, err = audit.NewLog(db).Append(ctx,
						audit.Record{Actor: "system", Action: "test.batch", Subject: "x"},
						audit.Record{Actor: "system", Action: "test.batch", Subject: "y"})
				default:
					_, err = audit.NewLog(db).Append(ctx, audit.Record{Actor: "system", Action: "test.append", Subject: "x"})
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Goroutines 0, 3 and 6 append pairs (goroutine 0 a grant record
	// instead, every fifth time): 3×25 + 5×25 records plus the pairs' second
	// records, 2×25 + 20.
	const want = 8*25 + 2*25 + 20
	for _, db := range dbs {
		rep, err := audit.Verify(ctx, audit.NewLog(db), audit.Head{})
		if err != nil || rep.Records != want || rep.Head.Seq != want {
			t.Fatalf("%+v %v, want %d records", rep, err, want)
		}
	}
}
