package mcpservertest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TicketMD is the content of ticket.md in the seed's read-only /ticket
// mount that [NewEnv] sets up.
const TicketMD = "Ticket T-1: compraventa de un piso en Madrid.\n"

// Env is a gateway over a registry that scanned a private copy of the
// example skills, with a SQLite store in a temporary directory.
type Env struct {
	// Root is the scanned copy of the examples; change it and call Scan.
	Root     string
	Registry *registry.Registry
	DB       store.DB
	Manager  *session.Manager
	Gateway  *mcpserver.Gateway
}

// NewEnv copies examplesDir, scans it, and builds a session manager and a
// gateway whose sessions mount skills through src and keep workspaces in
// ws (a local blob directory when nil), with a read-only /ticket mount.
func NewEnv(t testing.TB, examplesDir string, src session.Source, ws blob.Store) *Env {
	t.Helper()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "skills")
	CopyTree(t, examplesDir, root)
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &Env{Root: root, DB: db, Registry: registry.New(db, registry.Options{})}
	e.Scan(t)
	if ws == nil {
		ws = openLocal(t, t.TempDir())
	}
	tickets := openLocal(t, t.TempDir())
	if err := tickets.Put(ctx, "ticket.md", strings.NewReader(TicketMD), int64(len(TicketMD))); err != nil {
		t.Fatal(err)
	}
	e.Manager, err = session.NewManager(session.Options{
		Catalog: e.Registry, Versions: db, Store: db, Source: src, Workspace: ws,
		Mounts: []vfs.Mount{{Path: "/ticket", Store: tickets, ReadOnly: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Gateway, err = mcpserver.New(mcpserver.Options{Sessions: e.Manager, Catalog: e.Registry})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func openLocal(t testing.TB, dir string) *local.Store {
	t.Helper()
	st, err := local.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Scan rescans the environment's root.
func (e *Env) Scan(t testing.TB) {
	t.Helper()
	if _, err := e.Registry.Scan(context.Background(), []discover.Root{{Path: e.Root, Scope: discover.ScopeProject}}, nil); err != nil {
		t.Fatal(err)
	}
}

// ScanFunc is Scan for [mcpserver.Gateway.Rescan].
func (e *Env) ScanFunc(ctx context.Context) error {
	_, err := e.Registry.Scan(ctx, []discover.Root{{Path: e.Root, Scope: discover.ScopeProject}}, nil)
	return err
}

// WriteFile writes a file below the environment's root (creating
// directories), for tests that change skills.
func (e *Env) WriteFile(t testing.TB, rel, content string) {
	t.Helper()
	p := filepath.Join(e.Root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CopyTree copies the directory src to dst.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
