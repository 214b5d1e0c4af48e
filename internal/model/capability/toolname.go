package capability

import "strings"

// NamespacedTool returns "<skill>__<tool>", the skill key's "/" written
// "--" (which a valid skill name cannot contain, so the result is
// unambiguous): the name a capability is offered under when its tool name
// is taken.
func NamespacedTool(skill, tool string) string {
	return strings.ReplaceAll(skill, "/", "--") + "__" + tool
}

// IsReservedName reports whether name is one of the gateway's own tools
// ([ReservedNames]).
func IsReservedName(name string) bool {
	for _, r := range ReservedNames {
		if r == name {
			return true
		}
	}
	return false
}

// NameTaken says who holds a tool name, for [AssignToolNames]: "" when
// nobody does.
type NameTaken func(name string) (holder string)

// AssignedName is a tool name fixed for one capability, with why it is
// not the tool's own name ("" when it is).
type AssignedName struct {
	Name   string
	Reason string
}

// AssignToolNames fixes the tool names agents see for refs, the
// capabilities of skill being approved: a name kept from an earlier
// approval of the same skill (keep) stays; otherwise the tool's own name,
// unless the gateway or another skill (taken) holds it, or another
// capability of refs came first; then "<skill>__<tool>"; then
// "<skill>__<server>__<tool>". Names never depend on which skills are
// enabled: they are fixed once and kept while the skill is approved.
func AssignToolNames(skill string, refs []Ref, keep map[string]string, taken NameTaken) map[string]AssignedName {
	out := make(map[string]AssignedName, len(refs))
	mine := map[string]bool{}
	holder := func(name string) string {
		if IsReservedName(name) {
			return "skillgate"
		}
		if mine[name] {
			return skill
		}
		return taken(name)
	}
	// Kept names first, so a new capability never takes one.
	for _, r := range refs {
		key := r.ExtensionID + "/" + r.CapabilityID
		if n, ok := keep[key]; ok && n != "" && holder(n) == "" {
			out[key] = AssignedName{Name: n, Reason: reasonOf(n, r, "")}
			mine[n] = true
		}
	}
	for _, r := range refs {
		key := r.ExtensionID + "/" + r.CapabilityID
		if _, ok := out[key]; ok {
			continue
		}
		cands := []string{r.CapabilityID, NamespacedTool(skill, r.CapabilityID), NamespacedTool(skill, r.ExtensionID+"__"+r.CapabilityID)}
		by := ""
		for _, n := range cands {
			h := holder(n)
			if h == "" {
				out[key] = AssignedName{Name: n, Reason: reasonOf(n, r, by)}
				mine[n] = true
				break
			}
			if by == "" {
				by = h
			}
		}
	}
	return out
}

// reasonOf says why r is named n: nothing when n is its tool's own name.
func reasonOf(n string, r Ref, by string) string {
	switch {
	case n == r.CapabilityID:
		return ""
	case by == "":
		return "kept from an earlier approval"
	case by == "skillgate":
		return r.CapabilityID + " is a tool of skillgate's own"
	}
	return r.CapabilityID + " is taken by " + by
}
