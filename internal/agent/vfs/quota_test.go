package vfs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/storage/blob"
)

// TestWorkspaceQuota: writes and edits that would take a session's or its
// tenant's workspaces over their bytes or files are refused, with nothing
// stored; what was there before counts.
func TestWorkspaceQuota(t *testing.T) {
	forEachStore(t, func(t *testing.T, st blob.Store) {
		ctx := context.Background()
		// A file left by an earlier process counts toward both quotas.
		if err := st.Put(ctx, "acme/sessions/s1/workspace/old.txt", strings.NewReader("0123456789"), 10); err != nil {
			t.Fatal(err)
		}
		tenant := &vfs.Quota{What: "the workspaces of tenant acme", MaxBytes: 40, MaxFiles: 5, Store: st, Prefix: "acme/sessions/"}
		open := func(id string, maxBytes int64) *vfs.FS {
			ws, err := vfs.WorkspaceMount(st, "acme", id)
			if err != nil {
				t.Fatal(err)
			}
			ws.Quotas = []*vfs.Quota{{What: "this session's workspace", MaxBytes: maxBytes, MaxFiles: 3, Store: st, Prefix: ws.Prefix}, tenant}
			f, err := vfs.New(vfs.Options{Mounts: []vfs.Mount{ws}})
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		s1, s2 := open("s1", 25), open("s2", 100)
		steps := []struct {
			name string
			do   func() error
			want string
		}{
			{"fits", func() error { return s1.Write(ctx, "/workspace/a.txt", "0123456789") }, ""},
			{"session bytes", func() error { return s1.Write(ctx, "/workspace/b.txt", "0123456789x") },
				"Error writing file '/workspace/b.txt': the byte limit of this session's workspace (25) would be exceeded (31 bytes); ask an operator to raise it, or continue in a new session"},
			{"edit grows past", func() error { _, err := s1.Edit(ctx, "/workspace/a.txt", "0123", "0123456789", false); return err },
				"Error editing file '/workspace/a.txt': the byte limit of this session's workspace (25) would be exceeded (26 bytes); ask an operator to raise it, or continue in a new session"},
			{"edit shrinks", func() error { _, err := s1.Edit(ctx, "/workspace/a.txt", "56789", "", false); return err }, ""},
			{"third file", func() error { return s1.Write(ctx, "/workspace/c.txt", "x") }, ""},
			{"session files", func() error { return s1.Write(ctx, "/workspace/d.txt", "x") },
				"Error writing file '/workspace/d.txt': the file limit of this session's workspace (3) is reached; ask an operator to raise it, or continue in a new session"},
			{"other session", func() error { return s2.Write(ctx, "/workspace/a.txt", strings.Repeat("y", 20)) }, ""},
			{"tenant bytes", func() error { return s2.Write(ctx, "/workspace/b.txt", "0123456789") },
				"Error writing file '/workspace/b.txt': the byte limit of the workspaces of tenant acme (40) would be exceeded (46 bytes); ask an operator to raise it, or continue in a new session"},
			{"tenant files", func() error { return s2.Write(ctx, "/workspace/c.txt", "z") }, ""},
			{"tenant files full", func() error { return s2.Write(ctx, "/workspace/d.txt", "z") },
				"Error writing file '/workspace/d.txt': the file limit of the workspaces of tenant acme (5) is reached; ask an operator to raise it, or continue in a new session"},
		}
		for _, s := range steps {
			err := s.do()
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, vfs.ErrQuota) {
					t.Errorf("%s: error is not ErrQuota: %v", s.name, err)
				}
			}
			if got != s.want {
				t.Errorf("%s:\n got %q\nwant %q", s.name, got, s.want)
			}
		}
		// Refused writes stored nothing.
		for _, k := range []string{"acme/sessions/s1/workspace/b.txt", "acme/sessions/s1/workspace/d.txt", "acme/sessions/s2/workspace/b.txt"} {
			if _, err := st.Stat(ctx, k); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("%s was stored: %v", k, err)
			}
		}
	})
}
