package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/constraint"
	"github.com/skillgate/skillgate/skill"
)

// Trust is how much a skill's code is trusted, assigned by the root it
// comes from.
type Trust string

// The trust levels.
const (
	TrustCore       Trust = "core"
	TrustFirstParty Trust = "first_party"
	TrustImported   Trust = "imported"
)

func (t Trust) valid() bool { return t == TrustCore || t == TrustFirstParty || t == TrustImported }

// RiskLevel is how much a capability can change: read < write < destructive.
type RiskLevel string

// The risk levels, least severe first.
const (
	RiskRead        RiskLevel = "read"
	RiskWrite       RiskLevel = "write"
	RiskDestructive RiskLevel = "destructive"
)

// rank orders risk levels; an unknown level ranks above destructive, so it
// is never covered by a grant.
func (r RiskLevel) rank() int {
	switch r {
	case RiskRead:
		return 0
	case RiskWrite:
		return 1
	case RiskDestructive:
		return 2
	}
	return 3
}

// SideEffects is where a capability's effects land.
type SideEffects string

// The side-effect scopes.
const (
	SideEffectsNone     SideEffects = "none"
	SideEffectsInternal SideEffects = "internal"
	SideEffectsExternal SideEffects = "external"
)

// DataEgress is whether a capability may send data off the machine.
type DataEgress string

// The data egress values.
const (
	EgressNone    DataEgress = "none"
	EgressNetwork DataEgress = "network"
)

// SkillState is a skill's lifecycle state as far as policy cares.
type SkillState string

// The skill states. Only SkillEnabled puts a skill's capabilities in scope;
// SkillBlocked denies its calls with a "blocked" reason.
const (
	SkillEnabled  SkillState = "enabled"
	SkillDisabled SkillState = "disabled"
	SkillBlocked  SkillState = "blocked"
)

// Capability is one registry record the engine projects scopes from: a
// capability of an installed skill with its approved metadata. The gateway
// builds these from the registry and the approved manifests; they are never
// taken from a prompt.
type Capability struct {
	SkillKey string `json:"skill"`
	// SkillTrust is the trust of the root the skill is served from now;
	// ApprovedTrust the trust its manifest was approved under ("" when not
	// recorded). They must agree.
	SkillTrust    Trust `json:"trust"`
	ApprovedTrust Trust `json:"approvedTrust,omitempty"`
	// SkillTier is the skill's tier (1–3); InvokableBy the agent tiers that
	// may invoke it.
	SkillTier   int               `json:"tier"`
	InvokableBy []skill.AgentTier `json:"invokableBy"`
	SkillState  SkillState        `json:"state"`

	ExtensionID  string `json:"extensionId"`
	CapabilityID string `json:"capabilityId"`
	// Enabled is whether the approved manifest enables this capability.
	Enabled     bool        `json:"enabled"`
	RiskLevel   RiskLevel   `json:"riskLevel"`
	SideEffects SideEffects `json:"sideEffects"`
	DataEgress  DataEgress  `json:"dataEgress"`
	// Constraints are the manifest's constraints for this capability.
	Constraints constraint.Set `json:"constraints,omitzero"`
	// InputSchema is the approved JSON Schema of the call's arguments
	// (the broker checks every call against it before the policy
	// decides). `policy check` types context.args from it
	// ([ValidateArguments]); decisions do not read it.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// BlockedByDrift is set when the live tool no longer matches its
	// approved pin.
	BlockedByDrift bool `json:"blockedByDrift,omitempty"`
}

// Ref returns the capability's reference.
func (c Capability) Ref() CapabilityRef {
	return CapabilityRef{Skill: c.SkillKey, ExtensionID: c.ExtensionID, CapabilityID: c.CapabilityID}
}

// needsApproval reports whether a call needs a grant.
func (c Capability) needsApproval() bool {
	return c.RiskLevel == RiskDestructive || c.SideEffects == SideEffectsExternal || c.DataEgress == EgressNetwork
}

// CapabilityRef names a capability: the skill that declares it, the MCP
// server id in that skill's mcp.json, and the tool name. Server ids are
// chosen by each skill's author, so two skills may both name a server "fs"
// with a tool write_file: they are different capabilities, and a grant or
// a policy for one never covers the other.
type CapabilityRef struct {
	Skill        string `json:"skill"`
	ExtensionID  string `json:"extensionId"`
	CapabilityID string `json:"capabilityId"`
}

