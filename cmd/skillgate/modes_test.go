package main

import (
	"context"
	"io"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestDataFileModes checks that everything skillgate writes into a data
// directory it creates is its owner's only: files 0600 (the registry and
// its -wal and -shm files, tokens, install artefacts, walk states,
// workspaces, the audit key and checkpoints), directories 0700.
func TestDataFileModes(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	examples := filepath.Join("..", "..", "examples", "skills")
	src := filepath.Join(t.TempDir(), "notes")
	write(t, src, map[string]string{"SKILL.md": "---\nname: notes\ndescription: Notes.\n---\nTake notes.\n", "references/a.md": "a\n"})
	for _, args := range [][]string{
		{"scan", "--root", examples},
		{"install", src},
		{"token", "add", "--agent", "drafter", "--tier", "T3", "--tenant", "acme"},
		{"audit", "checkpoint"},
	} {
		if code, _, errs := run(t, data, args...); code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
	}
	// An agent writes into its workspace.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	old := stdin
	stdin = inR
	t.Cleanup(func() { stdin = old })
	m := &Main{Stdout: outW, Stderr: io.Discard, Getenv: func(k string) string {
		return map[string]string{"SKILLGATE_DATA": data, "SKILLGATE_AGENT": "drafter", "SKILLGATE_TIER": "T3", "SKILLGATE_TENANT": "acme", "SKILLGATE_SESSION": "s1"}[k]
	}}
	done := make(chan int, 1)
	go func() { done <- m.Run(context.Background(), []string{"mcp"}); outW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"file_path": "/workspace/drafts/a.md", "content": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("write_file: %v %+v", err, res)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Fatalf("mcp: exit %d", code)
	}
	// The registry's log files, while a store is open and has written.
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SetEnabled(context.Background(), "contratos/arrendamiento", false); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"skillgate.db": false, "skillgate.db-wal": false, "skillgate.db-shm": false, "tokens.json": false,
		"workspaces": false, "imported": false, "audit-signing.key": false, "audit-checkpoints.jsonl": false}
	var files int
	err = filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(data, p)
		if _, ok := want[rel]; ok {
			want[rel] = true
		}
		wantMode := fs.FileMode(0o600)
		if d.IsDir() {
			wantMode = 0o700
		} else {
			files++
		}
		if fi.Mode().Perm() != wantMode {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode().Perm(), wantMode)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("%s was not written", name)
		}
	}
	if files < 10 {
		t.Errorf("only %d files checked", files)
	}
}
