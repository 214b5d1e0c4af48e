package registry

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// ErrBadPage means a page request's arguments are out of range (a limit, a
// tier, a cursor that no page returned); the message names the argument
// and the fix.
var ErrBadPage = errors.New("bad page request")

// Paging bounds.
const (
	// DefaultPageLimit is a page's size when the request gives none.
	DefaultPageLimit = 100
	// MaxPageLimit is the largest page a request may ask for.
	MaxPageLimit = 1000
	// maxFilterBytes bounds the query and category of a page request.
	maxFilterBytes = 512
	// maxCursorBytes bounds a cursor (an encoded identity).
	maxCursorBytes = 2048
)

// Brief is what a catalog snapshot keeps of a skill: what agents see of it,
// and what loading it needs. Frontmatter, files and diagnostics stay in the
// store. A Brief is shared by every session; never modify one, nor its
// InvokableBy (shared between skills).
type Brief struct {
	Key         string   `json:"key"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Category    string   `json:"category,omitempty"`
	Version     string   `json:"version,omitempty"`
	Tier        int      `json:"tier"`
	InvokableBy []string `json:"invokable_by"`
	// Scope is that of the root the skill came from; Dir and Digest name
	// the version in effect.
	Scope  string `json:"scope"`
	Dir    string `json:"dir"`
	Digest string `json:"digest,omitempty"`
}

// Snapshot is the catalog of the registry at one generation: the valid,
// enabled skills that win precedence, with a pool per agent tier (the
// skills invokable by it, by identity) and each pool's category index. It
// is built once per registry change ([Registry.Snapshot]), shared by every
// session and immutable: its methods are safe for concurrent use, and cost
// what they return (a page, a lookup), not the registry's size, except
// where a method says otherwise.
type Snapshot struct {
	gen         int64
	fingerprint string
	entries     []Brief // by identity
	ascii       []bool  // per entry: its name and description are ASCII (see matcher)
	tiers       []uint8 // per entry: bit i set when AllAgentTiers[i] may invoke it
	byName      map[string][]int32
	pools       [8]pool // by index in skill.AllAgentTiers
}

// pool is the skills one agent tier may use: indexes into entries, by
// identity, and the same per category.
type pool struct {
	all        []int32
	byCategory map[string][]int32
}

// tierIndex returns the index of t in skill.AllAgentTiers, or -1.
func tierIndex(t skill.AgentTier) int { return slices.Index(skill.AllAgentTiers, t) }

// snapshotBuilder builds a snapshot from the store's current versions,
// taken one at a time in the store's order (by key): precedence is
// decided per key as each key's versions end, so the rows are never all
// held at once.
type snapshotBuilder struct {
	s      *Snapshot
	h      hash.Hash
	buf    []byte
	shared map[string][]string // invokable_by lists, shared
	words  map[string]string   // categories, scopes and version labels, shared
	group  []store.Version     // the versions of the current key
}

func newSnapshotBuilder(gen int64) *snapshotBuilder {
	return &snapshotBuilder{s: &Snapshot{gen: gen, byName: map[string][]int32{}}, h: sha256.New(), shared: map[string][]string{}, words: map[string]string{}}
}

// add takes the next version in the store's order.
func (b *snapshotBuilder) add(v store.Version) {
	if len(b.group) > 0 && b.group[0].Key != v.Key {
		b.flush()
	}
	b.group = append(b.group, v)
}

// flush decides the precedence among the current key's versions and keeps
// the winner.
func (b *snapshotBuilder) flush() {
	winners, _ := resolveIndex(b.group)
	for _, i := range winners {
		b.take(&b.group[i])
	}
	clear(b.group)
	b.group = b.group[:0]
}

// take keeps a version that won precedence.
func (b *snapshotBuilder) take(v *store.Version) {
	if !v.Valid {
		return
	}
	// What agents can see of the registry, disabled skills included (a
	// skill enabled again is a change): the fingerprint's input, each
	// field length-prefixed.
	b.buf = b.buf[:0]
	for _, f := range []string{v.Key, v.Dir, v.Digest, v.Name, v.Description, v.Category, v.Version, strconv.Itoa(v.Tier), strconv.FormatBool(v.Enabled)} {
		b.buf = strconv.AppendInt(b.buf, int64(len(f)), 10)
		b.buf = append(b.buf, ':')
		b.buf = append(b.buf, f...)
	}
	for _, t := range v.InvokableBy {
		b.buf = append(b.buf, ',')
		b.buf = append(b.buf, t...)
	}
	b.buf = append(b.buf, '\n')
	b.h.Write(b.buf)
	if !v.Enabled {
		return
	}
	j := strings.Join(v.InvokableBy, "\x00")
	inv, ok := b.shared[j]
	if !ok {
		inv = slices.Clip(append([]string{}, v.InvokableBy...))
		b.shared[j] = inv
	}
	// A name is most often the end of its identity (category/name), and
	// categories, scopes and version labels repeat: one copy of each.
	name := v.Name
	if strings.HasSuffix(v.Key, name) {
		name = v.Key[len(v.Key)-len(name):]
	}
	b.s.entries = append(b.s.entries, Brief{Key: v.Key, Name: name, Description: v.Description, Category: b.word(v.Category),
		Version: b.word(v.Version), Tier: v.Tier, InvokableBy: inv, Scope: b.word(v.Scope), Dir: v.Dir, Digest: v.Digest})
}

// word returns the snapshot's copy of a short string that many skills
// share.
func (b *snapshotBuilder) word(w string) string {
	if c, ok := b.words[w]; ok {
		return c
	}
	b.words[w] = w
	return w
}

// done indexes the kept skills and returns the snapshot.
func (b *snapshotBuilder) done() *Snapshot {
	b.flush()
	s := b.s
	s.fingerprint = hex.EncodeToString(b.h.Sum(nil))
	if !slices.IsSortedFunc(s.entries, func(a, b Brief) int { return strings.Compare(a.Key, b.Key) }) {
		slices.SortStableFunc(s.entries, func(a, b Brief) int { return strings.Compare(a.Key, b.Key) })
	}
	s.entries = slices.Clip(s.entries)
	s.ascii = make([]bool, len(s.entries))
	s.tiers = make([]uint8, len(s.entries))
	for i := range s.entries {
		e := &s.entries[i]
		s.ascii[i] = isASCII(e.Name) && isASCII(e.Description)
		s.byName[e.Name] = append(s.byName[e.Name], int32(i))
		for _, t := range e.InvokableBy {
			if k := tierIndex(skill.AgentTier(t)); k >= 0 {
				s.tiers[i] |= 1 << k
			}
		}
	}
	for k := range skill.AllAgentTiers {
		p := &s.pools[k]
		p.byCategory = map[string][]int32{}
		n := 0
		for i := range s.entries {
			if s.tiers[i]&(1<<k) != 0 {
				n++
			}
		}
		p.all = make([]int32, 0, n)
		for i := range s.entries {
			if s.tiers[i]&(1<<k) == 0 {
				continue
			}
			p.all = append(p.all, int32(i))
			c := s.entries[i].Category
			p.byCategory[c] = append(p.byCategory[c], int32(i))
		}
	}
	return s
}

// buildSnapshot makes the snapshot of generation gen from the store's
// current versions (in the store's order).
func buildSnapshot(gen int64, all []store.Version) *Snapshot {
	b := newSnapshotBuilder(gen)
	for _, v := range all {
		b.add(v)
	}
	return b.done()
}

// Generation returns the registry generation the snapshot was built at
// (store.Store.RegistryGeneration).
func (s *Snapshot) Generation() int64 { return s.gen }

// Fingerprint summarises what agents can see of the registry (identity,
// directory, digest, state, tiers and catalog fields of every valid skill
// that wins precedence, enabled or not), so that a change of generation
// that changed nothing visible (a rescan that only touched a file's time)
// can be told apart.
func (s *Snapshot) Fingerprint() string { return s.fingerprint }

// Len returns how many skills an agent of tier may use.
func (s *Snapshot) Len(tier skill.AgentTier) int { return len(s.pool(tier).all) }

func (s *Snapshot) pool(tier skill.AgentTier) *pool {
	k := tierIndex(tier)
	if k < 0 {
		return &pool{}
	}
	return &s.pools[k]
}

// Lookup returns the skill with identity key if an agent of tier may use
// it. It costs a binary search.
func (s *Snapshot) Lookup(tier skill.AgentTier, key string) (Brief, bool) {
	p := s.pool(tier).all
	i := sort.Search(len(p), func(i int) bool { return s.entries[p[i]].Key >= key })
	if i < len(p) && s.entries[p[i]].Key == key {
		return s.entries[p[i]], true
	}
	return Brief{}, false
}

// Named returns the skills an agent of tier may use whose bare name is
// name, by identity.
func (s *Snapshot) Named(tier skill.AgentTier, name string) []Brief {
	k := tierIndex(tier)
	if k < 0 {
		return nil
	}
	var out []Brief
	for _, i := range s.byName[name] {
		if s.tiers[i]&(1<<k) != 0 {
			out = append(out, s.entries[i])
		}
	}
	return out
}

// Skills calls yield with the skills an agent of tier may use, optionally
// only those of category, by identity, until it returns false. It costs
// what it yields.
func (s *Snapshot) Skills(tier skill.AgentTier, category string, yield func(Brief) bool) {
	p := s.pool(tier)
	idx := p.all
	if category != "" {
		idx = p.byCategory[category]
	}
	for _, i := range idx {
		if !yield(s.entries[i]) {
			return
		}
	}
}

// PageQuery asks for one page of the skills an agent may use.
type PageQuery struct {
	// AgentTier is the agent's tier: only skills invokable by it.
	AgentTier skill.AgentTier
	// Category keeps skills of that category; Tier of that skill tier
	// (1–3, 0 for all); Query those whose name or description contains it,
	// ignoring case.
	Category string
	Tier     int
	Query    string
	// Cursor continues after the page that returned it; "" starts.
	Cursor string
	// Limit is the page's size, 1–MaxPageLimit; 0 means DefaultPageLimit.
	Limit int
}

// Page is one page of skills.
type Page struct {
	// Skills are the page's skills, by identity.
	Skills []Brief
	// Total is how many skills match the filters, on every page.
	Total int
	// NextCursor continues after this page; "" when it is the last.
	NextCursor string
}

// Page returns one page of the skills matching q, by identity. The cursor
// encodes the last identity returned, so paging stays correct when the
// registry changes between pages: a skill is neither repeated nor skipped
// unless it was itself added or removed. Without Query (and with Tier only
// alongside Category) a page costs its size plus a binary search; Query
// and Tier filters scan the tier's pool (or category) to count the total.
//
// Errors: ErrBadPage (wrapped, with the argument named) for a limit, tier,
// query, category or cursor out of range.
func (s *Snapshot) Page(q PageQuery) (Page, error) {
	if err := q.validate(); err != nil {
		return Page{}, err
	}
	after := ""
	if q.Cursor != "" {
		var err error
		if after, err = decodeCursor(q.Cursor); err != nil {
			return Page{}, err
		}
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultPageLimit
	}
	p := s.pool(q.AgentTier)
	idx := p.all
	if q.Category != "" {
		idx = p.byCategory[q.Category]
	}
	start := 0
	if q.Cursor != "" {
		start = sort.Search(len(idx), func(i int) bool { return s.entries[idx[i]].Key > after })
	}
	out := Page{Skills: []Brief{}}
	if q.Query == "" && q.Tier == 0 {
		out.Total = len(idx)
		end := min(start+limit, len(idx))
		for _, i := range idx[start:end] {
			out.Skills = append(out.Skills, s.entries[i])
		}
		if end < len(idx) {
			out.NextCursor = encodeCursor(s.entries[idx[end-1]].Key)
		}
		return out, nil
	}
	m := newMatcher(q.Query)
	more := false
	for n, i := range idx {
		if q.Tier != 0 && s.entries[i].Tier != q.Tier {
			continue
		}
		if e := &s.entries[i]; !m.match(e.Name, e.Description, s.ascii[i]) {
			continue
		}
		out.Total++
		switch {
		case n < start:
		case len(out.Skills) < limit:
			out.Skills = append(out.Skills, s.entries[i])
		default:
			more = true
		}
	}
	if more {
		out.NextCursor = encodeCursor(out.Skills[len(out.Skills)-1].Key)
	}
	return out, nil
}

func (q PageQuery) validate() error {
	switch {
	case q.Limit < 0 || q.Limit > MaxPageLimit:
		return fmt.Errorf("%w: limit must be between 1 and %d (default %d), got %d", ErrBadPage, MaxPageLimit, DefaultPageLimit, q.Limit)
	case q.Tier < 0 || q.Tier > 3:
		return fmt.Errorf("%w: tier must be 1, 2 or 3 (or omitted for all), got %d", ErrBadPage, q.Tier)
	case len(q.Query) > maxFilterBytes || !utf8.ValidString(q.Query):
		return fmt.Errorf("%w: query must be valid UTF-8 of at most %d bytes", ErrBadPage, maxFilterBytes)
	case len(q.Category) > maxFilterBytes || !utf8.ValidString(q.Category):
		return fmt.Errorf("%w: category must be valid UTF-8 of at most %d bytes", ErrBadPage, maxFilterBytes)
	}
	return nil
}

// cursorPrefix versions the cursor format.
const cursorPrefix = "k1:"

func encodeCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + key))
}

func decodeCursor(c string) (string, error) {
	bad := fmt.Errorf("%w: cursor is not one that skill_list returned; omit it to start from the first page", ErrBadPage)
	if len(c) > maxCursorBytes {
		return "", bad
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) || !utf8.Valid(b) {
		return "", bad
	}
	return string(b[len(cursorPrefix):]), nil
}

// Snapshot returns the catalog at the registry's current generation. It
// reads the generation (one row) and, when it moved since the last
// snapshot (a scan that changed something, a skill enabled or disabled,
// here or by another process on the same store), builds the new snapshot
// from the store once, however many callers ask at the same time. The
// snapshot holds brief entries only (no frontmatter, files or
// diagnostics).
func (r *Registry) Snapshot(ctx context.Context) (*Snapshot, error) {
	gen, err := r.store.RegistryGeneration(ctx)
	if err != nil {
		return nil, err
	}
	if s := r.snap.Load(); s != nil && s.gen == gen {
		return s, nil
	}
	r.snapMu.Lock()
	defer r.snapMu.Unlock()
	if s := r.snap.Load(); s != nil && s.gen >= gen {
		return s, nil
	}
	// The generation is read again under the lock, before the versions:
	// a change committed in between makes the snapshot look older than it
	// is, and only costs a rebuild.
	if gen, err = r.store.RegistryGeneration(ctx); err != nil {
		return nil, err
	}
	var s *Snapshot
	if vs, ok := r.store.(store.VersionStreamer); ok {
		b := newSnapshotBuilder(gen)
		if err := vs.EachVersion(ctx, store.Filter{Brief: true}, func(v store.Version) error { b.add(v); return nil }); err != nil {
			return nil, err
		}
		s = b.done()
	} else {
		all, err := r.store.Versions(ctx, store.Filter{Brief: true})
		if err != nil {
			return nil, err
		}
		s = buildSnapshot(gen, all)
	}
	r.snap.Store(s)
	r.log.DebugContext(ctx, "catalog snapshot", "generation", gen, "skills", len(s.entries))
	return s, nil
}
