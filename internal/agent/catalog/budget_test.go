package catalog_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/agent/catalog"
	"github.com/skillgate/skillgate/internal/model/skill"
)

var formats = []catalog.Format{catalog.FormatXML, catalog.FormatJSON}

// sameAsReference fails t when Budget and referenceBudget disagree on
// items at budget, naming the first difference.
func sameAsReference(t testing.TB, items []catalog.Item, f catalog.Format, budget int) {
	t.Helper()
	got, gotRep := catalog.Budget(items, f, budget)
	want, wantRep := referenceBudget(items, f, budget)
	if got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s, %d items, budget %d: output differs from the reference at byte %d:\n got …%q\nwant …%q",
			f, len(items), budget, i, tail(got, i), tail(want, i))
	}
	if !reflect.DeepEqual(gotRep, wantRep) {
		t.Fatalf("%s, %d items, budget %d: report\n got %+v\nwant %+v", f, len(items), budget, gotRep, wantRep)
	}
}

func tail(s string, i int) string {
	lo, hi := max(i-40, 0), min(i+40, len(s))
	return s[lo:hi]
}

// corpusItems loads every skill of the public corpus ($SKILLGATE_CORPUS,
// else ../shared/corpus beside the checkout) as catalog items, in verdicts.jsonl order; it
// skips the test when the corpus is absent.
func corpusItems(t testing.TB) []catalog.Item {
	t.Helper()
	dir := os.Getenv("SKILLGATE_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "corpus")
	}
	f, err := os.Open(filepath.Join(dir, "verdicts.jsonl"))
	if err != nil {
		t.Skipf("skill corpus not found at %s (set SKILLGATE_CORPUS): %v", dir, err)
	}
	defer f.Close()
	var items []catalog.Item
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		s, err := skill.Load(context.Background(), filepath.Join(dir, v.Path), skill.Options{SkipBody: true})
		if err != nil {
			t.Fatal(err)
		}
		inv := []string{}
		for _, a := range s.InvokableBy {
			inv = append(inv, string(a))
		}
		items = append(items, catalog.Item{Name: s.Name, Description: s.Description, Tier: s.Tier, InvokableBy: inv,
			Source: filepath.Dir(v.Path), Category: s.Category, Version: s.Version, Location: v.Path})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(items) == 0 {
		t.Fatal("the corpus lists no skills")
	}
	return items
}

// TestBudgetCorpusReference compares Budget with the reference
// implementation on the whole public corpus, in both formats, at fixed
// budgets and at each boundary: the full length ±1, the length with every
// description at the floor ±1, and one skill at the floor ±1. The
// reference is quadratic: under -short or the race detector (which adds
// nothing to a pure function but slows it tenfold) the test takes the
// corpus's first 150 skills.
func TestBudgetCorpusReference(t *testing.T) {
	items := corpusItems(t)
	if testing.Short() || raceEnabled {
		items = items[:min(len(items), 150)]
	}
	for _, f := range formats {
		full := utf8.RuneCountInString(catalog.Render(items, f))
		floor := utf8.RuneCountInString(catalog.Render(capped(items, 60), f))
		one := utf8.RuneCountInString(catalog.Render(capped(items[:1], 60), f))
		budgets := []int{0, -1, 50, 500, 2000, 8000, 30000, full - 1, full, full + 1, floor - 1, floor, floor + 1, one - 1, one, one + 1}
		for _, b := range budgets {
			t.Run(fmt.Sprintf("%s/%d", f, b), func(t *testing.T) {
				t.Parallel()
				sameAsReference(t, items, f, b)
			})
		}
	}
}

func capped(items []catalog.Item, limit int) []catalog.Item {
	out := append([]catalog.Item(nil), items...)
	for i := range out {
		out[i].Description = refShorten(out[i].Description, limit)
	}
	return out
}

// pieces are what the random items are made of: characters each renderer
// escapes (&<>"' for both; control characters, U+2028/U+2029 and invalid
// UTF-8 for JSON), multi-byte code points, and the punctuation shorten trims
// before its ellipsis.
var pieces = []string{
	"a", "word ", "skill", " ", ",", ";", ":", ".", "-", " .", "&", "<", ">", `"`, "'", "&amp;",
	"é", "日本語", "🙂", "…", "\u2028", "\u2029", "\n", "\t", "\x01", "\\", "\xff", "\xe2\x80", "\u00a0",
}

func randText(r *rand.Rand, maxPieces int) string {
	var b strings.Builder
	for n := r.IntN(maxPieces + 1); n > 0; n-- {
		p := pieces[r.IntN(len(pieces))]
		if r.IntN(3) > 0 {
			p = "word "
		}
		b.WriteString(p)
	}
	return b.String()
}

func randItems(r *rand.Rand, n int) []catalog.Item {
	items := make([]catalog.Item, n)
	for i := range items {
		it := &items[i]
		it.Name = randText(r, 4)
		switch r.IntN(4) {
		case 0: // shorter than the floor of 60
			it.Description = randText(r, 12)
		default:
			it.Description = randText(r, 150)
		}
		it.Location = "cat/" + randText(r, 3)
		it.Tier = r.IntN(4)
		it.InvokableBy = []string{}
		for range r.IntN(3) {
			it.InvokableBy = append(it.InvokableBy, fmt.Sprintf("T%d", r.IntN(5)))
		}
		it.Source = randText(r, 2)
		if r.IntN(2) == 0 {
			it.Category, it.Version = randText(r, 2), "1.0.0"
		}
		// The XML names a trust above imported: both kinds, and none.
		it.Trust = []string{"", "imported", "first_party"}[r.IntN(3)]
	}
	return items
}

