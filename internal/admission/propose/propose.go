package propose

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// Tool is one tool that MCP introspection reported for the skill: the whole
// universe a proposal may choose from.
type Tool struct {
	// ExtensionID is the MCP server id declared in the skill's mcp.json.
	ExtensionID string
	// CapabilityID is the tool name as the server reported it.
	CapabilityID string
	// Title and Description are the server's words for the tool. They are
	// shown to a model (shortened) and never trusted.
	Title       string
	Description string
	// InputSchema is the tool's input JSON Schema as received; a model sees
	// only a summary of its properties.
	InputSchema json.RawMessage
}

// Input is what a proposer works from: one skill's SKILL.md and the tools its
// servers offer.
type Input struct {
	// Skill is the skill's identity (category/name), shown to a model.
	Skill string
	// SkillMD is the whole SKILL.md, frontmatter included.
	SkillMD []byte
	// AllowedTools is the skill's allowed-tools list as parsed by package
	// skill (skill.Skill.AllowedTools): one entry per space-separated item.
	AllowedTools []string
	// Tools is the introspected tool inventory.
	Tools []Tool
}

// Item is one proposed capability: a tool the skill needs.
type Item struct {
	// ExtensionID and CapabilityID name the tool.
	ExtensionID  string `json:"extensionId"`
	CapabilityID string `json:"capabilityId"`
	// Reason says why the tool was picked, for the human who approves it.
	Reason string `json:"reason,omitempty"`
	// Constraints optionally narrows how the tool may be used. Its format
	// belongs to the constraint parser the caller passes to [Validate].
	Constraints json.RawMessage `json:"constraints,omitempty"`
}

// Proposal is a draft manifest: the capabilities a skill is proposed to
// need. It is what manifest.proposed.json records; a human approves it.
type Proposal struct {
	// Proposer is "deterministic" or "llm:<model>".
	Proposer string `json:"proposer"`
	// Capabilities are the proposed tools, sorted by extensionId, then
	// capabilityId, once [Validate] has run.
	Capabilities []Item `json:"capabilities"`
	// PolicyHints are the proposer's non-authoritative suggestions for the
	// approver (from a model: a list of short sentences). Policy never
	// reads them.
	PolicyHints json.RawMessage `json:"policyHints,omitempty"`
	// Raw is the model's structured output byte for byte, kept for
	// traceability. It is evidence, not data: nothing reads capabilities,
	// constraints or risk from it, and [Validate] reports what it held that
	// the proposal does not carry.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// Proposer drafts a proposal for one skill. Implementations must be safe for
// concurrent use and must not retain in.
type Proposer interface {
	// Propose returns a draft that the caller must pass to [Validate]
	// before showing or storing it as trusted.
	Propose(ctx context.Context, in Input) (*Proposal, error)
}

// Proposer names.
const (
	// ProposerDeterministic is the Proposer field of a [Deterministic]
	// proposal.
	ProposerDeterministic = "deterministic"
	// ProposerLLMPrefix prefixes the model name in the Proposer field of an
	// [OpenAI] proposal.
	ProposerLLMPrefix = "llm:"
)

// Correction kinds: the closed set of Correction.Kind values.
const (
	// KindInventedCapability: the item names a tool introspection did not
	// report; the item was dropped.
	KindInventedCapability = "invented_capability"
	// KindRiskFieldRemoved: the proposer stated risk metadata (riskLevel,
	// sideEffects, dataEgress, annotations, …); it was removed.
	KindRiskFieldRemoved = "risk_field_removed"
	// KindBadConstraints: the item's constraints did not parse; they were
	// dropped and the item kept without them.
	KindBadConstraints = "bad_constraints"
	// KindDuplicate: the tool was proposed more than once; the first
	// occurrence was kept.
	KindDuplicate = "duplicate"
	// KindUnknownField: the model's output held a field the proposal format
	// does not have; it was ignored.
	KindUnknownField = "unknown_field"
)

// Correction is one change [Validate] made to a proposal, for the install
// report: nothing is dropped silently.
type Correction struct {
	// Kind is one of the Kind* constants.
	Kind string `json:"kind"`
	// ExtensionID and CapabilityID name the item concerned; empty for a
	// correction to the proposal as a whole.
	ExtensionID  string `json:"extensionId,omitempty"`
	CapabilityID string `json:"capabilityId,omitempty"`
	// Field is the JSON path of the field concerned, relative to the item
	// (or to the proposal when the ids are empty), e.g. "riskLevel" or
	// "constraints.pathGlobs".
	Field string `json:"field,omitempty"`
	// Detail says what was wrong, e.g. the parser's message.
	Detail string `json:"detail,omitempty"`
}

// ToolsFromCapabilities converts introspected capabilities into the tool
// inventory of an [Input], keeping the order.
func ToolsFromCapabilities(caps []mcpclient.Capability) []Tool {
	tools := make([]Tool, 0, len(caps))
	for _, c := range caps {
		tools = append(tools, Tool{
			ExtensionID:  c.ExtensionID,
			CapabilityID: c.CapabilityID,
			Title:        c.Title,
			Description:  c.Description,
			InputSchema:  c.InputSchema,
		})
	}
	return tools
}

// toolKey identifies a tool.
type toolKey struct{ ext, cap string }

// compareKey orders tools by extensionId, then capabilityId.
func compareKey(a, b toolKey) int {
	if c := strings.Compare(a.ext, b.ext); c != 0 {
		return c
	}
	return strings.Compare(a.cap, b.cap)
}

// sortItems sorts items by extensionId, then capabilityId.
func sortItems(items []Item) {
	slices.SortStableFunc(items, func(a, b Item) int {
		return compareKey(toolKey{a.ExtensionID, a.CapabilityID}, toolKey{b.ExtensionID, b.CapabilityID})
	})
}

// inventory returns the distinct tools of in, sorted, skipping tools without
// an id.
func inventory(tools []Tool) []Tool {
	seen := make(map[toolKey]bool, len(tools))
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		k := toolKey{t.ExtensionID, t.CapabilityID}
		if k.ext == "" || k.cap == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(a, b Tool) int {
		return compareKey(toolKey{a.ExtensionID, a.CapabilityID}, toolKey{b.ExtensionID, b.CapabilityID})
	})
	return out
}
