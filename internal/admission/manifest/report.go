package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// Report is install_report.json: everything skillgate learned and decided
// while installing one skill version, for the reviewer and for audit. It
// never holds a secret: declarations are redacted and credential references
// appear by name only.
type Report struct {
	Schema  string `json:"$schema"`
	SkillID string `json:"skillId"`
	Version string `json:"version"`
	// Skill summarises SKILL.md as validated (lenient mode).
	Skill SkillSummary `json:"skill"`
	// Servers holds one introspection result per declared server, by id.
	Servers []ServerResult `json:"servers"`
	// Capabilities holds every introspected tool, sorted by name, with its
	// server-stated and effective risk and its status.
	Capabilities []CapabilityReport `json:"capabilities"`
	// Proposal is what the proposer suggested and what validation corrected.
	Proposal ProposalReport `json:"proposal"`
	// Validation is the verdict: blocked or ready for approval, and why.
	Validation Validation `json:"validation"`
	// Overrides are the operator's completions and overrides, in order.
	Overrides []Override `json:"overrides"`
	// Settings are the operator's constraints and call approval defaults
	// of the approved capabilities, set at approval, by capability.
	Settings []Setting `json:"approvalSettings,omitempty"`
	// Pins are the approved pins per server id; set at approval.
	Pins map[string]capability.PinSet `json:"pins,omitempty"`
	// Drift lists the drift found after approval, oldest first.
	Drift []DriftRecord `json:"drift,omitempty"`
	// PublishedSkills are the skills the servers publish through the MCP
	// Skills extension, verified at analysis, by server then URI.
	PublishedSkills []PublishedSkill `json:"publishedSkills,omitempty"`
	// AnalyzedAt is when introspection ran.
	AnalyzedAt time.Time `json:"analyzedAt"`
	// Scan is admission layer 4: the content scanner's findings.
	Scan *ScanReport `json:"scan,omitempty"`
	// Suppressions are the operator's suppressions of findings, in order.
	Suppressions []Suppression `json:"suppressions,omitempty"`
	// Layers are the seven admission layers' verdicts and evidence.
	Layers []Layer `json:"layers,omitempty"`
	// Backends is admission layer 3's check of the skill's backends.yaml
	// against the tools its servers offered; nil when it has none (or
	// for a report analysed before the check existed).
	Backends *BackendsCheck `json:"backends,omitempty"`
}

// BackendsCheck is what layer 3 found of a provider skill's backends.yaml:
// its provider and the tools it maps when it compiles, else the error that
// blocks the install (the file, the backend, the argument and the fix).
type BackendsCheck struct {
	Provider string `json:"provider,omitempty"`
	// Maps lists the tools its backends map, as "server/tool" with the
	// executor each serves ("server/tool=executor"), in file order.
	Maps []string `json:"maps"`
	// Unchecked names the servers whose backends were not compiled: they
	// could not be introspected, so their tools are unknown (the server's
	// failure blocks the skill on its own).
	Unchecked []string `json:"unchecked,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// SkillSummary is what SKILL.md says about the skill.
type SkillSummary struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Category     string   `json:"category,omitempty"`
	Tier         int      `json:"tier"`
	InvokableBy  []string `json:"invokableBy"`
	AllowedTools []string `json:"allowedTools,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
}

// ServerResult is the introspection of one declared server.
type ServerResult struct {
	ServerID    string                    `json:"serverId"`
	Declaration capability.RedactedServer `json:"declaration"`
	// Grants are the host paths the declaration grants a stdio server in
	// its sandbox at call time, with their access (package sandbox,
	// Grants): what an approval gives it. Empty where nothing is confined.
	Grants []capability.Grant `json:"grants,omitempty"`
	// Error is set when the server could not be introspected; its
	// capabilities are then unknown and the skill is blocked.
	Error           *ServerFailure             `json:"error,omitempty"`
	Server          *capability.ServerIdentity `json:"serverInfo,omitempty"`
	ProtocolVersion string                     `json:"protocolVersion,omitempty"`
	// RawToolsList holds every tools/list page exactly as received.
	RawToolsList []capability.RawPage `json:"rawToolsList,omitempty"`
	// Pins pins every tool offered at analysis; approval selects from it.
	Pins      *capability.PinSet `json:"introspectedPins,omitempty"`
	ElapsedMS float64            `json:"elapsedMs"`
	// SkillsExtension is set when the server declared the MCP Skills
	// extension; SkillsError when listing its skills failed.
	SkillsExtension bool   `json:"skillsExtension,omitempty"`
	SkillsError     string `json:"skillsError,omitempty"`
}

// ServerFailure is why a server could not be introspected.
type ServerFailure struct {
	// Phase is "credentials", "grants" (a path of the declaration would
	// expose a hidden one), "start", "initialize" or "tools/list".
	Phase   string `json:"phase"`
	Message string `json:"message"`
	// Stderr is the tail of what a stdio server that exited wrote to its
	// stderr, as written (bounded by mcpclient.Limits.MaxStderrBytes);
	// Message quotes it on one line.
	Stderr string `json:"stderr,omitempty"`
}

// Status values of a capability in a report.
const (
	// StatusReady: complete metadata, no problem; may be approved.
	StatusReady = "ready"
	// StatusBlocked: missing metadata or a problem; see Blockers.
	StatusBlocked = "blocked"
)

