package constraint

import (
	"slices"
	"strings"
)

// Intersect combines two constraint sets, such as a capability's manifest
// constraints and a policy's, into one that allows no call either of them
// refuses (the most restrictive combination):
//
//   - a field present in one set only is taken from it;
//   - allowedDomains, pathGlobs and each argValues entry keep the entries of
//     either side that the other side's entries contain (so "a.example.com"
//     ∩ "*.example.com" is "a.example.com"); entries that only partly
//     overlap are dropped, which may be stricter than the exact
//     intersection but never looser, and an empty result allows nothing;
//   - when both sides restrict domains (or paths), the arguments checked are
//     the union of both sides' urlArgs (pathArgs), absent meaning its
//     default;
//   - rateLimit is the lower rate.
//
// Both sets must be valid (from [Parse], or checked with [Set.Validate]);
// an invalid entry is treated as allowing nothing.
func Intersect(a, b Set) Set {
	var out Set
	switch {
	case a.AllowedDomains == nil:
		out.AllowedDomains, out.URLArgs = clone(b.AllowedDomains), clone(b.URLArgs)
	case b.AllowedDomains == nil:
		out.AllowedDomains, out.URLArgs = clone(a.AllowedDomains), clone(a.URLArgs)
	default:
		out.AllowedDomains = meet(a.AllowedDomains, b.AllowedDomains, domainWithin)
		out.URLArgs = union(orDefault(a.URLArgs, []string{AnyURLArg}), orDefault(b.URLArgs, []string{AnyURLArg}))
		if len(out.URLArgs) == 1 && out.URLArgs[0] == AnyURLArg {
			out.URLArgs = nil
		}
	}
	switch {
	case a.PathGlobs == nil:
		out.PathGlobs, out.PathArgs = clone(b.PathGlobs), clone(b.PathArgs)
	case b.PathGlobs == nil:
		out.PathGlobs, out.PathArgs = clone(a.PathGlobs), clone(a.PathArgs)
	default:
		out.PathGlobs = meet(a.PathGlobs, b.PathGlobs, globWithin)
		if a.PathArgs != nil || b.PathArgs != nil {
			out.PathArgs = union(orDefault(a.PathArgs, DefaultPathArgs), orDefault(b.PathArgs, DefaultPathArgs))
		}
	}
	if a.ArgValues != nil || b.ArgValues != nil {
		out.ArgValues = map[string][]string{}
		for k, v := range a.ArgValues {
			if w, ok := b.ArgValues[k]; ok {
				out.ArgValues[k] = meet(v, w, wildcardWithin)
			} else {
				out.ArgValues[k] = clone(v)
			}
		}
		for k, w := range b.ArgValues {
			if _, ok := a.ArgValues[k]; !ok {
				out.ArgValues[k] = clone(w)
			}
		}
	}
	ra, errA := ParseRate(a.RateLimit)
	rb, errB := ParseRate(b.RateLimit)
	switch {
	case a.RateLimit == "":
		out.RateLimit = b.RateLimit
	case b.RateLimit == "":
		out.RateLimit = a.RateLimit
	case errA != nil || errB != nil:
		out.RateLimit = "1/day" // unreadable: the strictest we can write
	case rb.stricter(ra):
		out.RateLimit = b.RateLimit
	default:
		out.RateLimit = a.RateLimit
	}
	return out
}

func clone(s []string) []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s)
}

func orDefault(s, def []string) []string {
	if s == nil {
		return def
	}
	return s
}

func union(a, b []string) []string {
	return sortedUnique(append(slices.Clone(a), b...))
}

// meet keeps each entry of a within some entry of b and each entry of b
// within some entry of a. The result is never nil.
func meet(a, b []string, within func(p, q string) bool) []string {
	out := []string{}
	keep := func(from, other []string) {
		for _, p := range from {
			for _, q := range other {
				if within(p, q) {
					out = append(out, p)
					break
				}
			}
		}
	}
	keep(a, b)
	keep(b, a)
	return sortedUnique(out)
}

// domainWithin reports whether every host allowed by pattern p is allowed
// by pattern q.
func domainWithin(p, q string) bool {
	if p == q {
		return true
	}
	suf, ok := strings.CutPrefix(q, "*")
	if !ok {
		return false
	}
	name := strings.TrimPrefix(p, "*.")
	return strings.HasSuffix(name, suf) && len(name) > len(suf)
}

// wildcardWithin reports whether every string matched by p is matched by
// q. It reads p's '*' as a literal character: q then matches it only with
// one of its own stars, which covers whatever p's star stands for. Sound,
// not complete.
func wildcardWithin(p, q string) bool { return wildcard(q, p) }

// globWithin reports whether every path matched by glob p is matched by
// glob q, by the same reasoning as wildcardWithin at segment level: a "**"
// of p is covered only by a "**" of q.
func globWithin(p, q string) bool {
	gp, err1 := compileGlob(p)
	gq, err2 := compileGlob(q)
	if err1 != nil || err2 != nil {
		return false
	}
	return matchSegs(gq.segs, len(gp.segs), func(s gseg, i int) bool {
		ps := gp.segs[i]
		if s.double {
			return true
		}
		return !ps.double && wildcard(s.pat, ps.pat)
	})
}