// String renders r as "skill:extensionId/capabilityId"
// ("acme/notes:fs/write_file"), the Cedar entity id of the capability. It
// parses back unambiguously ([ParseCapabilityRef]): a skill key has no ':'
// and a server id has neither ':' nor '/'.
func (r CapabilityRef) String() string { return r.Skill + ":" + r.ExtensionID + "/" + r.CapabilityID }

// Short renders r without its skill, "extensionId/capabilityId": the name
// of the tool inside its skill, and the short form the CLI accepts when
// only one installed skill offers it.
func (r CapabilityRef) Short() string { return r.ExtensionID + "/" + r.CapabilityID }

// refFormHelp is how every capability-reference error says what to write.
const refFormHelp = "write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file"

// ParseCapabilityRef parses "skill:extensionId/capabilityId": the skill is
// everything before the first ':', the extension id what follows up to the
// next '/', the capability id the rest. The short form "extensionId/
// capabilityId" is refused here, because it may name a capability of
// several skills; [Engine.ResolveCapability] accepts it when only one
// installed skill offers it.
func ParseCapabilityRef(s string) (CapabilityRef, error) {
	sk, rest, hasSkill := strings.Cut(s, ":")
	if !hasSkill {
		if ext, c, ok := strings.Cut(s, "/"); ok && ext != "" && c != "" {
			return CapabilityRef{}, fmt.Errorf("%w: capability %q does not name its skill (several skills may name a server %q): %s", ErrInvalidCapability, s, ext, refFormHelp)
		}
		return CapabilityRef{}, fmt.Errorf("%w: capability %q: %s", ErrInvalidCapability, s, refFormHelp)
	}
	ext, c, ok := strings.Cut(rest, "/")
	r := CapabilityRef{Skill: sk, ExtensionID: ext, CapabilityID: c}
	if !ok || sk == "" || ext == "" || c == "" || strings.Contains(ext, ":") {
		return CapabilityRef{}, fmt.Errorf("%w: capability %q: %s", ErrInvalidCapability, s, refFormHelp)
	}
	if err := r.validate(); err != nil {
		return CapabilityRef{}, err
	}
	return r, nil
}

// validate checks the parts of a reference: a skill key of 1 to 256
// characters without ':', '"' or control characters, an extension id of 1
// to 128 characters without '/' or ':', a capability id of 1 to 128
// characters.
func (r CapabilityRef) validate() error {
	switch {
	case r.Skill == "" || len(r.Skill) > 256 || strings.ContainsFunc(r.Skill, func(c rune) bool { return c == ':' || c == '"' || c < 0x20 || c == 0x7f }):
		return fmt.Errorf("%w: skill key %q: 1 to 256 characters without ':', '\"' or control characters", ErrInvalidCapability, r.Skill)
	case r.ExtensionID == "" || strings.ContainsAny(r.ExtensionID, "/:") || len(r.ExtensionID) > 128:
		return fmt.Errorf("%w: extensionId %q: 1 to 128 characters without '/' or ':'", ErrInvalidCapability, r.ExtensionID)
	case r.CapabilityID == "" || len(r.CapabilityID) > 128:
		return fmt.Errorf("%w: capabilityId %q: 1 to 128 characters", ErrInvalidCapability, r.CapabilityID)
	}
	return nil
}

// CapabilitySource supplies the registry's capability records, for
// [Engine.LoadCapabilities].
type CapabilitySource interface {
	Capabilities(ctx context.Context) ([]Capability, error)
}

// Capabilities is a fixed list of records; it implements
// [CapabilitySource].
type Capabilities []Capability

// Capabilities implements [CapabilitySource].
func (c Capabilities) Capabilities(context.Context) ([]Capability, error) { return c, nil }

// Principal is who acts. A sub-agent names its parent's ID in Parent and
// must have been registered with [Engine.Delegate].
type Principal struct {
	Tenant string          `json:"tenant"`
	Agent  string          `json:"agent"`
	Tier   skill.AgentTier `json:"tier"`
	Parent string          `json:"parent,omitempty"`
}

// ID is "tenant/agent", the Cedar entity id of the principal.
func (p Principal) ID() string { return p.Tenant + "/" + p.Agent }

// String renders the principal for logs: "tenant/agent@T3".
func (p Principal) String() string { return p.ID() + "@" + string(p.Tier) }

