package registry_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// rankTree is the fixture of the ranking tests.
var rankTree = map[string]string{
	"docs/pdf/SKILL.md":             skd("pdf", "Everything about PDF files: merge, split, forms.", ""),
	"docs/pdf-forms/SKILL.md":       skd("pdf-forms", "Fill PDF forms and flatten them.", ""),
	"finance/invoices/SKILL.md":     skd("invoices", "Read invoices and receipts from PDF scans or images.", ""),
	"ops/kubernetes/SKILL.md":       skd("kubernetes", "Deploy services to a cluster with kubectl.", "tier: 2\n"),
	"office/meeting-notes/SKILL.md": skd("meeting-notes", "Summarise a meeting into notes and action items.", ""),
	"notes/SKILL.md":                skd("notes", "Take a note.", ""),
	"office/pdf/SKILL.md":           skd("pdf", "Print documents.", "tier: 1\n"),
}

func rankSnapshot(t *testing.T) *registry.Snapshot {
	t.Helper()
	root := t.TempDir()
	write(t, root, rankTree)
	reg, _ := open(t)
	if _, err := reg.Scan(context.Background(), []discover.Root{{Path: root, Scope: discover.ScopeProject}}, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := reg.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestSnapshotRankedPages: skill_list's query ranks by relevance over
// name, category and description, exact names first, with scores, and
// pages by rank.
func TestSnapshotRankedPages(t *testing.T) {
	snap := rankSnapshot(t)
	tests := []struct {
		name  string
		q     registry.PageQuery
		pages [][]string
		total int
	}{
		{"exact names first, then by score", registry.PageQuery{AgentTier: skill.T1, Query: "pdf"},
			[][]string{{"docs/pdf", "office/pdf", "docs/pdf-forms", "finance/invoices"}}, 4},
		{"an identity is exact", registry.PageQuery{AgentTier: skill.T1, Query: "office/pdf"},
			[][]string{{"office/pdf", "office/meeting-notes", "docs/pdf", "docs/pdf-forms", "finance/invoices"}}, 5},
		{"a task in the user's words", registry.PageQuery{AgentTier: skill.T1, Query: "read my scanned receipts"},
			[][]string{{"finance/invoices"}}, 1},
		{"hyphenated names split", registry.PageQuery{AgentTier: skill.T1, Query: "meeting notes"},
			[][]string{{"office/meeting-notes", "notes"}}, 2},
		{"by two, by rank", registry.PageQuery{AgentTier: skill.T1, Query: "pdf", Limit: 2},
			[][]string{{"docs/pdf", "office/pdf"}, {"docs/pdf-forms", "finance/invoices"}}, 4},
		{"category", registry.PageQuery{AgentTier: skill.T1, Query: "pdf", Category: "docs"},
			[][]string{{"docs/pdf", "docs/pdf-forms"}}, 2},
		{"tier", registry.PageQuery{AgentTier: skill.T1, Query: "pdf", Tier: 1},
			[][]string{{"office/pdf"}}, 1},
		{"the agent's pool", registry.PageQuery{AgentTier: skill.T3, Query: "deploy to kubernetes"},
			[][]string{{"ops/kubernetes"}}, 1},
		{"a prefix", registry.PageQuery{AgentTier: skill.T1, Query: "kube"},
			[][]string{{"ops/kubernetes"}}, 1},
		{"nothing relevant", registry.PageQuery{AgentTier: skill.T1, Query: "quantum chemistry"},
			[][]string{{}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, totals := pages(t, snap, tc.q)
			if !reflect.DeepEqual(got, tc.pages) {
				t.Errorf("pages = %q, want %q", got, tc.pages)
			}
			for i, n := range totals {
				if n != tc.total {
					t.Errorf("page %d total = %d, want %d", i, n, tc.total)
				}
			}
		})
	}
	p, err := snap.Page(registry.PageQuery{AgentTier: skill.T1, Query: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Scores) != len(p.Skills) {
		t.Fatalf("%d scores for %d skills", len(p.Scores), len(p.Skills))
	}
	got := fmt.Sprintf("%.2f", p.Scores)
	if want := "[0.44 0.42 0.43 0.22]"; got != want {
		t.Errorf("scores = %s, want %s", got, want)
	}
	if p, _ := snap.Page(registry.PageQuery{AgentTier: skill.T1}); p.Scores != nil {
		t.Errorf("scores without a query: %v", p.Scores)
	}
}

// TestSnapshotRankedCursor: a ranked page's cursor is for ranked pages
// only, and the other way round.
func TestSnapshotRankedCursor(t *testing.T) {
	snap := rankSnapshot(t)
	ranked, err := snap.Page(registry.PageQuery{AgentTier: skill.T1, Query: "pdf", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := snap.Page(registry.PageQuery{AgentTier: skill.T1, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    registry.PageQuery
		want string
	}{
		{registry.PageQuery{AgentTier: skill.T1, Query: "pdf", Cursor: plain.NextCursor},
			"bad page request: cursor is not one that skill_list returned for this query; omit it to start from the first page"},
		{registry.PageQuery{AgentTier: skill.T1, Cursor: ranked.NextCursor},
			"bad page request: cursor is not one that skill_list returned; omit it to start from the first page"},
		{registry.PageQuery{AgentTier: skill.T1, Query: "pdf", After: "docs/pdf"},
			"bad page request: a ranked page (with a query) continues by its cursor, not after an identity"},
	} {
		_, err := snap.Page(tc.q)
		if !errors.Is(err, registry.ErrBadPage) || err.Error() != tc.want {
			t.Errorf("%+v: err = %v, want %s", tc.q, err, tc.want)
		}
	}
	// Past the end: an empty page with the total.
	p, err := snap.Page(registry.PageQuery{AgentTier: skill.T1, Query: "pdf", Cursor: "cjE6MTAw"}) // r1:100
	if err != nil || len(p.Skills) != 0 || p.Total != 4 || p.NextCursor != "" {
		t.Errorf("past the end: %+v, %v", p, err)
	}
}
