package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestCompletion: shell completion, through cobra's __complete command as
// the scripts of 'skillgate completion' call it, offers skill names,
// install names, token ids and change ids with a description each, only
// for the first argument, filtered by what is typed, and nothing (not
// file names) without a data directory.
func TestCompletion(t *testing.T) {
	data := t.TempDir()
	examples := filepath.Join("..", "..", "examples", "skills")
	if code, _, errs := run(t, data, "scan", "--root", examples); code != 0 {
		t.Fatalf("scan: %s", errs)
	}
	src := t.TempDir()
	write(t, src, map[string]string{"notes/SKILL.md": "---\nname: notes\ndescription: Keeps notes.\n---\n# notes\n"})
	if code, out, errs := run(t, data, "install", filepath.Join(src, "notes")); code != 0 {
		t.Fatalf("install: %d %s %s", code, out, errs)
	}
	code, out, errs := run(t, data, "token", "add", "--agent", "drafter", "--tier", "T3", "--tenant", "acme", "--json")
	if code != 0 {
		t.Fatalf("token add: %d %s", code, errs)
	}
	var tok struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &tok); err != nil || tok.ID == "" {
		t.Fatalf("token add --json: %v\n%s", err, out)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	ch, _, err := db.QueueChange(ctx, store.Change{Kind: store.ChangePromoteProvider, Key: "promote_provider:create_thing",
		Subject: "create_thing", Summary: "create_thing: one executor", QueuedBy: "operator:ana", Why: "queued by a test",
		Proposal: json.RawMessage(`{"executor":{"name":"create_thing","description":"Create a new thing.","inputSchema":{"type":"object"}},"new":true,"backends":[],"evidence":[],"drafter":"deterministic"}`)},
		store.AuditRecord{Actor: "operator:ana", Action: "change.queue"}, audit.SealStored)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	changeID := strconv.FormatInt(ch.ID, 10)

	const noFiles = ":4\nCompletion ended with directive: ShellCompDirectiveNoFileComp\n"
	skills := "arrendamiento\tDrafts a residential lease (contrato de arrendamiento). Use…\n" +
		"compraventa\tDrafts and reviews a Spanish property sale deed (escritura …\n" +
		"hipoteca\tDrafts a mortgage deed (escritura de hipoteca). Use when a …\n" +
		"pdf-forms\tFills and checks PDF forms. Use when a task involves a fill…\n"
	tests := []struct {
		name string
		args []string
		out  string
	}{
		{"show", []string{"show", ""}, skills + noFiles},
		{"show, typed", []string{"show", "h"}, "hipoteca\tDrafts a mortgage deed (escritura de hipoteca). Use when a …\n" + noFiles},
		{"disable", []string{"disable", "pdf"}, "pdf-forms\tFills and checks PDF forms. Use when a task involves a fill…\n" + noFiles},
		{"enable", []string{"enable", "zzz"}, noFiles},
		{"review", []string{"review", ""}, "notes\tawaiting_approval\n" + noFiles},
		{"approve", []string{"approve", "no"}, "notes\tawaiting_approval\n" + noFiles},
		{"reject", []string{"reject", ""}, "notes\tawaiting_approval\n" + noFiles},
		{"second argument", []string{"complete", "notes", ""}, noFiles},
		{"token rm", []string{"token", "rm", ""}, tok.ID + "\tacme/drafter@T3\n" + noFiles},
		{"changes show", []string{"changes", "show", ""}, changeID + "\tcreate_thing: one executor\n" + noFiles},
		{"changes approve", []string{"changes", "approve", changeID}, changeID + "\tcreate_thing: one executor\n" + noFiles},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, data, append([]string{"__complete"}, tc.args...)...)
			if code != 0 || out+errs != tc.out {
				t.Errorf("%d\n got %q\nwant %q", code, out+errs, tc.out)
			}
		})
	}
	none := filepath.Join(t.TempDir(), "none")
	code, out, errs = run(t, none, "__complete", "show", "")
	if code != 0 || out+errs != noFiles {
		t.Errorf("no data directory: %d %q", code, out+errs)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("completing made the data directory: %v", err)
	}
}
