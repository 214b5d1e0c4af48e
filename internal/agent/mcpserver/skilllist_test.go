package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// listDescriptions are descriptions whose text form is not the description
// itself: runs of whitespace, bounds, non-ASCII and invalid text.
var listDescriptions = []string{
	"Fills PDF forms.",
	"  Leading,\ttabs\nand\r\nnewlines  trailing  ",
	"",
	" \t\n",
	strings.Repeat("x", maxListDescription-1),
	strings.Repeat("x", maxListDescription),
	strings.Repeat("x", maxListDescription+1),
	strings.Repeat("ab ", 100),
	strings.Repeat("é", maxListDescription+5),
	strings.Repeat("x", maxListDescription-2) + " y",
	strings.Repeat("x", maxListDescription-1) + " y",
	strings.Repeat("x", maxListDescription-1) + "  \t y",
	strings.Repeat("x", maxListDescription) + " y",
	"no-break\u00a0space and next\u0085line, ideographic\u3000space",
	"invalid \xff byte " + strings.Repeat("z", 200),
	"invalid at the end \xe2\x82",
	strings.Repeat("🚀 ", 90),
}

// referenceListText is skill_list's text as it was built before
// skillListText wrote it in one buffer.
func referenceListText(p registry.Page) string {
	var b strings.Builder
	switch {
	case p.Total == 0:
		b.WriteString("No skills match.")
	case len(p.Skills) == 0:
		fmt.Fprintf(&b, "%d skills match; none after this cursor.", p.Total)
	case p.NextCursor == "":
		fmt.Fprintf(&b, "%d skills match; this page has %d, the last.", p.Total, len(p.Skills))
	default:
		fmt.Fprintf(&b, "%d skills match; this page has %d. Next page: cursor %q.", p.Total, len(p.Skills), p.NextCursor)
	}
	for i, e := range p.Skills {
		b.WriteString("\n")
		b.WriteString(e.Key)
		b.WriteString(": ")
		d := strings.Join(strings.Fields(e.Description), " ")
		if utf8.RuneCountInString(d) > maxListDescription {
			r := []rune(d)
			d = string(r[:maxListDescription-1]) + "…"
		}
		b.WriteString(d)
		if i < len(p.Scores) {
			fmt.Fprintf(&b, " (score %.2f)", p.Scores[i])
		}
	}
	return b.String()
}

// TestSkillListTextDifferential holds skillListText to the reference.
func TestSkillListTextDifferential(t *testing.T) {
	var all []registry.Brief
	for i, d := range listDescriptions {
		all = append(all, registry.Brief{Key: fmt.Sprintf("c/s%d", i), Description: d})
	}
	for _, p := range []registry.Page{
		{},
		{Total: 7},
		{Total: 7, Skills: all[:1]},
		{Total: 70, Skills: all, NextCursor: "abc\"def"},
		{Total: 2, Skills: all[:2], Scores: []float32{12.345, 0.004}},
	} {
		if got, want := skillListText(p), referenceListText(p); got != want {
			t.Errorf("skillListText(%+v):\n got %q\nwant %q", p, got, want)
		}
	}
}

// FuzzSkillListText holds skillListText to the reference on arbitrary
// descriptions; the seed corpus is listDescriptions.
func FuzzSkillListText(f *testing.F) {
	for _, d := range listDescriptions {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, d string) {
		p := registry.Page{Total: 1, Skills: []registry.Brief{{Key: "k", Description: d}}}
		if got, want := skillListText(p), referenceListText(p); got != want {
			t.Fatalf("description %q:\n got %q\nwant %q", d, got, want)
		}
	})
}

