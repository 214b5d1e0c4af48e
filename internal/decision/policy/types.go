package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// Trust is how much a skill's code is trusted, assigned by the root it
// comes from: [capability.Trust], named here for the records policy reads.
type Trust = capability.Trust

// The trust levels (see [capability.Trust]).
const (
	TrustCore       = capability.TrustCore
	TrustFirstParty = capability.TrustFirstParty
	TrustImported   = capability.TrustImported
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
	Enabled     bool                   `json:"enabled"`
	RiskLevel   capability.RiskLevel   `json:"riskLevel"`
	SideEffects capability.SideEffects `json:"sideEffects"`
	DataEgress  capability.DataEgress  `json:"dataEgress"`
	// Constraints are the manifest's constraints for this capability.
	Constraints constraint.Set `json:"constraints,omitzero"`
	// Approval is when its calls need a grant, as approved ("" by risk).
	Approval capability.CallApproval `json:"approval,omitempty"`
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
func (c Capability) Ref() capability.Ref {
	return capability.Ref{Skill: c.SkillKey, ExtensionID: c.ExtensionID, CapabilityID: c.CapabilityID}
}

// needsApproval reports whether a call needs a grant: by the approved
// call approval default ([capability.CallApproval.NeedsGrant]).
func (c Capability) needsApproval() bool {
	return c.Approval.NeedsGrant(c.RiskLevel, c.SideEffects, c.DataEgress)
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

// ParsePrincipalID parses `Agent::"tenant/agent"`, "tenant/agent" or a
// bare agent id (tenant "default") into a principal's tenant and agent,
// checked by [capability.Principal.Validate]'s rules ([capability.ParseID]).
func ParsePrincipalID(s string) (tenant, agent string, err error) {
	if rest, ok := strings.CutPrefix(s, "Agent::"); ok {
		u, err := strconv.Unquote(rest)
		if err != nil {
			return "", "", fmt.Errorf("%w: %s: write it as Agent::\"tenant/agent\"", ErrInvalidPrincipal, s)
		}
		s = u
	}
	if !strings.Contains(s, "/") {
		s = "default/" + s
	}
	return capability.ParseID(s)
}

// tierLevel is 0 for T0 … 4 for T4, -1 when unknown.
func tierLevel(t skill.AgentTier) int {
	i := slices.Index(skill.AllAgentTiers, t)
	return i
}

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
	Effect  capability.Effect `json:"effect"`
	Reasons []Reason          `json:"reasons"`
}

// TestReport is a replayed request with its decision: the JSON of
// `skillgate policy test --json` and of POST /v1/policy/test.
type TestReport struct {
	Principal  capability.Principal `json:"principal"`
	Capability string               `json:"capability"`
	Args       map[string]any       `json:"args"`
	Decision
}

type sessionKey struct{}

type executorKey struct{}

type accountKey struct{}

// WithAccount returns a context carrying the account label of the
// connection a call uses (docs/connections.md), which Evaluate passes to
// Cedar as context.account: a policy may forbid one account of a provider
// to some agents.
func WithAccount(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, accountKey{}, label)
}

// WithExecutor returns a context carrying the executor a call was routed
// from (docs/executors.md), which Evaluate passes to Cedar as
// context.executor: a policy may then treat `create_issue` on any provider
// alike, or one provider's capabilities differently.
func WithExecutor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, executorKey{}, name)
}

// WithSession returns a context carrying the session id, which Evaluate
// passes to Cedar as context.session.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// WriteText writes the decision for a human, as 'skillgate policy test'
// prints it: the principal p asking, the capability and the effect, one
// line per reason (with the policy's position), and, when grant is not
// empty, the command that approves one call.
func (r *TestReport) WriteText(w io.Writer, p capability.Principal, grant string) {
	fmt.Fprintf(w, "%s %s → %s\n", p, r.Capability, r.Effect)
	for _, rs := range r.Reasons {
		where := ""
		if rs.Position != "" {
			where = " (" + rs.Position + ")"
		}
		fmt.Fprintf(w, "  %s: %s%s\n", rs.Kind, rs.Message, where)
	}
	if grant != "" {
		fmt.Fprintf(w, "  approve one call with: %s\n", grant)
	}
}
