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

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/search"
	"github.com/skillgate/skillgate/internal/storage/store"
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
	// Scope is that of the root the skill came from, Trust that root's
	// trust; Dir and Digest name the version in effect.
	Scope  string `json:"scope"`
	Trust  string `json:"trust"`
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
	// The skills hold no pointers (see arena.go): entries name their
	// strings in text, and invokable_by lists by index in invokable.
	text      arena
	entries   []entry    // by identity
	invokable [][]string // the distinct invokable_by lists
	byName    []int32    // indexes into entries, by name, then identity
	pools     [8]pool    // by index in skill.AllAgentTiers
	// tenant is the tenant whose library the snapshot includes ("" for
	// the shared catalog, which includes none); tenants, in the shared
	// catalog only, are the tenants that have a library.
	tenant  string
	tenants map[string]bool
	// index ranks the entries (document i is entries[i]) for a page's
	// query; built with the snapshot. filters holds what a ranked page
	// filters each scored entry on, packed apart from the entries so that
	// checking many of them stays in cache; categories numbers the
	// categories for it.
	index      *search.Index
	filters    []rankFilter
	categories map[string]int32
}

// entry is a Brief in the snapshot's arena.
type entry struct {
	key, name, description, category, version, scope, trust, dir, digest span
	tier                                                                 int8
	ascii                                                                bool   // name and description are ASCII (see matcher)
	tiers                                                                uint8  // bit i set when AllAgentTiers[i] may invoke it
	invokable                                                            uint32 // index in Snapshot.invokable
}

// brief returns entry i as a Brief: its strings are slices of the arena
// (no copy), its InvokableBy shared.
func (s *Snapshot) brief(i int32) Brief {
	e := &s.entries[i]
	return Brief{Key: s.text.str(e.key), Name: s.text.str(e.name), Description: s.text.str(e.description),
		Category: s.text.str(e.category), Version: s.text.str(e.version), Tier: int(e.tier), InvokableBy: s.invokable[e.invokable],
		Scope: s.text.str(e.scope), Trust: s.text.str(e.trust), Dir: s.text.str(e.dir), Digest: s.text.str(e.digest)}
}

// key returns entry i's identity.
func (s *Snapshot) key(i int32) string { return s.text.str(s.entries[i].key) }

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
	shared map[string]uint32 // invokable_by lists, by index in Snapshot.invokable
	words  map[string]span   // categories, scopes and version labels, shared
	group  []store.Version   // the versions of the current key
}

// newSnapshotBuilder starts the snapshot of generation gen for tenant: ""
// for the shared catalog (no tenant library's skill), else the shared
// catalog with that tenant's library.
func newSnapshotBuilder(gen int64, tenant string) *snapshotBuilder {
	s := &Snapshot{gen: gen, tenant: tenant}
	if tenant == "" {
		s.tenants = map[string]bool{}
	}
	return &snapshotBuilder{s: s, h: sha256.New(), shared: map[string]uint32{}, words: map[string]span{}}
}

// add takes the next version in the store's order. A tenant library's
// version is left out unless the snapshot is that tenant's; the shared
// catalog's fingerprint still covers it, so that a change in any library
// is noticed (and each session's view cut again).
func (b *snapshotBuilder) add(v store.Version) {
	if t := discover.TenantOf(v.Scope, v.Root); t != "" && t != b.s.tenant {
		if b.s.tenant == "" {
			b.s.tenants[t] = true
			if v.Valid {
				b.hash(&v)
			}
		}
		return
	}
	if len(b.group) > 0 && b.group[0].Key != v.Key {
		b.flush()
	}
	b.group = append(b.group, v)
}

// flush decides the precedence among the current key's versions and keeps
// the winner.
func (b *snapshotBuilder) flush() {
	// The group holds one tenant's library at most, which competes with
	// the shared skills: by identity alone.
	winners, _ := resolveBy(b.group, func(v *store.Version) (string, string, string) { return v.Key, v.Scope, v.Dir })
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
	b.hash(v)
	if !v.Enabled {
		return
	}
	j := strings.Join(v.InvokableBy, "\x00")
	inv, ok := b.shared[j]
	if !ok {
		inv = uint32(len(b.s.invokable))
		b.s.invokable = append(b.s.invokable, slices.Clip(append([]string{}, v.InvokableBy...)))
		b.shared[j] = inv
	}
	t := &b.s.text
	e := entry{key: t.add(v.Key), description: t.add(v.Description), dir: t.add(v.Dir), digest: t.add(v.Digest),
		category: b.word(v.Category), version: b.word(v.Version), scope: b.word(v.Scope), trust: b.word(v.Trust),
		tier: int8(v.Tier), ascii: isASCII(v.Name) && isASCII(v.Description), invokable: inv}
	// A name is most often the end of its identity (category/name).
	if strings.HasSuffix(v.Key, v.Name) {
		e.name = span{off: e.key.off + uint32(len(v.Key)-len(v.Name)), n: uint32(len(v.Name))}
	} else {
		e.name = t.add(v.Name)
	}
	for _, at := range v.InvokableBy {
		if k := tierIndex(skill.AgentTier(at)); k >= 0 {
			e.tiers |= 1 << k
		}
	}
	b.s.entries = append(b.s.entries, e)
}

