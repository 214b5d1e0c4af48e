package mcpserver_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// benchGateway is a gateway over a registry of n synthetic skills written
// straight into the store (no tree to scan): what a connection and a
// skill_list page cost does not depend on where the rows came from.
func benchGateway(b *testing.B, n int) *mcpserver.Gateway {
	b.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "skillgate.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	root := "/bench/skills"
	sc := store.RootScan{Root: root, Scope: "project"}
	for i := range n {
		name := fmt.Sprintf("skill-%06d", i)
		cat := fmt.Sprintf("cat%03d", i%200)
		tier := 2
		if i%20 == 0 {
			tier = 1
		}
		dir := root + "/" + cat + "/" + name
		sc.Upserts = append(sc.Upserts, store.Version{
			Key: cat + "/" + name, Name: name, Category: cat, Tier: tier, InvokableBy: skillTiers(tier),
			Description: fmt.Sprintf("Skill %d: drafts, checks and files documents of kind %d for the team, with the references it needs.", i, i%97),
			Dir:         dir, Rel: cat + "/" + name, File: dir + "/SKILL.md", Digest: fmt.Sprintf("%064x", i), Fingerprint: fmt.Sprint(i),
			Valid: true, Diagnostics: []byte("[]"),
		})
	}
	if err := db.ApplyScans(ctx, []store.RootScan{sc}); err != nil {
		b.Fatal(err)
	}
	ws, err := local.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	reg := registry.New(db, registry.Options{})
	mgr, err := session.NewManager(session.Options{Catalog: reg, Versions: db, Store: db, Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	gw, err := mcpserver.New(mcpserver.Options{Sessions: mgr, Catalog: reg})
	if err != nil {
		b.Fatal(err)
	}
	return gw
}

func skillTiers(tier int) []string {
	var out []string
	for _, t := range skill.TierAllows(tier) {
		out = append(out, string(t))
	}
	return out
}

// benchConnect connects an agent in memory and lists its tools, as a
// client does after initialize.
func benchConnect(b *testing.B, gw *mcpserver.Gateway, agent string) (*mcp.ClientSession, *mcpserver.Conn) {
	ctx := context.Background()
	conn, err := gw.Connect(ctx, principal(agent, skill.T3), "", nil)
	if err != nil {
		b.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := conn.Server().Connect(ctx, st, nil); err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		b.Fatal(err)
	}
	return cs, conn
}

// BenchmarkConnect100 connects 100 agents at once (new sessions: attach,
// load_skill's description, initialize, tools/list) to a registry of 10,000
// and 100,000 skills; one op is all 100. The catalog snapshot is built
// before the timer starts: what is measured is the per-session cost.
// bench/catalog.sh measures the same over HTTP against `skillgate serve`.
func BenchmarkConnect100(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			gw := benchGateway(b, n)
			cs, conn := benchConnect(b, gw, "warm-up")
			cs.Close()
			conn.Close()
			round := 0
			for b.Loop() {
				round++
				var wg sync.WaitGroup
				closers := make([]func(), 100)
				for i := range 100 {
					wg.Go(func() {
						cs, conn := benchConnect(b, gw, fmt.Sprintf("agent-%d-%d", round, i))
						closers[i] = func() { cs.Close(); conn.Close() }
					})
				}
				wg.Wait()
				b.StopTimer()
				for _, c := range closers {
					c()
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkSkillListPage is one skill_list page of 100 through the MCP
// layer (in memory), paging through the registry, at 10,000 and 100,000
// skills: the first page, a page from a cursor, and a filtered page (a
// query scans the tier's pool to count the total).
func BenchmarkSkillListPage(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		gw := benchGateway(b, n)
		cs, conn := benchConnect(b, gw, "pager")
		b.Cleanup(func() { cs.Close(); conn.Close() })
		for _, bc := range []struct {
			name string
			args map[string]any
		}{
			{"first", map[string]any{}},
			{"cursor", nil},
			{"query", map[string]any{"query": "kind 42 "}},
		} {
			b.Run(fmt.Sprintf("skills=%d/%s", n, bc.name), func(b *testing.B) {
				ctx := context.Background()
				cursor := ""
				for b.Loop() {
					args := bc.args
					if args == nil {
						args = map[string]any{}
						if cursor != "" {
							args["cursor"] = cursor
						}
					}
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSkillList, Arguments: args})
					if err != nil || res.IsError {
						b.Fatal(err, res)
					}
					if bc.args == nil {
						next, _ := res.StructuredContent.(map[string]any)["next_cursor"].(string)
						cursor = next
					}
				}
			})
		}
	}
}
