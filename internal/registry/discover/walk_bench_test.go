// BenchmarkWalk measures one walk of the tree named by SKILLGATE_BENCH_TREE.
package discover_test

import (
	"context"
	"os"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/discover"
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

// BenchmarkScanListings measures a scan that cannot verify the last walk
// (its limits differ) but reuses its listings: a rescan after a change.
func BenchmarkScanListings(b *testing.B) {
	tree := os.Getenv("SKILLGATE_BENCH_TREE")
	if tree == "" {
		b.Skip()
	}
	lim := discover.DefaultLimits
	lim.MaxDirs = 1 << 30
	var c memCache
	if _, err := discover.Scan(context.Background(), discover.Root{Path: tree}, lim, &c); err != nil {
		b.Fatal(err)
	}
	other := lim
	other.MaxDirs--
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := c.get(tree)
		res, err := discover.Scan(context.Background(), discover.Root{Path: tree}, other, &c)
		if err != nil || res.Verified {
			b.Fatal(err, res.Verified)
		}
		c.set(tree, rec)
	}
}

// BenchmarkVerify measures a no-change rescan's walk: verifying the record
// of the previous walk.
func BenchmarkVerify(b *testing.B) {
	tree := os.Getenv("SKILLGATE_BENCH_TREE")
	if tree == "" {
		b.Skip()
	}
	lim := discover.DefaultLimits
	lim.MaxDirs = 1 << 30
	var c memCache
	if _, err := discover.Scan(context.Background(), discover.Root{Path: tree}, lim, &c); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res, err := discover.Scan(context.Background(), discover.Root{Path: tree}, lim, &c); err != nil || !res.Verified {
			b.Fatal("not verified", err)
		}
	}
}