// CapabilityReport is one introspected tool.
type CapabilityReport struct {
	// Tool is the tool's identity and definition as introspected.
	capability.Tool
	// ServerRisk is what the server stated (derived by the MCP client from the tool definition).
	ServerRisk capability.Risk `json:"serverRisk"`
	// Risk is the effective metadata: the server's, completed or overridden
	// by the operator (source "operator").
	Risk capability.Risk `json:"risk"`
	// Conflicts are _meta values below what the annotations imply.
	Conflicts []capability.RiskConflict `json:"conflicts,omitempty"`
	Problems  []capability.Problem      `json:"problems,omitempty"`
	// Proposed is whether the (validated) proposal includes it.
	Proposed bool   `json:"proposed"`
	Status   string `json:"status"`
	// Blockers say why a blocked capability cannot be approved as is.
	Blockers []string `json:"blockers,omitempty"`
	Pin      string   `json:"pin,omitempty"`
}

// ProposalReport records the proposal and its corrections.
type ProposalReport struct {
	// Proposer names who proposed: "deterministic" or "llm:<model>".
	Proposer string `json:"proposer"`
	// Capabilities are the proposed capability names after validation.
	Capabilities []string `json:"capabilities"`
	// Items are the validated proposal items: why each was picked and its
	// constraints.
	Items []ProposedItem `json:"items"`
	// PolicyHints are the proposer's non-authoritative hints, validated.
	PolicyHints json.RawMessage `json:"policyHints,omitempty"`
	// Corrections are what validation removed or fixed, one per finding.
	Corrections []Correction `json:"corrections"`
	// Error is set when the proposer failed; the deterministic proposal was
	// used instead.
	Error string `json:"error,omitempty"`
}

// ProposedItem is one validated proposal item.
type ProposedItem struct {
	ExtensionID  string          `json:"extensionId"`
	CapabilityID string          `json:"capabilityId"`
	Reason       string          `json:"reason,omitempty"`
	Constraints  json.RawMessage `json:"constraints,omitempty"`
}

// Correction is one change validation made to a proposal.
type Correction struct {
	Kind       string `json:"kind"`
	Capability string `json:"capability,omitempty"`
	Message    string `json:"message"`
}

// Validation is the verdict of deterministic validation.
type Validation struct {
	// Blocked is true when no approval is possible until the reasons are
	// resolved (approve --only may still approve the ready capabilities).
	Blocked bool     `json:"blocked"`
	Reasons []string `json:"reasons"`
}

// Setting is what an operator decided for one capability at approval
// (skillgate approve --constraints, --approval): its constraints, which
// replace the proposal's, and its call approval default. A setting made
// for an earlier approved version of the skill is carried to the next
// one (From names that version) until the operator changes it.
type Setting struct {
	// Capability is "serverId/tool".
	Capability string `json:"capability"`
	// Constraints are the capability's constraints (a constraint set);
	// nil keeps the proposal's, JSON null or {} removes them.
	Constraints json.RawMessage `json:"constraints,omitempty"`
	// CallApproval is the default; "" leaves it by risk.
	CallApproval capability.CallApproval `json:"callApproval,omitempty"`
	By           string                  `json:"by,omitempty"`
	At           time.Time               `json:"at,omitzero"`
	// From is the version digest the setting was carried from.
	From string `json:"from,omitempty"`
}

// Override is one operator-supplied risk field.
type Override struct {
	Capability string `json:"capability"`
	Field      string `json:"field"`
	Value      string `json:"value"`
	// ServerValue is what the server stated, empty when it stated nothing.
	ServerValue  string            `json:"serverValue,omitempty"`
	ServerSource capability.Source `json:"serverSource,omitempty"`
	Why          string            `json:"why"`
	By           string            `json:"by"`
	At           time.Time         `json:"at"`
	// Forced marks a value below what the server declared (--force).
	Forced bool `json:"forced,omitempty"`
}

// DriftRecord is drift found after approval.
type DriftRecord struct {
	ServerID string           `json:"serverId"`
	At       time.Time        `json:"at"`
	By       string           `json:"by"`
	Drift    capability.Drift `json:"drift"`
	// Blocked are the approved capabilities the drift blocked.
	Blocked []string `json:"blocked"`
	// Skills is drift of published skills (ServerID's); their refs are
	// in Blocked too.
	Skills []SkillDrift `json:"skills,omitempty"`
}

// ParseReport reads an install report strictly.
func ParseReport(data []byte) (*Report, error) {
	var r Report
	if err := decodeStrict(data, MaxReportBytes, &r); err != nil {
		return nil, fmt.Errorf("%w: install report: %w", ErrInvalid, err)
	}
	if r.Schema != SchemaReport {
		return nil, fmt.Errorf("%w: install report: $schema is %q; want %q", ErrInvalid, r.Schema, SchemaReport)
	}
	if !strings.HasPrefix(r.Version, "sha256:") {
		return nil, fmt.Errorf("%w: install report: version %q is not a sha256: digest", ErrInvalid, r.Version)
	}
	if len(r.Capabilities) > MaxCapabilities*capability.MaxServers {
		return nil, fmt.Errorf("%w: install report: %d capabilities", ErrInvalid, len(r.Capabilities))
	}
	for i, c := range r.Capabilities {
		if err := c.Risk.Check(); err != nil {
			return nil, fmt.Errorf("%w: install report: capabilities[%d] (%s): %v", ErrInvalid, i, c.Name(), err)
		}
		if err := c.ServerRisk.Check(); err != nil {
			return nil, fmt.Errorf("%w: install report: capabilities[%d] (%s): serverRisk: %v", ErrInvalid, i, c.Name(), err)
		}
	}
	for id, p := range r.Pins {
		if err := p.Verify(); err != nil {
			return nil, fmt.Errorf("%w: install report: pins[%s]: %w", ErrInvalid, id, err)
		}
	}
	return &r, nil
}
