// BenchmarkWalk measures one walk of the tree named by SKILLGATE_BENCH_TREE.
package discover_test

import (
	"context"
	"github.com/skillgate/skillgate/discover"
	"os"
	"testing"
)

func BenchmarkWalk(b *testing.B) {
	tree := os.Getenv("SKILLGATE_BENCH_TREE")
	if tree == "" {
		b.Skip()
	}
	lim := discover.DefaultLimits
	lim.MaxDirs = 1 << 30
	for i := 0; i < b.N; i++ {
		if _, err := discover.Walk(context.Background(), discover.Root{Path: tree}, lim); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWalkCached measures a walk that reuses the listings of the
// previous one, as a no-change rescan does.
func BenchmarkWalkCached(b *testing.B) {
	tree := os.Getenv("SKILLGATE_BENCH_TREE")
	if tree == "" {
		b.Skip()
	}
	lim := discover.DefaultLimits
	lim.MaxDirs = 1 << 30
	first, err := discover.WalkCached(context.Background(), discover.Root{Path: tree}, lim, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := discover.WalkCached(context.Background(), discover.Root{Path: tree}, lim, first.Listings); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify measures a no-change rescan's walk: verifying the state
// of the previous walk.
func BenchmarkVerify(b *testing.B) {
	tree := os.Getenv("SKILLGATE_BENCH_TREE")
	if tree == "" {
		b.Skip()
	}
	lim := discover.DefaultLimits
	lim.MaxDirs = 1 << 30
	first, err := discover.Walk(context.Background(), discover.Root{Path: tree}, lim)
	if err != nil {
		b.Fatal(err)
	}
	if first.State == nil {
		b.Fatal("no state")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := discover.Verify(context.Background(), discover.Root{Path: tree}, lim, first.State); !ok {
			b.Fatal("not verified")
		}
	}
}
