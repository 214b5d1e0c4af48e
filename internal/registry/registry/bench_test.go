package registry_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// benchTree returns the tree named by SKILLGATE_BENCH_TREE (made by
// `go run ./bench/gen`), or skips.
func benchTree(b *testing.B) string {
	dir := os.Getenv("SKILLGATE_BENCH_TREE")
	if dir == "" {
		b.Skip("set SKILLGATE_BENCH_TREE to a tree made by 'go run ./bench/gen -n 10000 -out DIR'")
	}
	return dir
}

func benchLimits() discover.Limits {
	lim := discover.DefaultLimits
	lim.MaxDirs = 1 << 30
	return lim
}

// BenchmarkColdScan measures scan + validate + digest + index into a fresh
// SQLite file.
func BenchmarkColdScan(b *testing.B) {
	tree := benchTree(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "s.db"))
		if err != nil {
			b.Fatal(err)
		}
		reg := registry.New(db, registry.Options{Limits: benchLimits()})
		b.StartTimer()
		if _, err := reg.Scan(ctx, []discover.Root{{Path: tree, Scope: discover.ScopeProject}}, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
}

// BenchmarkRescan measures a scan in which nothing changed.
func BenchmarkRescan(b *testing.B) {
	tree := benchTree(b)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	reg := registry.New(db, registry.Options{Limits: benchLimits()})
	roots := []discover.Root{{Path: tree, Scope: discover.ScopeProject}}
	if _, err := reg.Scan(ctx, roots, nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := reg.Scan(ctx, roots, nil); err != nil {
			b.Fatal(err)
		}
	}
}