// TestSkillListPlainMatchesTyped: the plain skill_list handler advertises
// the same tool and gives the same results, errors included, as the typed
// handler mcp.AddTool makes of the same function (which validates the
// structured result against the output schema).
func TestSkillListPlainMatchesTyped(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sc := store.RootScan{Root: "/r", Scope: "project"}
	for i := range 40 {
		name := fmt.Sprintf("skill-%02d", i)
		cat := fmt.Sprintf("cat%d", i%3)
		d := listDescriptions[i%len(listDescriptions)]
		if !utf8.ValidString(d) {
			d = strings.ToValidUTF8(d, "?") // the structured result is JSON
		}
		tier := 1 + i%2
		var inv []string
		for _, at := range skill.TierAllows(tier) {
			inv = append(inv, string(at))
		}
		sc.Upserts = append(sc.Upserts, store.Version{Key: cat + "/" + name, Name: name, Category: cat, Description: d,
			Version: "1.0." + fmt.Sprint(i%2), Tier: tier, InvokableBy: inv, Dir: "/r/" + cat + "/" + name, Rel: cat + "/" + name,
			File: "/r/" + cat + "/" + name + "/SKILL.md", Digest: fmt.Sprintf("%064x", i), Fingerprint: fmt.Sprint(i), Valid: true, Diagnostics: []byte("[]")})
	}
	if err := db.ApplyScans(ctx, []store.RootScan{sc}); err != nil {
		t.Fatal(err)
	}
	ws, err := local.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	reg := registry.New(db, registry.Options{})
	mgr, err := session.NewManager(session.Options{Catalog: reg, Versions: db, Store: db, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := New(Options{Sessions: mgr, Catalog: reg})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := gw.Connect(ctx, capability.Principal{Tenant: "t", Agent: "a", Tier: skill.T3}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	typed := mcp.NewServer(&mcp.Implementation{Name: "typed", Version: "v0"}, nil)
	tool := skillListTool()
	// The input schema is inferred by AddTool; the output schema is the
	// portable one (a single type per node), which the typed handler then
	// validates every result against: a list is never null.
	tool.InputSchema = nil
	mcp.AddTool(typed, tool, conn.skillList)
	clientOf := func(s *mcp.Server) *mcp.ClientSession {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	plainC, typedC := clientOf(conn.Server()), clientOf(typed)

	toolJSON := func(cs *mcp.ClientSession) string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == ToolSkillList {
				b, err := json.Marshal(tl)
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
		}
		t.Fatal("no skill_list")
		return ""
	}
	if p, ty := toolJSON(plainC), toolJSON(typedC); p != ty {
		t.Errorf("skill_list definition:\nplain %s\ntyped %s", p, ty)
	}

	// A cursor from the typed handler, for the plain one and vice versa.
	first, err := typedC.CallTool(ctx, &mcp.CallToolParams{Name: ToolSkillList, Arguments: map[string]any{"limit": 3}})
	if err != nil {
		t.Fatal(err)
	}
	cursor := first.StructuredContent.(map[string]any)["next_cursor"].(string)
	for _, args := range []string{
		``, `{}`, `null`, `{"limit":3}`, `{"limit":3,"cursor":"` + cursor + `"}`, `{"limit":1000}`, `{"limit":1e2}`,
		`{"query":"PDF"}`, `{"query":"x","limit":2}`, `{"category":"cat1"}`, `{"category":"cat1","tier":2}`, `{"tier":1,"limit":5}`,
		`{"query":"nothing at all"}`, `{"query":"\u00e9\u00e9"}`,
		// Refused by the schema, the page, or the decoder.
		`{"limit":0.5}`, `{"limit":"3"}`, `{"limit":-1}`, `{"limit":5000}`, `{"tier":9}`, `{"limit":1e300}`, `{"limit":null}`,
		`{"query":5}`, `{"query":null}`, `{"Limit":3}`, `{"unknown":true}`, `{"cursor":"not-a-cursor"}`, `{"query":"` + strings.Repeat("q", 600) + `"}`,
		`[]`, `5`, `"x"`, `true`,
	} {
		params := &mcp.CallToolParams{Name: ToolSkillList}
		if args != "" {
			params.Arguments = json.RawMessage(args)
		}
		pr, perr := plainC.CallTool(ctx, params)
		tr, terr := typedC.CallTool(ctx, params)
		if fmt.Sprint(perr) != fmt.Sprint(terr) {
			t.Errorf("arguments %s: error\nplain %v\ntyped %v", args, perr, terr)
			continue
		}
		if perr != nil {
			continue
		}
		if pr.IsError != tr.IsError || !reflect.DeepEqual(pr.Content, tr.Content) || !reflect.DeepEqual(pr.StructuredContent, tr.StructuredContent) {
			pj, _ := json.Marshal(pr)
			tj, _ := json.Marshal(tr)
			t.Errorf("arguments %s:\nplain %.600s\ntyped %.600s", args, pj, tj)
		}
	}
}
