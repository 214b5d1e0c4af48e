package executor

import (
	"fmt"
	"strings"
)

// OffCode classifies why a backend is off for a principal.
type OffCode string

// The closed set of reasons a backend is off. The zero value means live.
const (
	// OffSkillDisabled: the provider skill is disabled (or not installed).
	OffSkillDisabled OffCode = "skill_disabled"
	// OffNotApproved: the backend's capability has not been approved.
	OffNotApproved OffCode = "not_approved"
	// OffDrift: the capability is blocked because its tool drifted from
	// the approved definition.
	OffDrift OffCode = "drift"
	// OffCredential: a credential the backend's server needs is not
	// configured for the principal.
	OffCredential OffCode = "credential_missing"
	// OffConnection: the backend's remote server needs an OAuth
	// connection the principal does not have (none, or an expired or
	// revoked one); a human connects it.
	OffConnection OffCode = "connection_required"
	// OffScope: the principal's scope leaves the capability out (its tier
	// may not invoke the skill).
	OffScope OffCode = "out_of_scope"
	// OffPolicy: a policy forbids the capability for the principal.
	OffPolicy OffCode = "forbidden"
	// OffInvalid: the backend's mapping or declaration was refused.
	OffInvalid OffCode = "invalid"
)

// Off says whether a backend is live for a principal, and if not why: a
// code and a detail operators read ("credential GITLAB_TOKEN missing for
// tenant acme"). The zero Off is live.
type Off struct {
	Code   OffCode `json:"code,omitempty"`
	Detail string  `json:"detail,omitempty"`
}

// Live reports whether the backend is live.
func (o Off) Live() bool { return o.Code == "" }

// String renders the reason: the detail, or the code when there is none.
func (o Off) String() string {
	switch {
	case o.Code == "":
		return "live"
	case o.Detail != "":
		return o.Detail
	}
	return string(o.Code)
}

// Candidate is one backend of an executor with its liveness for the
// principal of a call.
type Candidate struct {
	Backend *Backend
	Off     Off
}

// Preferences are the configured provider orders: the principal's
// tenant's, then the global one. Providers absent from both come after,
// in name order.
type Preferences struct {
	Tenant []string
	Global []string
}

// Rule names the rule that chose a backend.
type Rule string

// The resolver's rules, in the order it applies them.
const (
	// RulePin: the call named the provider (the provider argument).
	RulePin Rule = "pin"
	// RuleTenant: the tenant's preference order.
	RuleTenant Rule = "tenant_preference"
	// RuleGlobal: the global preference order.
	RuleGlobal Rule = "global_preference"
	// RuleNameOrder: no preference names a live provider; the first live
	// backend in provider name order, then skill key order.
	RuleNameOrder Rule = "name_order"
)

// Resolution is the resolver's choice for one call.
type Resolution struct {
	// Backend is the backend chosen.
	Backend *Backend
	// Rule is the rule that chose it; Rank its position in that rule's
	// order (0 first), so Why can say when earlier providers were off.
	Rule Rule
	Rank int
}

// Why says why the backend was chosen, for the audit record and the log.
func (r Resolution) Why() string {
	b := r.Backend
	switch r.Rule {
	case RulePin:
		return fmt.Sprintf("provider %s pinned by the call (skill %s)", b.Provider, b.Skill)
	case RuleTenant:
		return fmt.Sprintf("provider %s is choice %d of the tenant's preference order (skill %s)", b.Provider, r.Rank+1, b.Skill)
	case RuleGlobal:
		return fmt.Sprintf("provider %s is choice %d of the global preference order (skill %s)", b.Provider, r.Rank+1, b.Skill)
	}
	return fmt.Sprintf("provider %s is the first live provider in name order (skill %s)", b.Provider, b.Skill)
}

// Resolve chooses the backend that runs one call of executor: a pure,
// deterministic function of its arguments. cands are the executor's
// backends with their liveness, in the fallback order (provider name, then
// skill key: [Index] keeps them so). The rules, in order:
//
//  1. pin (the call's provider argument) set: the first live backend of
//     that provider; [ErrProviderOff] naming why each of its backends is
//     off when none is live; [ErrUnknownProvider] when none serves the
//     executor;
//  2. the first live backend whose provider comes first in the tenant's
//     preference order;
//  3. then in the global preference order;
//  4. then the first live backend in fallback order.
//
// With no live backend the executor is dormant: [ErrDormant], naming why
// each backend is off.
func Resolve(executor string, cands []Candidate, pin string, prefs Preferences) (Resolution, error) {
	if pin != "" {
		found := false
		for _, c := range cands {
			if c.Backend.Provider != pin {
				continue
			}
			found = true
			if c.Off.Live() {
				return Resolution{Backend: c.Backend, Rule: RulePin}, nil
			}
		}
		if !found {
			return Resolution{}, fmt.Errorf("%w: %s has no backend for provider %q (its providers: %s)", ErrUnknownProvider, executor, pin, providersOf(cands, false))
		}
		return Resolution{}, fmt.Errorf("%w: provider %s cannot serve %s: %s", ErrProviderOff, pin, executor, offReasons(cands, pin))
	}
	for rank, p := range prefs.Tenant {
		for _, c := range cands {
			if c.Backend.Provider == p && c.Off.Live() {
				return Resolution{Backend: c.Backend, Rule: RuleTenant, Rank: rank}, nil
			}
		}
	}
	for rank, p := range prefs.Global {
		for _, c := range cands {
			if c.Backend.Provider == p && c.Off.Live() {
				return Resolution{Backend: c.Backend, Rule: RuleGlobal, Rank: rank}, nil
			}
		}
	}
	for _, c := range cands {
		if c.Off.Live() {
			return Resolution{Backend: c.Backend, Rule: RuleNameOrder}, nil
		}
	}
	if len(cands) == 0 {
		return Resolution{}, fmt.Errorf("%w: %s has no backend: no provider skill declares one", ErrDormant, executor)
	}
	return Resolution{}, fmt.Errorf("%w: %s has no live backend: %s", ErrDormant, executor, offReasons(cands, ""))
}

// offReasons lists why the backends (of provider, or all when empty) are
// off: "gitlab (skill acme/gitlab): credential GITLAB_TOKEN missing for
// tenant acme".
func offReasons(cands []Candidate, provider string) string {
	var sb strings.Builder
	for _, c := range cands {
		if provider != "" && c.Backend.Provider != provider {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("; ")
		}
		fmt.Fprintf(&sb, "%s (skill %s): %s", c.Backend.Provider, c.Backend.Skill, c.Off)
	}
	return sb.String()
}

// providersOf lists the distinct providers of cands, live ones only when
// liveOnly, in order.
func providersOf(cands []Candidate, liveOnly bool) string {
	var s []string
	for _, c := range cands {
		if liveOnly && !c.Off.Live() {
			continue
		}
		if len(s) == 0 || s[len(s)-1] != c.Backend.Provider {
			s = append(s, c.Backend.Provider)
		}
	}
	return listOrNone(s)
}
