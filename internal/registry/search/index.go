package search

import (
	"math"
	"slices"
	"strings"
	"sync"
)

// Field is one of the parts of a skill that is searched.
type Field int

// The fields, in the order of [Params] weights.
const (
	FieldName Field = iota
	FieldCategory
	FieldDescription
	numFields
)

// Params are BM25F's parameters: K1 the term-frequency saturation, and per
// field its weight and its length normalisation B (0 none, 1 full).
type Params struct {
	K1     float64
	Weight [numFields]float64
	B      [numFields]float64
}

// DefaultParams weigh a term in the name three times one in the
// description, and one in the category twice (measured on the labelled
// queries of testdata/queries.json: bench/search.sh).
var DefaultParams = Params{
	K1:     1.2,
	Weight: [numFields]float64{FieldName: 3, FieldCategory: 2, FieldDescription: 1},
	B:      [numFields]float64{FieldName: 0.5, FieldCategory: 0.3, FieldDescription: 0.75},
}

// Doc is what is searched of one skill.
type Doc struct {
	Name, Category, Description string
}

// Ranker scores documents for a query: BM25F ([Index]) today, embeddings
// or a blend later. Score adds each matching document's score to acc.
// Implementations are safe for concurrent use.
type Ranker interface {
	Score(q *Query, acc *Accumulator)
}

// posting is one document holding a term, with the term's saturated
// BM25F weight in it (tf/(K1+tf), tf the field-weighted, length-normalised
// frequency): a query adds idf × w.
type posting struct {
	doc int32
	w   float32
}

// Index is a BM25F index of documents numbered 0…Len()-1 in the order
// they were added. It is immutable once built and safe for concurrent use.
type Index struct {
	n        int
	terms    map[string]int32
	sorted   []string // the terms, sorted: for prefixes
	postings [][]posting
	idf      []float32
}

// Prefix expansion: a query term the index does not hold, of at least
// minPrefix bytes, is read as the start of a word ("kube" for
// "kubernetes", a name typed halfway), scored over at most maxExpansions
// of the terms it begins, each at prefixWeight.
const (
	minPrefix     = 3
	maxExpansions = 16
	prefixWeight  = 0.5
)

// Builder builds an [Index]. Add documents in order, then call Build once.
type Builder struct {
	p Params
	// ids holds every document's term ids, field after field; ends[d][f]
	// is where document d's field f ends in it.
	ids    []int32
	ends   [][numFields]int32
	terms  map[string]int32
	df     []int32
	totals [numFields]float64
	buf    []string
	last   []int32 // per term, the last document that counted it in df (+1)
}

// NewBuilder starts an index with p (DefaultParams when p is the zero
// Params).
func NewBuilder(p Params) *Builder {
	if p.K1 == 0 {
		p = DefaultParams
	}
	return &Builder{p: p, terms: map[string]int32{}}
}

// Add adds the next document and returns its number.
func (b *Builder) Add(d Doc) int32 {
	doc := int32(len(b.ends))
	var ends [numFields]int32
	for f, text := range [numFields]string{d.Name, d.Category, d.Description} {
		b.buf = Terms(b.buf[:0], text)
		for _, t := range b.buf {
			id, ok := b.terms[t]
			if !ok {
				id = int32(len(b.df))
				b.terms[strings.Clone(t)] = id
				b.df = append(b.df, 0)
				b.last = append(b.last, 0)
			}
			b.ids = append(b.ids, id)
			if b.last[id] != doc+1 {
				b.last[id] = doc + 1
				b.df[id]++
			}
		}
		ends[f] = int32(len(b.ids))
		b.totals[f] += float64(len(b.buf))
	}
	b.ends = append(b.ends, ends)
	return doc
}

// Build returns the index of the documents added. The builder must not be
// used after.
func (b *Builder) Build() *Index {
	n := len(b.ends)
	ix := &Index{n: n, terms: b.terms, postings: make([][]posting, len(b.df)), idf: make([]float32, len(b.df)), sorted: make([]string, 0, len(b.terms))}
	for t := range b.terms {
		ix.sorted = append(ix.sorted, t)
	}
	slices.Sort(ix.sorted)
	// One allocation for every posting list.
	total := 0
	for _, df := range b.df {
		total += int(df)
	}
	slab := make([]posting, total)
	for id, df := range b.df {
		// BM25's idf, kept positive (Lucene's form).
		ix.idf[id] = float32(math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5)))
		ix.postings[id], slab = slab[:0:df], slab[df:]
	}
	var avg [numFields]float64
	for f := range avg {
		avg[f] = max(b.totals[f]/float64(max(n, 1)), 1)
	}
	tf := make([]float64, len(b.df))
	var touched []int32
	start := int32(0)
	for doc, ends := range b.ends {
		for f, end := range ends {
			ids := b.ids[start:end]
			start = end
			norm := 1 - b.p.B[f] + b.p.B[f]*float64(len(ids))/avg[f]
			for _, id := range ids {
				if tf[id] == 0 {
					touched = append(touched, id)
				}
				tf[id] += b.p.Weight[f] / norm
			}
		}
		for _, id := range touched {
			t := tf[id]
			ix.postings[id] = append(ix.postings[id], posting{doc: int32(doc), w: float32(t / (b.p.K1 + t))})
			tf[id] = 0
		}
		touched = touched[:0]
	}
	b.ids, b.ends, b.last = nil, nil, nil
	return ix
}

// Len returns how many documents the index holds.
func (ix *Index) Len() int { return ix.n }

// Terms returns how many distinct terms the index holds.
func (ix *Index) Terms() int { return len(ix.postings) }

