package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// labelledQuery is one query of testdata/search_queries.json: a task as a
// user phrases it and the names of the skills that answer it.
type labelledQuery struct {
	Query  string   `json:"query"`
	Expect []string `json:"expect"`
}

func labelledQueries(t testing.TB) []labelledQuery {
	t.Helper()
	b, err := os.ReadFile("testdata/search_queries.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Queries []labelledQuery `json:"queries"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Queries
}

// corpusSnapshot scans the public corpus (SKILLGATE_CORPUS) and returns
// its snapshot and the agent tier that sees the most of it, or skips.
func corpusSnapshot(t testing.TB) (*registry.Snapshot, skill.AgentTier) {
	t.Helper()
	dir := os.Getenv("SKILLGATE_CORPUS")
	if dir == "" {
		t.Skip("set SKILLGATE_CORPUS to the public corpus (592 skills)")
	}
	_, db := open(t)
	lim := discover.DefaultLimits
	lim.MaxDirs = 1 << 20
	reg := registry.New(db, registry.Options{Limits: lim})
	if _, err := reg.Scan(context.Background(), []discover.Root{{Path: dir, Scope: discover.ScopeProject}}, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := reg.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	best := skill.AllAgentTiers[0]
	for _, at := range skill.AllAgentTiers {
		if snap.Len(at) > snap.Len(best) {
			best = at
		}
	}
	return snap, best
}

// relevance is MRR and recall@5 over a query set: the reciprocal rank of
// the first expected skill (0 when not in the results), and whether one
// is in the first five.
type relevance struct {
	mrr, recall5 float64
	found        int // queries with an expected skill anywhere in the results
}

func (r relevance) String() string {
	return fmt.Sprintf("MRR %.3f, recall@5 %.3f, found %d", r.mrr, r.recall5, r.found)
}

// measure ranks every query with rank (the names of the results, best
// first) and scores it.
func measure(qs []labelledQuery, rank func(q string) []string) relevance {
	var r relevance
	for _, q := range qs {
		got := rank(q.Query)
		for i, n := range got {
			if slices.Contains(q.Expect, n) {
				r.mrr += 1 / float64(i+1)
				if i < 5 {
					r.recall5++
				}
				r.found++
				break
			}
		}
	}
	r.mrr /= float64(len(qs))
	r.recall5 /= float64(len(qs))
	return r
}

// TestSearchRelevance measures the ranking of skill_list's query on the
// labelled queries of testdata/search_queries.json over the public corpus
// against the substring filter it replaced (the query contained in the
// name or description, ignoring case, by identity), in the same run. It
// fails when ranking is not well ahead of the substring match.
func TestSearchRelevance(t *testing.T) {
	qs := labelledQueries(t)
	if len(qs) < 50 {
		t.Fatalf("%d labelled queries, want at least 50", len(qs))
	}
	snap, at := corpusSnapshot(t)
	ranked := measure(qs, func(q string) []string {
		p, err := snap.Page(registry.PageQuery{AgentTier: at, Query: q, Limit: registry.MaxPageLimit})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range p.Skills {
			out = append(out, b.Name)
		}
		return out
	})
	substring := measure(qs, func(q string) []string {
		var out []string
		snap.Skills(at, "", func(b registry.Brief) bool {
			if strings.Contains(strings.ToLower(b.Name+"\n"+b.Description), strings.ToLower(q)) {
				out = append(out, b.Name)
			}
			return true
		})
		return out
	})
	t.Logf("skills %d, queries %d", snap.Len(at), len(qs))
	t.Logf("ranked (BM25F): %v", ranked)
	t.Logf("substring:      %v", substring)
	fmt.Printf("RELEVANCE queries=%d skills=%d ranked_mrr=%.3f ranked_recall5=%.3f ranked_found=%d substring_mrr=%.3f substring_recall5=%.3f substring_found=%d\n",
		len(qs), snap.Len(at), ranked.mrr, ranked.recall5, ranked.found, substring.mrr, substring.recall5, substring.found)
	if ranked.mrr < 0.7 || ranked.recall5 < 0.8 || ranked.mrr < 3*substring.mrr {
		t.Errorf("ranked %v, substring %v: want MRR >= 0.7, recall@5 >= 0.8 and MRR at least 3x the substring match's", ranked, substring)
	}
}
