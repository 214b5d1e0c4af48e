package skill

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Extension keys. Each may be written at the top level (the form the seed
// projects use) or under metadata (the form the specification allows).
const (
	keyTier           = "tier"
	keyInvokableBy    = "invokable_by"
	keyInvokableByAlt = "invokable-by"
	keyCategory       = "category"
	keyVersion        = "version"
)

// DefaultTier is the tier of a skill that declares none.
const DefaultTier = 2

// AgentTier is an agent's rank: T0 is a human, T1 the top orchestrator,
// down to T4 for small models.
type AgentTier string

// The agent tiers, highest first.
const (
	T0 AgentTier = "T0"
	T1 AgentTier = "T1"
	T2 AgentTier = "T2"
	T3 AgentTier = "T3"
	T4 AgentTier = "T4"
)

// AllAgentTiers lists every agent tier, highest first.
var AllAgentTiers = []AgentTier{T0, T1, T2, T3, T4}

// ParseAgentTier accepts "T3", "t3" or "3".
func ParseAgentTier(s string) (AgentTier, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(u, "T") {
		u = "T" + u
	}
	for _, t := range AllAgentTiers {
		if string(t) == u {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown agent tier %q: use one of T0, T1, T2, T3, T4", s)
}

// rank is the numeric level of an agent tier (T0 → 0).
func (t AgentTier) rank() int { return int(t[1] - '0') }

// TierAllows returns the agent tiers a skill tier admits: tier 1 any agent
// (T0–T4), tier 2 T3 and above (T0–T3), tier 3 only T0 and T1.
func TierAllows(tier int) []AgentTier {
	switch tier {
	case 1:
		return AllAgentTiers
	case 3:
		return AllAgentTiers[:2]
	default:
		return AllAgentTiers[:4]
	}
}

// CanInvoke reports whether agent tier a is listed in invokableBy.
func CanInvoke(invokableBy []AgentTier, a AgentTier) bool {
	for _, t := range invokableBy {
		if t == a {
			return true
		}
	}
	return false
}

// semverRE is Semantic Versioning 2.0.0's grammar, with an optional "v".
var semverRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
})

// categoryRE is the accepted shape of a category: one or more name-like
// segments separated by "/".
var categoryRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[\p{Ll}\p{Lo}\p{N}][\p{Ll}\p{Lo}\p{N}_.-]*(/[\p{Ll}\p{Lo}\p{N}][\p{Ll}\p{Lo}\p{N}_.-]*)*$`)
})

// extValue looks an extension key up at the top level and under metadata.
// It reports a conflict when both are present and differ.
func extValue(s *Skill, fm *Map, mode Mode, keys ...string) (v any, field string, ok bool) {
	var top, meta any
	var topKey, metaKey string
	for _, k := range keys {
		if x, found := fm.Get(k); found && topKey == "" {
			top, topKey = x, k
		}
		if x, found := s.Metadata[k]; found && metaKey == "" {
			meta, metaKey = x, k
		}
	}
	switch {
	case topKey != "" && metaKey != "":
		if pyStr(top) != meta.(string) && !sameList(top, meta.(string)) {
			s.addf(mode, topKey, fmt.Sprintf("'%s' is set both at the top level and under metadata, with different values; keep one", topKey))
		}
		return top, topKey, true
	case topKey != "":
		return top, topKey, true
	case metaKey != "":
		return meta, "metadata." + metaKey, true
	}
	return nil, "", false
}

// sameList reports whether a top-level list equals a metadata string list.
func sameList(top any, meta string) bool {
	l, ok := top.([]any)
	if !ok {
		return false
	}
	parts := splitList(meta)
	if len(parts) != len(l) {
		return false
	}
	for i := range l {
		if pyStr(l[i]) != parts[i] {
			return false
		}
	}
	return true
}

// splitList splits "T0, T1 T2" or "[T0, T1]" into items.
func splitList(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "[")
	s = strings.TrimSuffix(s, "]")
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// parseExtensions fills Tier, InvokableBy, Category and Version.
func parseExtensions(s *Skill, fm *Map, mode Mode, dirCategory string) {
	s.Tier = DefaultTier
	if v, field, ok := extValue(s, fm, mode, keyTier); ok {
		str := strings.TrimSpace(pyStr(v))
		n, err := strconv.Atoi(str)
		if err != nil || n < 1 || n > 3 {
			s.addf(mode, field, fmt.Sprintf("Field '%s' must be 1, 2 or 3 (got %q); tier 1 is for any agent, 2 for T3 and above, 3 for T0/T1 only", field, str))
		} else {
			s.Tier = n
		}
	}
	allowed := TierAllows(s.Tier)
	s.InvokableBy = append([]AgentTier(nil), allowed...)
	if v, field, ok := extValue(s, fm, mode, keyInvokableBy, keyInvokableByAlt); ok {
		var items []string
		switch t := v.(type) {
		case []any:
			for _, e := range t {
				items = append(items, pyStr(e))
			}
		default:
			items = splitList(pyStr(v))
		}
		seen := map[AgentTier]bool{}
		var list []AgentTier
		bad := false
		for _, it := range items {
			at, err := ParseAgentTier(it)
			if err != nil {
				s.addf(mode, field, fmt.Sprintf("Field '%s': %v", field, err))
				bad = true
				continue
			}
			if !seen[at] {
				seen[at] = true
				list = append(list, at)
			}
		}
		sort.Slice(list, func(i, j int) bool { return list[i].rank() < list[j].rank() })
		var wider []string
		for _, at := range list {
			if !CanInvoke(allowed, at) {
				wider = append(wider, string(at))
			}
		}
		switch {
		case len(wider) > 0:
			s.addf(mode, field, fmt.Sprintf("Field '%s' lists %s, but tier %d allows only %s; remove %s or lower the tier", field, strings.Join(wider, ", "), s.Tier, tierRange(allowed), strings.Join(wider, ", ")))
		case len(list) == 0 && !bad:
			s.addf(mode, field, fmt.Sprintf("Field '%s' is empty; list agent tiers such as [T0, T1] or remove the field", field))
		case !bad:
			s.InvokableBy = list
		}
	}
	s.Category = dirCategory
	if v, field, ok := extValue(s, fm, mode, keyCategory); ok {
		str := strings.Trim(strings.TrimSpace(pyStr(v)), "/")
		if !categoryRE().MatchString(str) || strings.Contains(str, "..") {
			s.addf(mode, field, fmt.Sprintf("Field '%s' must be lowercase words separated by '/' (got %q)", field, str))
		} else {
			s.Category = str
		}
	}
	if v, field, ok := extValue(s, fm, mode, keyVersion); ok {
		str := strings.TrimSpace(pyStr(v))
		s.Version = str
		if !semverRE().MatchString(str) {
			s.warnf(field, fmt.Sprintf("Field '%s' is %q, which is not a semantic version (MAJOR.MINOR.PATCH); it is kept as a label", field, str))
		}
	}
}

func tierRange(ts []AgentTier) string {
	return string(ts[0]) + "–" + string(ts[len(ts)-1])
}