// Score adds idf × weight of every query term to each document holding it;
// a term the index does not hold counts as a prefix (see minPrefix).
func (ix *Index) Score(q *Query, acc *Accumulator) {
	for _, t := range q.terms {
		if id, ok := ix.terms[t]; ok {
			ix.add(id, 1, acc)
			continue
		}
		if len(t) < minPrefix {
			continue
		}
		i, _ := slices.BinarySearch(ix.sorted, t)
		for n := 0; n < maxExpansions && i < len(ix.sorted) && strings.HasPrefix(ix.sorted[i], t); n, i = n+1, i+1 {
			ix.add(ix.terms[ix.sorted[i]], prefixWeight, acc)
		}
	}
}

// add scores term id's postings at weight × idf.
func (ix *Index) add(id int32, weight float32, acc *Accumulator) {
	idf := weight * ix.idf[id]
	for _, p := range ix.postings[id] {
		acc.add(p.doc, idf*p.w)
	}
}

// Query is a parsed query: its terms (deduplicated, at most MaxQueryTerms)
// and its text lower-cased and trimmed, which an exact name is compared
// with.
type Query struct {
	text  string
	terms []string
}

// ParseQuery parses a query.
func ParseQuery(s string) *Query {
	q := &Query{text: strings.ToLower(strings.TrimSpace(s))}
	for _, t := range Terms(nil, s) {
		if !slices.Contains(q.terms, t) {
			q.terms = append(q.terms, t)
		}
		if len(q.terms) == MaxQueryTerms {
			break
		}
	}
	return q
}

// Empty reports whether the query has no text.
func (q *Query) Empty() bool { return q.text == "" }

// Text returns the query lower-cased and trimmed.
func (q *Query) Text() string { return q.text }

// ExactName reports whether name or key ("category/name") is the query,
// ignoring case: such a skill is ranked first.
func (q *Query) ExactName(name, key string) bool {
	return q.text != "" && (strings.EqualFold(name, q.text) || strings.EqualFold(key, q.text))
}

// Accumulator collects documents' scores for one query. Get one with
// NewAccumulator and give it back with Release.
type Accumulator struct {
	scores  []float32
	touched []int32
	hits    []Hit
}

var accumulators = sync.Pool{New: func() any { return &Accumulator{} }}

// NewAccumulator returns an accumulator for n documents, all at 0.
func NewAccumulator(n int) *Accumulator {
	a := accumulators.Get().(*Accumulator)
	if cap(a.scores) < n {
		a.scores = make([]float32, n)
	}
	a.scores = a.scores[:n]
	return a
}

// Release zeroes the scores touched and gives the accumulator back; it
// must not be used after.
func (a *Accumulator) Release() {
	for _, d := range a.touched {
		a.scores[d] = 0
	}
	a.touched = a.touched[:0]
	if cap(a.hits) > maxKeptHits {
		a.hits = nil
	}
	accumulators.Put(a)
}

func (a *Accumulator) add(doc int32, s float32) {
	if a.scores[doc] == 0 {
		a.touched = append(a.touched, doc)
	}
	a.scores[doc] += s
}

// Add adds s to doc's score (s > 0): for a ranker outside this package, or
// a bonus the caller gives.
func (a *Accumulator) Add(doc int32, s float32) {
	if s > 0 {
		a.add(doc, s)
	}
}

// maxKeptHits bounds the hit buffer an accumulator keeps between queries.
const maxKeptHits = 1 << 20

// Hits returns an empty buffer of hits to rank into, reused between
// queries; give it back with KeepHits.
func (a *Accumulator) Hits() []Hit { return a.hits[:0] }

// KeepHits keeps h (grown from Hits) for the next query.
func (a *Accumulator) KeepHits(h []Hit) { a.hits = h[:0] }

// Touched returns the documents with a score, in the order they got one.
// The slice is the accumulator's: read it before Release.
func (a *Accumulator) Touched() []int32 { return a.touched }

// Score returns doc's score so far.
func (a *Accumulator) Score(doc int32) float32 { return a.scores[doc] }

// Hit is one ranked document.
type Hit struct {
	Doc   int32
	Score float32
	// Exact says the document's name is the query.
	Exact bool
}

// Compare orders hits: exact names first, then higher scores, then lower
// document numbers (the caller's order, identity in the registry).
func Compare(a, b Hit) int {
	switch {
	case a.Exact != b.Exact:
		if a.Exact {
			return -1
		}
		return 1
	case a.Score != b.Score:
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return int(a.Doc) - int(b.Doc)
}

// Top orders hits by [Compare] so that hits[:k] are the first k, in
// order; the rest are left in any order. It costs about len(hits) ×
// log(k) rather than a full sort when k is small.
func Top(hits []Hit, k int) {
	if k >= len(hits)/4 {
		slices.SortFunc(hits, Compare)
		return
	}
	if k <= 0 {
		return
	}
	// A max-heap (by Compare) of the best k seen, in hits[:k].
	h := hits[:k]
	for i := k/2 - 1; i >= 0; i-- {
		down(h, i)
	}
	for i := k; i < len(hits); i++ {
		if Compare(hits[i], h[0]) < 0 {
			h[0], hits[i] = hits[i], h[0]
			down(h, 0)
		}
	}
	slices.SortFunc(h, Compare)
}

// down restores the heap property (the worst hit at the root) below i.
func down(h []Hit, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		w := l
		if r := l + 1; r < len(h) && Compare(h[r], h[l]) > 0 {
			w = r
		}
		if Compare(h[w], h[i]) <= 0 {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}