// TestBudgetRandomReference compares Budget with the reference
// implementation on random item sets whose names and descriptions need
// escaping, hold multi-byte and invalid UTF-8, end in trimmed punctuation
// at the cut, or are shorter than the floor; budgets range from below one
// skill to above the whole catalog.
func TestBudgetRandomReference(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2026))
	for _, f := range formats {
		for c := range 400 {
			items := randItems(r, r.IntN(25))
			full := utf8.RuneCountInString(catalog.Render(items, f))
			b := r.IntN(full+20) - 5
			if c%10 == 0 {
				b = full + r.IntN(3) - 1
			}
			sameAsReference(t, items, f, b)
		}
	}
}

// TestBudgetReport pins the report of a small catalog exactly.
func TestBudgetReport(t *testing.T) {
	items := []catalog.Item{
		{Name: "a", Description: strings.Repeat("alpha ", 30), Location: "x/a"},
		{Name: "b", Description: "short", Location: "x/b"},
		{Name: "c", Description: strings.Repeat("gamma, ", 30), Location: "x/c"},
		{Name: "d", Description: strings.Repeat("delta ", 30), Location: "x/d"},
	}
	tests := []struct {
		budget int
		want   catalog.Report
	}{
		{600, catalog.Report{Budget: 600, Length: 597, Shortened: []string{"a", "c", "d"}, Omitted: []string{}}},
		{400, catalog.Report{Budget: 400, Length: 399, Shortened: []string{"a"}, Omitted: []string{"c", "d"}}},
		{200, catalog.Report{Budget: 200, Length: 200, Shortened: []string{"a"}, Omitted: []string{"b", "c", "d"}}},
		{100, catalog.Report{Budget: 100, Length: 189, Shortened: []string{"a"}, Omitted: []string{"b", "c", "d"}, OverBudget: true}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.budget), func(t *testing.T) {
			out, rep := catalog.Budget(items, catalog.FormatXML, tc.budget)
			if !reflect.DeepEqual(rep, tc.want) {
				t.Errorf("report %+v, want %+v", rep, tc.want)
			}
			if n := utf8.RuneCountInString(out); n != rep.Length {
				t.Errorf("output is %d characters, report says %d", n, rep.Length)
			}
		})
	}
}

// FuzzBudget holds Budget to the reference on items cut from arbitrary
// text: fields separated by '|', three to an item (name, description,
// location).
func FuzzBudget(f *testing.F) {
	f.Add("a|"+strings.Repeat("word ", 40)+"|x/a|b|short|x/b", 120, false)
	f.Add("a&b|say \"hi\" <now> it's "+strings.Repeat("é日🙂 ", 30)+"|x|c|"+strings.Repeat("x, ", 40)+"|y", 150, true)
	f.Add("\xff|\u2028\u2029\n\t\x01"+strings.Repeat("\\&", 50)+"|l|n|d|l", 90, true)
	f.Add("", 10, false)
	f.Add("only-a-name", 0, true)
	f.Fuzz(func(t *testing.T, data string, budget int, asJSON bool) {
		fields := strings.Split(data, "|")
		var items []catalog.Item
		for i := 0; i+2 < len(fields) && len(items) < 64; i += 3 {
			items = append(items, catalog.Item{Name: fields[i], Description: fields[i+1], Location: fields[i+2], InvokableBy: []string{}})
		}
		fm := catalog.FormatXML
		if asJSON {
			fm = catalog.FormatJSON
		}
		sameAsReference(t, items, fm, budget%100000)
	})
}

// benchItems makes n skills shaped like bench/gen's: descriptions of 80–600
// characters of plain words.
func benchItems(n int) []catalog.Item {
	r := rand.New(rand.NewPCG(1, 1))
	words := strings.Fields("process data files with the tool when a user asks for reports charts tables or summaries, and check each step")
	items := make([]catalog.Item, n)
	for i := range items {
		var b strings.Builder
		for want := 80 + r.IntN(521); b.Len() < want; {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		name := fmt.Sprintf("skill-%06d", i)
		items[i] = catalog.Item{Name: name, Description: strings.TrimSpace(b.String()), Tier: 2, InvokableBy: []string{},
			Source: "/skills", Category: "data-analysis", Location: "data-analysis/" + name}
	}
	return items
}

// BenchmarkBudget is `prompt --budget 8000` (the discovery fragment's
// default budget) over n skills, which all have to be measured and most
// omitted. bench/budget.sh compares it with BenchmarkBudgetReference.
func BenchmarkBudget(b *testing.B) {
	for _, f := range formats {
		for _, n := range []int{1000, 10000, 100000} {
			items := benchItems(n)
			b.Run(fmt.Sprintf("format=%s/items=%d", f, n), func(b *testing.B) {
				for b.Loop() {
					catalog.Budget(items, f, 8000)
				}
			})
		}
	}
}

// BenchmarkBudgetReference is BenchmarkBudget for the reference
// implementation, at the sizes where it finishes in reasonable time
// (SKILLGATE_BENCH_REF_MAX, default 2000 items).
func BenchmarkBudgetReference(b *testing.B) {
	limit := 2000
	if v := os.Getenv("SKILLGATE_BENCH_REF_MAX"); v != "" {
		fmt.Sscan(v, &limit)
	}
	for _, f := range formats {
		for _, n := range []int{1000, 10000, 100000} {
			if n > limit {
				continue
			}
			items := benchItems(n)
			b.Run(fmt.Sprintf("format=%s/items=%d", f, n), func(b *testing.B) {
				for b.Loop() {
					referenceBudget(items, f, 8000)
				}
			})
		}
	}
}
