package registry

import (
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/skillgate/skillgate/internal/registry/search"
)

// rankFilter is what a ranked page filters an entry on (see
// Snapshot.filters).
type rankFilter struct {
	tiers    uint8 // entry.tiers
	tier     int8
	category int32 // in Snapshot.categories
}

// rankedPage is Page with a query: the skills of the agent tier's pool
// (and q.Category, q.Tier) that the index scores above 0 or whose name or
// identity is the query, ranked by search.Compare; a page is a range of
// ranks. It costs the postings of the query's terms, not the pool's size.
func (s *Snapshot) rankedPage(q PageQuery, limit int) (Page, error) {
	offset := 0
	if q.Cursor != "" {
		var err error
		if offset, err = decodeRankCursor(q.Cursor); err != nil {
			return Page{}, err
		}
	}
	pq := search.ParseQuery(q.Query)
	acc := search.NewAccumulator(len(s.entries))
	defer acc.Release()
	s.index.Score(pq, acc)
	// The exact names (a bare name may be used by several categories; an
	// identity by one skill).
	var exact []int32
	n := sort.Search(len(s.byName), func(j int) bool { return s.text.str(s.entries[s.byName[j]].name) >= pq.Text() })
	for _, i := range s.byName[n:] {
		if s.text.str(s.entries[i].name) != pq.Text() {
			break
		}
		exact = append(exact, i)
	}
	if k := sort.Search(len(s.entries), func(j int) bool { return s.key(int32(j)) >= pq.Text() }); k < len(s.entries) && s.key(int32(k)) == pq.Text() {
		exact = append(exact, int32(k))
	}
	// The pool's filters, checked on each scored skill.
	k := tierIndex(q.AgentTier)
	cat, ok := s.categories[q.Category]
	if k < 0 || q.Category != "" && !ok {
		return Page{Skills: []Brief{}, Scores: []float32{}}, nil
	}
	in := func(i int32) bool {
		f := s.filters[i]
		return f.tiers&(1<<k) != 0 && (q.Category == "" || f.category == cat) && (q.Tier == 0 || int(f.tier) == q.Tier)
	}
	hits := acc.Hits()
	for _, i := range acc.Touched() {
		if in(i) {
			hits = append(hits, search.Hit{Doc: i, Score: acc.Score(i), Exact: slices.Contains(exact, i)})
		}
	}
	for _, i := range exact {
		if acc.Score(i) == 0 && in(i) {
			hits = append(hits, search.Hit{Doc: i, Exact: true})
		}
	}
	defer acc.KeepHits(hits)
	out := Page{Skills: []Brief{}, Scores: []float32{}, Total: len(hits)}
	end := min(offset+limit, len(hits))
	if offset >= len(hits) {
		return out, nil
	}
	search.Top(hits, end)
	for _, h := range hits[offset:end] {
		out.Skills = append(out.Skills, s.brief(h.Doc))
		out.Scores = append(out.Scores, h.Score)
	}
	if end < len(hits) {
		out.NextCursor = encodeRankCursor(end)
	}
	return out, nil
}

// rankCursorPrefix versions the cursor of a ranked page: the rank to
// continue from.
const rankCursorPrefix = "r1:"

func encodeRankCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(rankCursorPrefix + strconv.Itoa(offset)))
}

func decodeRankCursor(c string) (int, error) {
	bad := fmt.Errorf("%w: cursor is not one that skill_list returned for this query; omit it to start from the first page", ErrBadPage)
	if len(c) > maxCursorBytes {
		return 0, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), rankCursorPrefix) {
		return 0, bad
	}
	n, err := strconv.Atoi(string(b[len(rankCursorPrefix):]))
	if err != nil || n < 0 || n > 1<<30 {
		return 0, bad
	}
	return n, nil
}

// Ranked is an entry with its relevance to a query.
type Ranked struct {
	Entry
	Score float32 `json:"score"`
	// Exact says the entry's name or identity is the query.
	Exact bool `json:"exact,omitempty"`
}

// Rank ranks entries (a List result, in its order) by relevance to query
// as skill_list ranks a snapshot's skills: the same terms, BM25F over
// name, category and description, an exact name or identity first. Only
// the entries the query matches are returned, best first. It builds an
// index of the entries for the call: for the operator's commands and the
// console, which rank what List returns (disabled, rejected or shadowed
// skills included); agents' queries use the snapshot's index. An empty
// query is an ErrBadPage error, as is one longer than skill_list's bound.
func Rank(entries []Entry, query string) ([]Ranked, error) {
	if err := (PageQuery{Query: query}).validate(); err != nil {
		return nil, err
	}
	pq := search.ParseQuery(query)
	if pq.Empty() {
		return nil, fmt.Errorf("%w: the query is empty", ErrBadPage)
	}
	b := search.NewBuilder(search.DefaultParams)
	for _, e := range entries {
		b.Add(search.Doc{Name: e.Name, Category: e.Category, Description: e.Description})
	}
	ix := b.Build()
	acc := search.NewAccumulator(ix.Len())
	defer acc.Release()
	ix.Score(pq, acc)
	var hits []search.Hit
	for i, e := range entries {
		sc, exact := acc.Score(int32(i)), pq.ExactName(e.Name, e.Key)
		if sc > 0 || exact {
			hits = append(hits, search.Hit{Doc: int32(i), Score: sc, Exact: exact})
		}
	}
	search.Top(hits, len(hits))
	out := make([]Ranked, len(hits))
	for i, h := range hits {
		out[i] = Ranked{Entry: entries[h.Doc], Score: h.Score, Exact: h.Exact}
	}
	return out, nil
}

// WriteRanked writes ranked entries as the table of 'skillgate search':
// the score, then what 'skillgate ls' shows.
func WriteRanked(w io.Writer, rs []Ranked) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCORE\tNAME\tTIER\tSCOPE\tTRUST\tSTATE\tDESCRIPTION")
	for _, r := range rs {
		name := r.Key
		if !r.Valid {
			name = r.Rel
		}
		fmt.Fprintf(tw, "%.2f\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Score, name, r.Tier, r.Scope, r.Trust, r.State(), oneLine(r.Description, 60))
	}
	return tw.Flush()
}
