package search_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/registry/search"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"pdf-tools", []string{"pdf", "tool"}},
		{"PDF_Tools", []string{"pdf", "tool"}},
		{"Use this skill when you need to convert PDFs", []string{"skill", "convert", "pdf"}},
		{"visualize visualizing visualization visualized", []string{"visualiz", "visualiz", "visualiz", "visualiz"}},
		{"images imaging image", []string{"imag", "imag", "imag"}},
		{"running debugged tests", []string{"run", "debug", "test"}},
		{"Ünïcode ÉTÉ 東京", []string{"ünïcode", "été", "東京"}},
		{"  ", nil},
		{"a the of", nil},
		{"docs apis string bed class status", []string{"doc", "apis", "string", "bed", "class", "status"}},
		{strings.Repeat("x", 100), []string{strings.Repeat("x", 64)}},
	}
	for _, tc := range tests {
		if got := search.Terms(nil, tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"queries": "query", "classes": "class", "docs": "doc", "generation": "generat", "generate": "generat",
		"generating": "generat", "normalization": "normaliz", "bugs": "bug", "focus": "focus", "analysis": "analysis",
		"tree": "tree", "sing": "sing", "stopped": "stop", "installed": "install", "naïve": "naïve",
	} {
		if got := search.Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// docs is the ranking fixture.
var docs = []search.Doc{
	{Name: "pdf-forms", Category: "docs", Description: "Fill PDF forms and flatten them."},
	{Name: "invoice-reader", Category: "finance", Description: "Read invoices, receipts and bills from PDF or images."},
	{Name: "kubernetes-deploy", Category: "ops", Description: "Deploy services to a cluster with kubectl."},
	{Name: "notes", Category: "", Description: "Take a note."},
	{Name: "pdf", Category: "docs", Description: "Everything about PDF files: merge, split, pdf forms."},
	{Name: "meeting-notes", Category: "office", Description: "Summarise a meeting into notes and action items."},
}

// rank returns the names of the documents q finds, best first, with
// their scores rounded to tenths.
func rank(t *testing.T, ix *search.Index, q string) []string {
	t.Helper()
	pq := search.ParseQuery(q)
	acc := search.NewAccumulator(ix.Len())
	defer acc.Release()
	ix.Score(pq, acc)
	var hits []search.Hit
	for _, d := range acc.Touched() {
		hits = append(hits, search.Hit{Doc: d, Score: acc.Score(d), Exact: pq.ExactName(docs[d].Name, docs[d].Category+"/"+docs[d].Name)})
	}
	search.Top(hits, len(hits))
	var out []string
	for _, h := range hits {
		out = append(out, docs[h.Doc].Name)
	}
	return out
}

func TestRank(t *testing.T) {
	b := search.NewBuilder(search.Params{})
	for i, d := range docs {
		if n := b.Add(d); n != int32(i) {
			t.Fatalf("Add = %d, want %d", n, i)
		}
	}
	ix := b.Build()
	if ix.Len() != len(docs) {
		t.Fatalf("Len = %d", ix.Len())
	}
	tests := []struct {
		q    string
		want []string
	}{
		// The exact name first, then by score: a name match outweighs
		// the description's.
		{"pdf", []string{"pdf", "pdf-forms", "invoice-reader"}},
		{"PDF", []string{"pdf", "pdf-forms", "invoice-reader"}},
		{"fill in a pdf form", []string{"pdf-forms", "pdf", "invoice-reader"}},
		{"read my receipts", []string{"invoice-reader"}},
		{"notes", []string{"notes", "meeting-notes"}},
		{"meeting", []string{"meeting-notes"}},
		// A word typed halfway is a prefix.
		{"kube", []string{"kubernetes-deploy"}},
		{"deploying to kubernetes", []string{"kubernetes-deploy"}},
		{"nothing relevant at all", nil},
		{"", nil},
	}
	for _, tc := range tests {
		if got := rank(t, ix, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.q, got, tc.want)
		}
	}
}

func TestParseQuery(t *testing.T) {
	q := search.ParseQuery("  PDF Forms ")
	if q.Text() != "pdf forms" || q.Empty() {
		t.Errorf("Text = %q, Empty = %v", q.Text(), q.Empty())
	}
	if !q.ExactName("PDF forms", "x") || q.ExactName("pdf", "docs/pdf") {
		t.Error("ExactName")
	}
	if !search.ParseQuery(" \t").Empty() {
		t.Error("blank query not empty")
	}
}

// TestTop checks the partial selection against a full sort.
func TestTop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		hits := make([]search.Hit, n)
		for i := range hits {
			hits[i] = search.Hit{Doc: int32(i), Score: float32(r.IntN(20)), Exact: r.IntN(50) == 0}
		}
		want := slices.Clone(hits)
		slices.SortFunc(want, search.Compare)
		for _, k := range []int{0, min(1, n), min(5, n), n / 2, n} {
			got := slices.Clone(hits)
			search.Top(got, k)
			if !slices.Equal(got[:k], want[:k]) {
				t.Fatalf("n=%d k=%d: got %v, want %v", n, k, got[:k], want[:k])
			}
		}
	}
}

// FuzzTerms checks that any text, a query from an agent, gives valid,
// bounded, lower-case terms, and that parsing it never panics.
func FuzzTerms(f *testing.F) {
	for _, s := range []string{"pdf-tools", "Fill PDF forms", "Ünïcode ÉTÉ", "\xff\xfe", strings.Repeat("ab", 100), "a the of"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range search.Terms(nil, s) {
			if w == "" || len(w) > 64 || !utf8.ValidString(w) {
				t.Fatalf("term %q of %q", w, s)
			}
		}
		q := search.ParseQuery(s)
		_ = q.ExactName(s, s)
	})
}
