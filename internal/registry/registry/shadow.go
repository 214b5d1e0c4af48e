package registry

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Shadow records that a skill hides another with the same identity.
type Shadow struct {
	Key      string `json:"key"`
	Winner   string `json:"winner"`
	WinScope string `json:"winner_scope"`
	Loser    string `json:"shadowed"`
	Scope    string `json:"shadowed_scope"`
}

// shadowsOf returns the shadowing among versions in any order, as
// resolveIndex decides it over the same versions in the store's order
// (key, root position, directory).
func shadowsOf(all []current) []Shadow {
	// Most keys have one version: only those with more are sorted.
	first := make(map[string]int32, len(all))
	var dups map[string][]int32
	for i := range all {
		k := groupKey(all[i].key, all[i].tenant)
		if strings.HasPrefix(k, "!") {
			continue // a rejected version shadows nothing
		}
		j, ok := first[k]
		if !ok {
			first[k] = int32(i)
			continue
		}
		if dups == nil {
			dups = map[string][]int32{}
		}
		if dups[k] == nil {
			dups[k] = []int32{j}
		}
		dups[k] = append(dups[k], int32(i))
	}
	keys := make([]string, 0, len(dups))
	for k := range dups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	group := make([]current, 0, 4)
	shadows := []Shadow{}
	for _, k := range keys {
		group = group[:0]
		for _, i := range dups[k] {
			group = append(group, all[i])
		}
		slices.SortFunc(group, func(a, b current) int {
			if c := cmp.Compare(a.pos, b.pos); c != 0 {
				return c
			}
			return strings.Compare(a.dir, b.dir)
		})
		_, sh := resolveBy(group, func(v *current) (string, string, string) { return groupKey(v.key, v.tenant), v.scope, v.dir })
		shadows = append(shadows, sh...)
	}
	return shadows
}

// scopeRank orders scope names for precedence.
func scopeRank(s string) int { return discover.ScopeRank(s) }

// resolve applies precedence to current versions: among valid versions
// with the same key, the highest scope wins, then the earlier root, then
// the first directory. It returns the winners (and every rejected version,
// which never shadows anything) and the shadowing it decided.
func resolve(all []store.Version) ([]store.Version, []Shadow) {
	idx, shadows := resolveIndex(all)
	winners := make([]store.Version, len(idx))
	for i, w := range idx {
		winners[i] = all[w]
	}
	return winners, shadows
}

// resolveIndex is resolve with the winners as indexes into all.
// Each tenant library's versions compete among themselves only: another
// tenant never sees them, and whether they win over the shared skills is
// decided per tenant by its catalog snapshot ([Registry.TenantSnapshot]).
func resolveIndex(all []store.Version) ([]int, []Shadow) {
	return resolveBy(all, func(v *store.Version) (string, string, string) {
		return groupKey(v.Key, discover.TenantOf(v.Scope, v.Root)), v.Scope, v.Dir
	})
}

// groupKey is the key precedence is decided on: the identity, and for a
// tenant library's skill its tenant after a NUL byte (which no identity
// holds), so that two tenants' skills never shadow each other.
func groupKey(key, tenant string) string {
	if tenant == "" {
		return key
	}
	return key + "\x00" + tenant
}

// resolveBy is resolveIndex over versions of any type, whose key, scope
// and directory id returns.
func resolveBy[T any](all []T, id func(*T) (key, scope, dir string)) ([]int, []Shadow) {
	key := func(i int) string { k, _, _ := id(&all[i]); return k }
	// groups are the indexes of the versions of each key, in key order.
	var groups [][]int
	sorted := true
	for i := 1; i < len(all) && sorted; i++ {
		sorted = key(i-1) <= key(i)
	}
	if sorted {
		// As the store lists them: each key's versions are together.
		idx := make([]int, len(all))
		for i := range idx {
			idx[i] = i
		}
		for start := 0; start < len(all); {
			end := start + 1
			for end < len(all) && key(end) == key(start) {
				end++
			}
			groups = append(groups, idx[start:end:end])
			start = end
		}
	} else {
		byKey := make(map[string][]int, len(all))
		var keys []string
		for i := range all {
			k := key(i)
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], i)
		}
		sort.Strings(keys)
		for _, k := range keys {
			groups = append(groups, byKey[k])
		}
	}
	winners := make([]int, 0, len(groups))
	shadows := []Shadow{}
	for _, vs := range groups {
		k := key(vs[0])
		if strings.HasPrefix(k, "!") {
			winners = append(winners, vs...)
			continue
		}
		if len(vs) == 1 {
			winners = append(winners, vs[0])
			continue
		}
		// Versions arrive ordered by root position, then directory.
		sort.SliceStable(vs, func(i, j int) bool {
			_, a, _ := id(&all[vs[i]])
			_, b, _ := id(&all[vs[j]])
			return scopeRank(a) > scopeRank(b)
		})
		_, wScope, wDir := id(&all[vs[0]])
		shownKey, _, _ := strings.Cut(k, "\x00")
		winners = append(winners, vs[0])
		for _, l := range vs[1:] {
			_, lScope, lDir := id(&all[l])
			shadows = append(shadows, Shadow{Key: shownKey, Winner: wDir, WinScope: wScope, Loser: lDir, Scope: lScope})
		}
	}
	return winners, shadows
}
