package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestAuditCheckpoint: a log whose whole chain was rewritten and re-hashed
// still verifies on its own; the signed checkpoint taken before catches it.
func TestAuditCheckpoint(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if _, err := audit.NewLog(db).Append(ctx,
		audit.Record{Time: at, Actor: "agent:acme/a1", Action: "capability.invoke", Subject: "fs/write_file", Decision: capability.Deny, Reasons: []string{"constraint"}},
		audit.Record{Time: at.Add(time.Second), Actor: "agent:acme/a1", Action: "capability.invoke", Subject: "fs/read_file", Decision: capability.Allow},
	); err != nil {
		t.Fatal(err)
	}
	db.Close()

	if code, _, errs := run(t, data, "audit", "verify", "--checkpoint", filepath.Join(data, "none.jsonl"), "--head", "1:x"); code != 2 || errs != "Error: --head and --checkpoint are alternatives: give one\n" {
		t.Fatalf("both: %d %q", code, errs)
	}
	code, out, errs := run(t, data, "audit", "checkpoint", "--json")
	var cp audit.Checkpoint
	if code != 0 || json.Unmarshal([]byte(out), &cp) != nil || cp.Seq != 2 {
		t.Fatalf("checkpoint: %d %q %q", code, out, errs)
	}
	for _, f := range []string{app.AuditKeyFile, app.AuditCheckpointFile} {
		if fi, err := os.Stat(filepath.Join(data, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, fi.Mode(), err)
		}
	}
	file := filepath.Join(data, app.AuditCheckpointFile)
	if code, out, errs := run(t, data, "audit", "verify", "--checkpoint", file, "--key", cp.Key); code != 0 || out != "audit log OK: 2 records, head "+cp.Head.String()+"\n" {
		t.Fatalf("verify with checkpoint: %d %q %q", code, out, errs)
	}

	// Rewrite the chain: the deny becomes an allow, and every hash after it
	// is recomputed, as someone with write access to the store could.
	raw, err := sql.Open("sqlite", filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rewritten := []audit.Record{
		{Time: at, Actor: "agent:acme/a1", Action: "capability.invoke", Subject: "fs/write_file", Decision: capability.Allow},
		{Time: at.Add(time.Second), Actor: "agent:acme/a1", Action: "capability.invoke", Subject: "fs/read_file", Decision: capability.Allow},
	}
	var prev audit.Head
	for _, r := range rewritten {
		s, err := audit.Seal(prev, r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(`UPDATE audit SET decision = ?, reasons = '[]', prev = ?, hash = ? WHERE seq = ?`, s.Decision, s.Prev, s.Hash, s.Seq); err != nil {
			t.Fatal(err)
		}
		prev = audit.Head{Seq: s.Seq, Hash: s.Hash}
	}
	if code, _, errs := run(t, data, "audit", "verify"); code != 0 {
		t.Fatalf("the rewritten chain should verify on its own: %d %q", code, errs)
	}
	code, _, errs = run(t, data, "audit", "verify", "--checkpoint", file)
	if want := "Error: audit log tampered: record 2 differs from the head " + cp.Head.String() + " you kept\n"; code != 1 || errs != want {
		t.Fatalf("rewritten chain against the checkpoint: %d\n got %q\nwant %q", code, errs, want)
	}

	// A checkpoint line edited to match the rewritten head fails its
	// signature; one signed by another key fails the trusted key.
	forged := cp
	forged.Hash = prev.Hash
	b, _ := json.Marshal(forged)
	if err := os.WriteFile(file, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs = run(t, data, "audit", "verify", "--checkpoint", file)
	if want := "Error: " + file + ":1: invalid audit checkpoint: checkpoint 2 (" + cp.At.Format(time.RFC3339) + ") has a bad signature: it was altered or forged\n"; code != 1 || errs != want {
		t.Fatalf("forged checkpoint: %d\n got %q\nwant %q", code, errs, want)
	}
	if code, _, errs := run(t, data, "audit", "verify", "--checkpoint", file, "--key", "ed25519:nope"); code != 2 || !strings.HasPrefix(errs, "Error: --key: invalid audit checkpoint: key ") {
		t.Fatalf("bad key: %d %q", code, errs)
	}
}
