package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// countingStore counts the store reads a connection makes: reads of the
// versions (Versions, EachVersion) and of the generation.
type countingStore struct {
	*sqlite.DB
	versions, generations atomic.Int64
}

func (s *countingStore) Versions(ctx context.Context, f store.Filter) ([]store.Version, error) {
	s.versions.Add(1)
	return s.DB.Versions(ctx, f)
}

func (s *countingStore) EachVersion(ctx context.Context, f store.Filter, fn func(store.Version) error) error {
	s.versions.Add(1)
	return s.DB.EachVersion(ctx, f, fn)
}

func (s *countingStore) RegistryGeneration(ctx context.Context) (int64, error) {
	s.generations.Add(1)
	return s.DB.RegistryGeneration(ctx)
}

// catalogEnv is a gateway over n generated skills (tier 1, ten
// categories), whose registry reads through a countingStore.
type catalogEnv struct {
	st *countingStore
	gw *mcpserver.Gateway
}

func newCatalogEnv(t testing.TB, n int) *catalogEnv {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		dir := filepath.Join(root, fmt.Sprintf("cat%d", i%10), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		md := "---\nname: " + name + "\ndescription: Skill number " + fmt.Sprint(i) + " does things.\ntier: 1\n---\nBody\n"
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := &countingStore{DB: db}
	lim := discover.DefaultLimits
	lim.MaxDirs = 1_000_000
	reg := registry.New(st, registry.Options{Limits: lim})
	if _, err := reg.Scan(ctx, []discover.Root{{Path: root, Scope: discover.ScopeProject}}, nil); err != nil {
		t.Fatal(err)
	}
	ws, err := local.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	mgr, err := session.NewManager(session.Options{Catalog: reg, Versions: st, Store: db, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := mcpserver.New(mcpserver.Options{Sessions: mgr, Catalog: reg})
	if err != nil {
		t.Fatal(err)
	}
	return &catalogEnv{st: st, gw: gw}
}

func (e *catalogEnv) connect(t testing.TB, agent string) *client {
	t.Helper()
	en := &env{gw: e.gw}
	return en.connect(t, principal(agent, skill.T3), "")
}

// TestConnectReadsNoVersions: a connection (connect, tools/list, a
// skill_list page, the disclosure) reads no skill versions from the store,
// only the registry generation, and as often whatever the registry's size.
// The catalog is read once per registry change, for every session.
func TestConnectReadsNoVersions(t *testing.T) {
	const conns = 8
	perConnect := map[int]int64{}
	for _, n := range []int{30, 600} {
		e := newCatalogEnv(t, n)
		// The first connection builds the snapshot: one read of the versions.
		e.connect(t, "warm-up")
		if got := e.st.versions.Load(); got != 1 {
			t.Fatalf("n=%d: the first connection read the versions %d times, want once", n, got)
		}
		e.st.versions.Store(0)
		e.st.generations.Store(0)
		for i := range conns {
			c := e.connect(t, fmt.Sprintf("agent-%d", i))
			if _, err := c.cs.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			var out struct {
				Skills []struct{ Name string } `json:"skills"`
				Total  int                     `json:"total"`
			}
			c.structured(t, "skill_list", map[string]any{"limit": 5}, &out)
			if len(out.Skills) != 5 || out.Total != n {
				t.Fatalf("n=%d: skill_list gave %d skills of %d", n, len(out.Skills), out.Total)
			}
			if _, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: mcpserver.DisclosureURI}); err != nil {
				t.Fatal(err)
			}
		}
		if got := e.st.versions.Load(); got != 0 {
			t.Errorf("n=%d: %d connections read the versions %d times, want 0", n, conns, got)
		}
		perConnect[n] = e.st.generations.Load() / conns
		if e.st.generations.Load()%conns != 0 || perConnect[n] > 5 {
			t.Errorf("n=%d: %d generation reads for %d connections", n, e.st.generations.Load(), conns)
		}
	}
	if perConnect[30] != perConnect[600] {
		t.Errorf("generation reads per connection depend on the registry's size: %v", perConnect)
	}
}

// TestSkillListPaging: skill_list over MCP pages by cursor, filters, and
// refuses bad arguments with what to do.
func TestSkillListPaging(t *testing.T) {
	e := newCatalogEnv(t, 25)
	c := e.connect(t, "pager")
	type page struct {
		Skills []struct {
			Name     string  `json:"name"`
			Category string  `json:"category"`
			Score    float64 `json:"score"`
		} `json:"skills"`
		Total      int    `json:"total"`
		NextCursor string `json:"next_cursor"`
	}
	var all []string
	cursor := ""
	for i := 0; i < 10; i++ {
		args := map[string]any{"limit": 10}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var p page
		c.structured(t, "skill_list", args, &p)
		if p.Total != 25 {
			t.Fatalf("total %d, want 25", p.Total)
		}
		for _, s := range p.Skills {
			all = append(all, s.Category+"/"+s.Name)
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if len(all) != 25 || all[0] != "cat0/skill-00000" || all[1] != "cat0/skill-00010" || all[24] != "cat9/skill-00019" {
		t.Errorf("paged through %d skills: %q", len(all), all)
	}
	var p page
	// A query ranks: every skill of cat3 has "number", one has "13" too.
	c.structured(t, "skill_list", map[string]any{"category": "cat3", "query": "NUMBER 13"}, &p)
	if got := len(p.Skills); got != 3 || p.Skills[0].Name != "skill-00013" || p.Total != 3 || p.NextCursor != "" ||
		p.Skills[0].Score <= p.Skills[1].Score || p.Skills[2].Score <= 0 {
		t.Errorf("category and query: %+v", p)
	}
	text, _ := c.call(t, "skill_list", map[string]any{"category": "cat3", "query": "skill-00023"})
	if !strings.HasPrefix(text, "3 skills match; this page has 3, the last.\ncat3/skill-00023: Skill number 23 does things. (score ") {
		t.Errorf("exact name first: %q", text)
	}
	text, isErr := c.call(t, "skill_list", map[string]any{"category": "cat3"})
	want := "3 skills match; this page has 3, the last.\n" +
		"cat3/skill-00003: Skill number 3 does things.\ncat3/skill-00013: Skill number 13 does things.\ncat3/skill-00023: Skill number 23 does things."
	if isErr || text != want {
		t.Errorf("text = %q, want %q", text, want)
	}
	text, _ = c.call(t, "skill_list", map[string]any{"limit": 1, "tier": 1})
	if !strings.HasPrefix(text, "25 skills match; this page has 1. Next page: cursor \"") || strings.Count(text, "\n") != 1 {
		t.Errorf("first page of one: %q", text)
	}
	text, _ = c.call(t, "skill_list", map[string]any{"query": "nothing like it"})
	if text != "No skills match." {
		t.Errorf("no match: %q", text)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"limit": 5000}, "Error: bad page request: limit must be between 1 and 1000 (default 100), got 5000"},
		{map[string]any{"limit": -3}, "Error: bad page request: limit must be between 1 and 1000 (default 100), got -3"},
		{map[string]any{"tier": 9}, "Error: bad page request: tier must be 1, 2 or 3 (or omitted for all), got 9"},
		{map[string]any{"cursor": "not-a-cursor"}, "Error: bad page request: cursor is not one that skill_list returned; omit it to start from the first page"},
	} {
		got, isErr := c.call(t, "skill_list", tc.args)
		if !isErr || got != tc.want {
			t.Errorf("skill_list %v = %q (error %v), want %q", tc.args, got, isErr, tc.want)
		}
	}
	// The load_skill description lists what the tier may load, by identity.
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == mcpserver.ToolLoadSkill && !strings.Contains(tool.Description, "Skills you can load: cat0/skill-00000, cat0/skill-00010, cat0/skill-00020, cat1/skill-00001,") {
			t.Errorf("load_skill description: %q", tool.Description)
		}
	}
}

