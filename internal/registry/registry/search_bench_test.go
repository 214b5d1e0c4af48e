package registry_test

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/registry/search"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// benchSnapshot scans the tree of SKILLGATE_BENCH_TREE (bench/gen) once
// per benchmark and returns its snapshot.
func benchSnapshot(b *testing.B) *registry.Snapshot {
	tree := benchTree(b)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	reg := registry.New(db, registry.Options{Limits: benchLimits()})
	if _, err := reg.Scan(ctx, []discover.Root{{Path: tree, Scope: discover.ScopeProject}}, nil); err != nil {
		b.Fatal(err)
	}
	snap, err := reg.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

// benchQueries are the labelled queries (tasks phrased as users do) and
// single words of bench/gen's vocabulary, common and rare, and a skill's
// exact name.
func benchQueries(b *testing.B, snap *registry.Snapshot) []string {
	var qs []string
	for _, q := range labelledQueries(b) {
		qs = append(qs, q.Query)
	}
	qs = append(qs, "pdf", "invoice", "deploy", "report", "data", "review", "kubernetes", "notes", "search the docs")
	n := 0
	snap.Skills("T3", "", func(br registry.Brief) bool {
		if n++; n%997 == 0 {
			qs = append(qs, br.Name)
		}
		return n < 20000
	})
	return qs
}

// benchLatency runs one query per iteration, cycling through qs, and
// reports p50/p99 per query: wall time, and the CPU time of the thread
// that ran it (Linux's RUSAGE_THREAD), which a loaded machine does not
// inflate.
func benchLatency(b *testing.B, qs []string, run func(q string)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := threadCPU()
		t0 := time.Now()
		run(qs[i%len(qs)])
		lat = append(lat, time.Since(t0))
		cpu = append(cpu, threadCPU()-c0)
	}
	b.StopTimer()
	pct := func(d []time.Duration, p int) float64 {
		slices.Sort(d)
		return float64(d[min(len(d)-1, len(d)*p/100)].Nanoseconds())
	}
	b.ReportMetric(pct(lat, 50), "p50-ns")
	b.ReportMetric(pct(lat, 99), "p99-ns")
	b.ReportMetric(pct(cpu, 50), "cpu-p50-ns")
	b.ReportMetric(pct(cpu, 99), "cpu-p99-ns")
}

// BenchmarkSearchPage is a ranked first page of skill_list (limit 100) on
// the tree's snapshot.
func BenchmarkSearchPage(b *testing.B) {
	snap := benchSnapshot(b)
	qs := benchQueries(b, snap)
	benchLatency(b, qs, func(q string) {
		if _, err := snap.Page(registry.PageQuery{AgentTier: "T3", Query: q}); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(snap.Len("T3")), "skills") // after ResetTimer, which clears metrics
}

// BenchmarkSubstringPage is the anchor: the substring filter skill_list's
// query was before ranking (the query contained in the name or
// description, ignoring case, over the tier's pool, counting the total),
// on the same snapshot and queries.
func BenchmarkSubstringPage(b *testing.B) {
	snap := benchSnapshot(b)
	qs := benchQueries(b, snap)
	benchLatency(b, qs, func(q string) {
		lq := strings.ToLower(q)
		total := 0
		var page []registry.Brief
		snap.Skills("T3", "", func(br registry.Brief) bool {
			if strings.Contains(strings.ToLower(br.Name+"\n"+br.Description), lq) {
				if total++; len(page) < 100 {
					page = append(page, br)
				}
			}
			return true
		})
	})
}

// BenchmarkSearchIndexBuild is the index a snapshot builds (the search
// part of Registry.Snapshot's cost) over the tree's skills.
func BenchmarkSearchIndexBuild(b *testing.B) {
	snap := benchSnapshot(b)
	var docs []search.Doc
	snap.Skills("T3", "", func(br registry.Brief) bool {
		docs = append(docs, search.Doc{Name: br.Name, Category: br.Category, Description: br.Description})
		return true
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ib := search.NewBuilder(search.DefaultParams)
		for _, d := range docs {
			ib.Add(d)
		}
		ix := ib.Build()
		b.ReportMetric(float64(ix.Terms()), "terms")
	}
}
