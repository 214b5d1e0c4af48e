// Package policy decides whether an agent may invoke a capability: it
// projects the registry onto a principal's capability scope, evaluates Cedar
// policies, enforces typed argument constraints and rate limits, and asks
// for a human approval grant where a call is risky.
//
// A tour:
//
//	eng := policy.New(&policy.Options{Store: db, PolicyDir: filepath.Join(data, "policies")})
//	if err := eng.Reload(ctx); err != nil { ... }            // policies and grants
//	if err := eng.SetCapabilities(caps); err != nil { ... }  // from the registry
//	ref, _ := capability.ParseRef("dev/issues:github/search_issues")
//	d := eng.Evaluate(ctx, principal, ref, args)
//	switch d.Effect {
//	case capability.Allow:           // call it
//	case capability.RequireApproval: // ask a human for a grant
//	case capability.Deny:            // d.Reasons say which check and which policy
//	}
//
// # Entities
//
// The principal is Agent::"tenant/agent" with attributes tier ("T3"),
// tierLevel (3), tenant, agent and, for a sub-agent, parent (its parent's
// Agent entity, which is also its Cedar parent, so `principal in
// Agent::"acme/lead"` matches lead's sub-agents). The resource is
// Capability::"skill:extensionId/capabilityId" ([capability.Ref]: server
// ids are only unique within a skill, so the skill is part of every
// capability's identity) with riskLevel, sideEffects, egress, extension,
// capability, skill, trust and skillTier; its Cedar parents are
// Skill::"skill" (trust, tier, state) and Extension::"skill:extensionId". The
// action is Action::"invoke". The context holds args (the call's arguments
// as a record), session when known, and delegated (true) for a sub-agent.
//
// # Decision order
//
// Evaluate checks, in this order, and the first failing check decides:
// trust mismatch, blocked skill, empty scope, capability out of scope, Cedar
// (a matching forbid, or no matching permit), typed constraints (the
// manifest's, and those of the permits that allowed the call), the rate
// limit, and finally approval: a destructive, externally side-effecting or
// network-egress capability needs a matching grant.
//
// # Speed
//
// Everything a decision reads is an immutable snapshot swapped atomically
// when capabilities or policies change; readers never lock. Policies are
// indexed by the principal and resource their scope names, so a decision
// evaluates only the policies that can apply, with exactly Cedar's result.
//
// # Inside
//
// The exported names are the API: the engine and its decisions, scopes,
// policies and their findings, grants and the Cedar model's types. The
// machinery behind Evaluate is unexported: the policy index (index.go),
// the native evaluator of common conditions (native.go), the memo of each
// (principal, capability) pair's plan (memo.go) and the cache of Cedar
// contexts (ctxcache.go); the differential tests hold them to cedar-go's
// own evaluation. What they and `policy check` read of a policy's syntax
// and of the schema comes from internal/cedarinspect, the only package
// that imports cedar-go's experimental x/exp API.
package policy
