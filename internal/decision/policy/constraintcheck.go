package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// ValidateConstraints finds permits whose @constraints cannot restrict
// some capability they cover: a constraint checks only the arguments it
// names when they are present (pathGlobs the pathArgs, by default path,
// paths, source, destination, file and directory; allowedDomains the
// urlArgs), so a capability that takes none of them is permitted with no
// restriction at all. (argValues needs its arguments present, so it
// refuses such calls instead.) A permit written as "writes, but only under
// /srv/notes" then permits every write tool without a path argument.
//
// A permit covers a capability (installed and enabled, as for
// [ValidateArguments]) when its scope holds and its condition holds, or
// cannot be evaluated without the call's arguments, for an agent of some
// tier. What a capability takes comes from its approved input schema; a
// capability without one is left out (its arguments are unknown). Each
// finding is a warning naming the permit, the constraint and the
// capabilities, and the fix.
func ValidateConstraints(set *PolicySet, caps []Capability) []Finding {
	var cs []Capability
	for _, c := range caps {
		if c.Enabled && c.SkillState == SkillEnabled {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b Capability) int { return strings.Compare(a.Ref().String(), b.Ref().String()) })
	s, err := buildSnapshot(cs, set)
	if err != nil {
		return nil // the records are checked where they are loaded
	}
	var out []Finding
	for _, p := range set.policies {
		if p.Effect != "permit" || p.Constraints == nil {
			continue
		}
		uncovered := map[string][]string{} // constraint → capabilities it cannot restrict
		var order []string
		for i := range s.caps {
			ce := &s.caps[i]
			props, known := argumentNames(ce.InputSchema)
			if !known || !permitCovers(s, p, ce) {
				continue
			}
			for _, name := range inapplicable(*p.Constraints, props) {
				if uncovered[name] == nil {
					order = append(order, name)
				}
				uncovered[name] = append(uncovered[name], ce.ref)
			}
		}
		for _, name := range order {
			refs := uncovered[name]
			out = append(out, Finding{Position: p.Position, PolicyID: p.ID, Severity: SeverityWarning, Capabilities: refs,
				Message: fmt.Sprintf("permits %s with no %s check: %s only checks %s, which %s; "+
					"narrow the permit's scope or condition to the capabilities %s restricts, or permit those with their own policy",
					capabilityList(refs), name, name, constraintArgs(*p.Constraints, name), takeNone(len(refs)), name)})
		}
	}
	return out
}

// permitCovers reports whether permit p may permit a call of ce by some
// agent: its scope holds and its condition holds for an agent of some
// tier, or fails to evaluate without the call's arguments.
func permitCovers(s *snapshot, p *Policy, ce *capEntry) bool {
	for _, tier := range skill.AllAgentTiers {
		ent := agentEntity(capability.Principal{Tenant: "t", Agent: "a", Tier: tier})
		view := entityView{snap: s, chain: []types.Entity{ent}}
		req := cedar.Request{Principal: ent.UID, Action: ActionInvoke, Resource: ce.uids[0],
			Context: buildContext(nil, false, "", false, "", false, "", false, s.policies)}
		dec, diag := cedar.Authorize(single{p.ID, p.cedar}, &view, req)
		if dec == cedar.Allow || len(diag.Errors) > 0 {
			return true
		}
	}
	return false
}

// inapplicable lists the constraints of set that check arguments a
// capability taking the arguments props does not take.
func inapplicable(set constraint.Set, props []string) []string {
	takes := func(names []string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(props, n) })
	}
	var out []string
	if set.PathGlobs != nil && !takes(orDefault(set.PathArgs, constraint.DefaultPathArgs)) {
		out = append(out, "pathGlobs")
	}
	if set.AllowedDomains != nil {
		urlAny := set.URLArgs == nil || slices.Contains(set.URLArgs, constraint.AnyURLArg)
		if urlAny && len(props) == 0 || !urlAny && !takes(set.URLArgs) {
			out = append(out, "allowedDomains")
		}
	}
	// argValues needs its arguments present: a call without them is
	// refused, never let through.
	return out
}

// constraintArgs says which arguments constraint name of set checks.
func constraintArgs(set constraint.Set, name string) string {
	var args []string
	switch name {
	case "pathGlobs":
		args = orDefault(set.PathArgs, constraint.DefaultPathArgs)
	case "allowedDomains":
		if set.URLArgs == nil || slices.Contains(set.URLArgs, constraint.AnyURLArg) {
			return "URL arguments"
		}
		args = set.URLArgs
	}
	if len(args) == 1 {
		return "the argument " + args[0]
	}
	return "the arguments " + strings.Join(args, ", ")
}

func takeNone(n int) string {
	if n == 1 {
		return "it does not take"
	}
	return "they do not take"
}

func orDefault(v, def []string) []string {
	if v == nil {
		return def
	}
	return v
}

// argumentNames returns the top-level argument names of an input schema,
// and false when there is no schema to read them from.
func argumentNames(schema json.RawMessage) ([]string, bool) {
	if len(schema) == 0 {
		return nil, false
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, false
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	return names, true
}
