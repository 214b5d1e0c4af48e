package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

func TestAuditCLI(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	_, err = audit.NewLog(db).Append(ctx,
		audit.Record{Time: at, Actor: "operator:ana", Action: "install.approve", Subject: "escrituras/compraventa", Reasons: []string{"reviewed"}, Data: json.RawMessage(`{"from":"awaiting_approval","to":"installed"}`)},
		audit.Record{Time: at.Add(time.Second), Actor: "agent:acme/a1", Session: "s1", Action: "capability.invoke", Subject: "fs/write_file", Decision: capability.Deny, Reasons: []string{"constraint pathGlobs: /etc/x is outside /srv/**"}},
		audit.Record{Time: at.Add(2 * time.Second), Actor: "agent:acme/a1", Session: "s1", Action: "capability.invoke", Subject: "fs/read_file", Decision: capability.Allow},
	)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := audit.NewLog(db).Head(ctx)
	db.Close()

	code, out, _ := run(t, data, "audit", "verify")
	if code != 0 || out != "audit log OK: 3 records, head "+head.String()+"\n" {
		t.Fatalf("verify: %d %q", code, out)
	}
	code, out, _ = run(t, data, "audit", "head")
	if code != 0 || out != head.String()+"\n" {
		t.Fatalf("head: %d %q", code, out)
	}
	code, out, _ = run(t, data, "audit", "tail", "-n", "2")
	want := "     2 2026-11-22T10:00:01.000Z capability.invoke      fs/write_file                agent:acme/a1 session=s1 DENY — constraint pathGlobs: /etc/x is outside /srv/**\n" +
		"     3 2026-11-22T10:00:02.000Z capability.invoke      fs/read_file                 agent:acme/a1 session=s1 ALLOW\n"
	if code != 0 || out != want {
		t.Fatalf("tail: %d\n%s\nwant\n%s", code, out, want)
	}
	code, out, _ = run(t, data, "audit", "query", "--action", "install.", "--json")
	var r audit.Record
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Seq != 1 || r.Actor != "operator:ana" {
		t.Fatalf("query: %d %q", code, out)
	}
	code, out, _ = run(t, data, "audit", "query", "--decision", "deny", "--since", "2026-11-22T10:00:01Z")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "fs/write_file") {
		t.Fatalf("query deny: %d %q", code, out)
	}
	if code, _, errs := run(t, data, "audit", "query", "--decision", "maybe"); code != 2 || !strings.Contains(errs, "--decision must be allow, deny or require_approval") {
		t.Fatalf("bad decision: %d %q", code, errs)
	}

	// Editing one record makes verify fail and name it.
	raw, _ := sql.Open("sqlite", filepath.Join(data, "skillgate.db"))
	if _, err := raw.Exec(`UPDATE audit SET decision = 'allow' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, data, "audit", "verify")
	if code != 1 || !strings.HasPrefix(errs, "Error: audit log tampered: record 2 (capability.invoke fs/write_file) was edited") {
		t.Fatalf("tampered: %d %q", code, errs)
	}
	code, out, _ = run(t, data, "audit", "verify", "--json")
	if code != 1 || !strings.Contains(out, `"ok": false`) {
		t.Fatalf("tampered json: %d %q", code, out)
	}
	// Cutting the tail passes the chain check but not the kept head.
	raw.Exec(`UPDATE audit SET decision = 'deny' WHERE seq = 2`)
	raw.Exec(`DELETE FROM audit WHERE seq = 3`)
	raw.Close()
	if code, _, _ := run(t, data, "audit", "verify"); code != 0 {
		t.Fatalf("chain after truncation: %d", code)
	}
	code, _, errs = run(t, data, "audit", "verify", "--head", head.String())
	if code != 1 || !strings.Contains(errs, "the log ends at record 2, before the head 3:") {
		t.Fatalf("truncated: %d %q", code, errs)
	}
}

// TestAuditQueryNewestAndDays checks that `audit query -n N` keeps the
// newest N matching records (printed oldest first), that --after pages
// forward, and that --since takes days as grant expiries do.
func TestAuditQueryNewestAndDays(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var rs []audit.Record
	for i := range 6 { // one record a day, the last one now
		rs = append(rs, audit.Record{Time: now.Add(time.Duration(i-5) * 24 * time.Hour), Actor: "system", Action: "test.tick", Subject: "s" + string(rune('0'+i))})
	}
	if _, err := audit.NewLog(db).Append(ctx, rs...); err != nil {
		t.Fatal(err)
	}
	db.Close()
	seqs := func(out string) string {
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				got = append(got, f[0])
			}
		}
		return strings.Join(got, ",")
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-n", "3"}, "4,5,6"},
		{[]string{"--since", "1h", "-n", "3"}, "6"},
		{[]string{"--since", "3d12h", "-n", "2"}, "5,6"},
		{[]string{"--since", "7d", "-n", "2"}, "5,6"},
		{[]string{"--since", "2.5d"}, "4,5,6"},
		{[]string{"--until", "2.5d"}, "1,2,3"},
		{[]string{"--after", "1", "-n", "2"}, "2,3"},
		{[]string{}, "1,2,3,4,5,6"},
	}
	for _, tc := range tests {
		code, out, errs := run(t, data, append([]string{"audit", "query"}, tc.args...)...)
		if got := seqs(out); code != 0 || got != tc.want {
			t.Errorf("query %v: %d %q %s; want %s", tc.args, code, got, errs, tc.want)
		}
	}
	code, _, errs := run(t, data, "audit", "query", "--since", "7 days")
	if want := "Error: --since: \"7 days\" is neither an RFC 3339 time (2026-11-22T10:00:00Z) nor a duration ago (90m, 7d)\n"; code != 2 || errs != want {
		t.Errorf("bad --since: %d %q", code, errs)
	}
}
