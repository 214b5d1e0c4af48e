package mcpskills_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/mcpskills"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/model/skillsext"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// BenchmarkList walks skills/list in process over the registry of the data
// directory SKILLGATE_BENCH_DATA (bench/skillsext.sh makes one of 10,000
// skills): per walk, cold (an empty entry cache) and warm (every entry
// cached), and reports the heap in use after the walk, to show it stays
// bounded by the cache, not by the pages walked.
func BenchmarkList(b *testing.B) {
	data := os.Getenv("SKILLGATE_BENCH_DATA")
	if data == "" {
		b.Skip("SKILLGATE_BENCH_DATA is unset: run bench/skillsext.sh")
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ws, err := local.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := registry.New(db, registry.Options{})
	mgr, err := session.NewManager(session.Options{Catalog: reg, Versions: db, Store: db, Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	p := principal(skill.T1)
	walk := func(s *mcpskills.Server) int {
		n, cursor := 0, ""
		for {
			params, _ := json.Marshal(map[string]string{"cursor": cursor})
			res, err := s.Handle(ctx, p, skillsext.MethodList, params)
			if err != nil {
				b.Fatal(err)
			}
			var page struct {
				Skills     []json.RawMessage `json:"skills"`
				NextCursor string            `json:"nextCursor"`
			}
			if err := json.Unmarshal(res, &page); err != nil {
				b.Fatal(err)
			}
			n += len(page.Skills)
			if page.NextCursor == "" {
				return n
			}
			cursor = page.NextCursor
		}
	}
	for _, tc := range []struct {
		name  string
		cache int
		warm  bool
	}{{"cold", 0, false}, {"warm", 0, true}} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := mcpskills.NewServer(mcpskills.Options{View: mgr, CacheBytes: tc.cache})
			if err != nil {
				b.Fatal(err)
			}
			if tc.warm {
				walk(s)
			}
			for b.Loop() {
				if !tc.warm {
					s, _ = mcpskills.NewServer(mcpskills.Options{View: mgr, CacheBytes: tc.cache})
				}
				walk(s)
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-inuse-MB")
			runtime.KeepAlive(s)
		})
	}
}