// Validate checks the principal's fields.
func (p Principal) Validate() error {
	switch {
	case p.Tenant == "" || hasByte(p.Tenant, '/', '"') || len(p.Tenant) > 64:
		return fmt.Errorf("%w: tenant %q: 1 to 64 characters without '/' or '\"'", ErrInvalidPrincipal, p.Tenant)
	case p.Agent == "" || len(p.Agent) > 128 || hasByte(p.Agent, '"', 0):
		return fmt.Errorf("%w: agent %q: 1 to 128 characters without '\"'", ErrInvalidPrincipal, p.Agent)
	case tierLevel(p.Tier) < 0:
		return fmt.Errorf("%w: tier %q: use one of T0, T1, T2, T3, T4", ErrInvalidPrincipal, p.Tier)
	case len(p.Parent) == len(p.Tenant)+1+len(p.Agent) && p.Parent == p.ID():
		return fmt.Errorf("%w: %s cannot be its own parent", ErrInvalidPrincipal, p.ID())
	}
	return nil
}

// hasByte reports whether s contains a or b (strings.ContainsAny for two
// ASCII bytes, without building a character set per call).
func hasByte(s string, a, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == a || s[i] == b {
			return true
		}
	}
	return false
}

// ParsePrincipalID parses `Agent::"tenant/agent"`, "tenant/agent" or a
// bare agent id (tenant "default") into a principal's tenant and agent.
func ParsePrincipalID(s string) (tenant, agent string, err error) {
	if rest, ok := strings.CutPrefix(s, "Agent::"); ok {
		u, err := strconv.Unquote(rest)
		if err != nil {
			return "", "", fmt.Errorf("%w: %s: write it as Agent::\"tenant/agent\"", ErrInvalidPrincipal, s)
		}
		s = u
	}
	tenant, agent, ok := strings.Cut(s, "/")
	if !ok {
		tenant, agent = "default", s
	}
	if tenant == "" || agent == "" {
		return "", "", fmt.Errorf("%w: %q: write it as tenant/agent", ErrInvalidPrincipal, s)
	}
	return tenant, agent, nil
}

// tierLevel is 0 for T0 … 4 for T4, -1 when unknown.
func tierLevel(t skill.AgentTier) int {
	i := slices.Index(skill.AllAgentTiers, t)
	return i
}

// Effect is a decision's outcome.
type Effect string

// The effects.
const (
	Allow           Effect = "allow"
	Deny            Effect = "deny"
	RequireApproval Effect = "require_approval"
)

// ReasonKind says which check produced a [Reason].
type ReasonKind string

// The reason kinds, in decision order.
const (
	ReasonTrust      ReasonKind = "trust_mismatch"
	ReasonBlocked    ReasonKind = "blocked"
	ReasonEmptyScope ReasonKind = "empty_scope"
	ReasonOutOfScope ReasonKind = "out_of_scope"
	ReasonPolicy     ReasonKind = "policy"
	ReasonConstraint ReasonKind = "constraint"
	ReasonRateLimit  ReasonKind = "rate_limit"
	ReasonApproval   ReasonKind = "approval"
	ReasonGrant      ReasonKind = "grant"
)

// Reason is one thing that decided a [Decision].
type Reason struct {
	Kind ReasonKind `json:"kind"`
	// Policy is the deciding policy's id (its @id, else file:line) for
	// policy reasons, and the policy whose @constraints were broken for
	// constraint reasons ("manifest" for the manifest's).
	Policy string `json:"policy,omitempty"`
	// Position is the policy's file:line.
	Position string `json:"position,omitempty"`
	// Constraint and Arg name the broken constraint field and argument.
	Constraint string `json:"constraint,omitempty"`
	Arg        string `json:"arg,omitempty"`
	// Grant is the id of the grant that allowed the call.
	Grant   string `json:"grant,omitempty"`
	Message string `json:"message"`
}

// Decision is the outcome of [Engine.Evaluate].
type Decision struct {
	Effect  Effect   `json:"effect"`
	Reasons []Reason `json:"reasons"`
}

// TestReport is a replayed request with its decision: the JSON of
// `skillgate policy test --json` and of POST /v1/policy/test.
type TestReport struct {
	Principal  Principal      `json:"principal"`
	Capability string         `json:"capability"`
	Args       map[string]any `json:"args"`
	Decision
}

type sessionKey struct{}

// WithSession returns a context carrying the session id, which Evaluate
// passes to Cedar as context.session.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}