// hash adds what agents can see of v to the fingerprint, disabled skills
// included (a skill enabled again is a change), each field
// length-prefixed.
func (b *snapshotBuilder) hash(v *store.Version) {
	b.buf = b.buf[:0]
	for _, f := range []string{v.Key, v.Dir, v.Digest, v.Name, v.Description, v.Category, v.Version, strconv.Itoa(v.Tier), strconv.FormatBool(v.Enabled), v.Trust} {
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
}

// word returns the arena's copy of a short string that many skills share
// (a category, a scope, a version label).
func (b *snapshotBuilder) word(w string) span {
	if sp, ok := b.words[w]; ok {
		return sp
	}
	sp := b.s.text.add(w)
	b.words[w] = sp
	return sp
}

// done indexes the kept skills and returns the snapshot.
func (b *snapshotBuilder) done() *Snapshot {
	b.flush()
	s := b.s
	s.fingerprint = hex.EncodeToString(b.h.Sum(nil))
	s.text.seal()
	byKey := func(x, y entry) int { return strings.Compare(s.text.str(x.key), s.text.str(y.key)) }
	if !slices.IsSortedFunc(s.entries, byKey) {
		slices.SortStableFunc(s.entries, byKey)
	}
	s.entries = slices.Clip(s.entries)
	s.byName = make([]int32, len(s.entries))
	for i := range s.byName {
		s.byName[i] = int32(i)
	}
	// Stable on identity order: by name, then identity.
	slices.SortStableFunc(s.byName, func(x, y int32) int {
		return strings.Compare(s.text.str(s.entries[x].name), s.text.str(s.entries[y].name))
	})
	for k := range skill.AllAgentTiers {
		p := &s.pools[k]
		p.byCategory = map[string][]int32{}
		n := 0
		for i := range s.entries {
			if s.entries[i].tiers&(1<<k) != 0 {
				n++
			}
		}
		p.all = make([]int32, 0, n)
		for i := range s.entries {
			if s.entries[i].tiers&(1<<k) == 0 {
				continue
			}
			p.all = append(p.all, int32(i))
			c := s.text.str(s.entries[i].category)
			p.byCategory[c] = append(p.byCategory[c], int32(i))
		}
	}
	ib := search.NewBuilder(search.DefaultParams)
	s.filters = make([]rankFilter, len(s.entries))
	s.categories = map[string]int32{}
	for i := range s.entries {
		e := &s.entries[i]
		c := s.text.str(e.category)
		id, ok := s.categories[c]
		if !ok {
			id = int32(len(s.categories))
			s.categories[c] = id
		}
		s.filters[i] = rankFilter{tiers: e.tiers, tier: e.tier, category: id}
		ib.Add(search.Doc{Name: s.text.str(e.name), Category: c, Description: s.text.str(e.description)})
	}
	s.index = ib.Build()
	return s
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
	i := sort.Search(len(p), func(i int) bool { return s.key(p[i]) >= key })
	if i < len(p) && s.key(p[i]) == key {
		return s.brief(p[i]), true
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
	n := sort.Search(len(s.byName), func(j int) bool { return s.text.str(s.entries[s.byName[j]].name) >= name })
	for _, i := range s.byName[n:] {
		if s.text.str(s.entries[i].name) != name {
			break
		}
		if s.entries[i].tiers&(1<<k) != 0 {
			out = append(out, s.brief(i))
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
		if !yield(s.brief(i)) {
			return
		}
	}
}

// PageQuery asks for one page of the skills an agent may use.
type PageQuery struct {
	// AgentTier is the agent's tier: only skills invokable by it.
	AgentTier skill.AgentTier
	// Category keeps skills of that category; Tier of that skill tier
	// (1–3, 0 for all); Query ranks the skills relevant to it, best first
	// (see [Snapshot.Page]).
	Category string
	Tier     int
	Query    string
	// Cursor continues after the page that returned it; "" starts.
	Cursor string
	// After, when Cursor is "", continues after the skill with this
	// identity: for callers with cursors of their own (skills/list). A
	// ranked page (with Query) has no identity order: After is refused.
	After string
	// Limit is the page's size, 1–MaxPageLimit; 0 means DefaultPageLimit.
	Limit int
}

// Page is one page of skills.
type Page struct {
	// Skills are the page's skills, by identity; with a query, best
	// first.
	Skills []Brief
	// Scores are the skills' relevance to the query, in the order of
	// Skills; nil without a query.
	Scores []float32
	// Total is how many skills match the filters, on every page.
	Total int
	// NextCursor continues after this page; "" when it is the last.
	NextCursor string
}

// Page returns one page of the skills matching q, by identity. The cursor
// encodes the last identity returned, so paging stays correct when the
// registry changes between pages: a skill is neither repeated nor skipped
// unless it was itself added or removed. Without Query (and with Tier only
// alongside Category) a page costs its size plus a binary search; a Tier
// filter scans the tier's pool (or category) to count the total.
//
// With Query the page is ranked ([Snapshot.rankedPage]): the skills
// relevant to the query, an exact name first, then by BM25F score over
// name, category and description; its cursor is the rank to continue
// from, and a cost the query's matches, not the registry's size.
//
// Errors: ErrBadPage (wrapped, with the argument named) for a limit, tier,
// query, category or cursor out of range.
func (s *Snapshot) Page(q PageQuery) (Page, error) {
	if err := q.validate(); err != nil {
		return Page{}, err
	}
	after := q.After
	if q.Cursor != "" && q.Query == "" {
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
	if q.Cursor != "" || q.After != "" {
		start = sort.Search(len(idx), func(i int) bool { return s.key(idx[i]) > after })
	}
	out := Page{Skills: []Brief{}}
	if q.Query != "" {
		return s.rankedPage(q, limit)
	}
	if q.Tier == 0 {
		out.Total = len(idx)
		end := min(start+limit, len(idx))
		for _, i := range idx[start:end] {
			out.Skills = append(out.Skills, s.brief(i))
		}
		if end < len(idx) {
			out.NextCursor = encodeCursor(s.key(idx[end-1]))
		}
		return out, nil
	}
	more := false
	for n, i := range idx {
		e := &s.entries[i]
		if int(e.tier) != q.Tier {
			continue
		}
		out.Total++
		switch {
		case n < start:
		case len(out.Skills) < limit:
			out.Skills = append(out.Skills, s.brief(i))
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
	case q.After != "" && q.Query != "":
		return fmt.Errorf("%w: a ranked page (with a query) continues by its cursor, not after an identity", ErrBadPage)
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
	s, err := r.buildSnapshot(ctx, gen, "")
	if err != nil {
		return nil, err
	}
	r.snap.Store(s)
	r.log.DebugContext(ctx, "catalog snapshot", "generation", gen, "skills", len(s.entries))
	return s, nil
}

// buildSnapshot reads the current versions and builds tenant's snapshot
// ("" for the shared catalog) of generation gen.
func (r *Registry) buildSnapshot(ctx context.Context, gen int64, tenant string) (*Snapshot, error) {
	b := newSnapshotBuilder(gen, tenant)
	if vs, ok := r.store.(store.VersionStreamer); ok {
		if err := vs.EachVersion(ctx, store.Filter{Brief: true}, func(v store.Version) error { b.add(v); return nil }); err != nil {
			return nil, err
		}
		return b.done(), nil
	}
	all, err := r.store.Versions(ctx, store.Filter{Brief: true})
	if err != nil {
		return nil, err
	}
	for _, v := range all {
		b.add(v)
	}
	return b.done(), nil
}

// TenantSnapshot returns the catalog the principals of tenant see: the
// shared catalog ([Registry.Snapshot]) when tenant has no skill library,
// else the shared skills and those of its library, where a library skill
// wins over a shared one with the same identity. No other tenant's
// library skill is in it. A tenant's snapshot is built once per registry
// generation (a pass over the versions) and kept while the generation
// holds; builds are serialised.
func (r *Registry) TenantSnapshot(ctx context.Context, tenant string) (*Snapshot, error) {
	shared, err := r.Snapshot(ctx)
	if err != nil || tenant == "" || !shared.tenants[tenant] {
		return shared, err
	}
	r.tenantMu.Lock()
	defer r.tenantMu.Unlock()
	if r.tenantGen != shared.gen {
		r.tenantGen, r.tenantSnaps = shared.gen, map[string]*Snapshot{}
	}
	if s := r.tenantSnaps[tenant]; s != nil {
		return s, nil
	}
	s, err := r.buildSnapshot(ctx, shared.gen, tenant)
	if err != nil {
		return nil, err
	}
	r.tenantSnaps[tenant] = s
	r.log.DebugContext(ctx, "tenant catalog snapshot", "generation", shared.gen, "tenant", tenant, "skills", len(s.entries))
	return s, nil
}

// Tenant returns the tenant whose library the snapshot includes, or "" for
// the shared catalog.
func (s *Snapshot) Tenant() string { return s.tenant }