// TestSyncRegistrySeesOtherProcess: a skill disabled through another store
// handle on the same file (the CLI, another process) reaches a connected
// agent at the next SyncRegistry: its load_skill definition changes
// (tools/list_changed); with nothing changed, nobody is notified.
func TestSyncRegistrySeesOtherProcess(t *testing.T) {
	ctx := context.Background()
	e := newCatalogEnv(t, 5)
	c := e.connect(t, "watcher")
	if notified, err := e.gw.SyncRegistry(ctx); err != nil || notified {
		t.Fatalf("first SyncRegistry = %v, %v; want a baseline, no notification", notified, err)
	}
	if notified, err := e.gw.SyncRegistry(ctx); err != nil || notified {
		t.Fatalf("SyncRegistry with nothing changed = %v, %v", notified, err)
	}
	other, err := sqlite.Open(ctx, e.st.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.SetEnabled(ctx, "cat2/skill-00002", false); err != nil {
		t.Fatal(err)
	}
	if notified, err := e.gw.SyncRegistry(ctx); err != nil || !notified {
		t.Fatalf("SyncRegistry after another process disabled a skill = %v, %v", notified, err)
	}
	select {
	case <-c.tools:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed")
	}
	var out struct {
		Total int `json:"total"`
	}
	c.structured(t, "skill_list", map[string]any{}, &out)
	if out.Total != 4 {
		t.Errorf("skill_list total = %d after one of 5 was disabled elsewhere, want 4", out.Total)
	}
}
