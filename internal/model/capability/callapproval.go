package capability

import "fmt"

// CallApproval says when the calls of an approved capability need a human's
// grant (the policy's approval step): the default an operator chooses for
// it at approval, recorded in the approved manifest.
type CallApproval string

// The call approval defaults.
const (
	// CallApprovalByRisk, the default (also written "" and left out of a
	// manifest), asks for a grant when the risk fields call for one: a
	// destructive capability, external side effects or network egress.
	CallApprovalByRisk CallApproval = "by-risk"
	// CallApprovalAlways asks for a grant for every call, whatever the
	// risk: a read that exposes sensitive data, say.
	CallApprovalAlways CallApproval = "always"
	// CallApprovalNever waives the grant of a capability whose calls the
	// operator approves once and for all, within its constraints. It never
	// covers a destructive capability.
	CallApprovalNever CallApproval = "never"
)

// CallApprovals lists the defaults, as flags and forms offer them.
var CallApprovals = []CallApproval{CallApprovalByRisk, CallApprovalAlways, CallApprovalNever}

// ParseCallApproval parses a default as flags, forms and manifests spell
// it; "" is by-risk.
func ParseCallApproval(s string) (CallApproval, error) {
	switch a := CallApproval(s); a {
	case "", CallApprovalByRisk:
		return CallApprovalByRisk, nil
	case CallApprovalAlways, CallApprovalNever:
		return a, nil
	}
	return "", fmt.Errorf("call approval %q: use by-risk, always or never", s)
}

// NeedsGrant reports whether a call of a capability with risk fields
// level, effects and egress needs a human's grant under a. By the one
// severity order, a value outside its set ranks above the most severe, so
// an unknown value never needs less approval than a known one; "never"
// does not waive the grant of a destructive capability (nor of an
// unknown level).
func (a CallApproval) NeedsGrant(level RiskLevel, effects SideEffects, egress DataEgress) bool {
	destructive := level.Compare(RiskDestructive) >= 0
	switch a {
	case CallApprovalAlways:
		return true
	case CallApprovalNever:
		return destructive
	case CallApprovalByRisk:
	}
	// By risk ("" too, and any value no manifest could hold).
	return destructive || effects.Compare(SideEffectsExternal) >= 0 || egress.Compare(EgressNetwork) >= 0
}

// Stricter returns the stricter of a and b: always, then by risk ("" too),
// then never. Two records of one capability merge to the stricter.
func (a CallApproval) Stricter(b CallApproval) CallApproval {
	rank := func(x CallApproval) int {
		switch x {
		case CallApprovalAlways:
			return 2
		case CallApprovalNever:
			return 0
		case CallApprovalByRisk:
		}
		return 1
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
