// Package manifest defines the install artefacts of an imported skill
// version: the proposed manifest (manifest.proposed.json), the approved
// manifest (manifest.json, the runtime's source of truth for what a skill may
// call) and the install report (install_report.json: introspection, validation,
// corrections, operator overrides and pins). It marshals them
// deterministically and parses them back strictly, because a file in managed
// storage is still input that someone could have edited.
package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// Schema identifiers, written into each artefact's "$schema" field. The
// schemas themselves are in docs/schemas/ of the skillgate repository.
const (
	SchemaManifest = "https://skillgate.dev/schemas/manifest.v1.json"
	SchemaReport   = "https://skillgate.dev/schemas/install_report.v1.json"
)

// File names of the artefacts in a skill version's managed directory.
const (
	FileProposed = "manifest.proposed.json"
	FileApproved = "manifest.json"
	FileReport   = "install_report.json"
)

// Bounds on parsing an artefact. Reports carry raw tools/list pages, which
// mcpclient bounds at 8 MiB per server.
const (
	MaxManifestBytes = 16 << 20
	MaxReportBytes   = 64 << 20
	MaxCapabilities  = 4096
)

// ErrInvalid means an artefact does not parse or breaks a rule of its
// schema; the message names the field.
var ErrInvalid = errors.New("invalid artefact")

// Manifest is a skill version's capability manifest. The proposed manifest
// may carry capabilities with unknown risk fields; the approved one never
// does, and carries Approval.
type Manifest struct {
	Schema string `json:"$schema"`
	// SkillID is the skill's identity ("category/name" or "name").
	SkillID string `json:"skillId"`
	// Version is the content digest of the skill tree ("sha256:…").
	Version string `json:"version"`
	// VersionLabel is the semver label from SKILL.md, if any.
	VersionLabel string `json:"versionLabel,omitempty"`
	// Providers are the MCP servers the capabilities come from.
	Providers []Provider `json:"providers"`
	// Capabilities are sorted by extensionId, then capabilityId.
	Capabilities []Capability `json:"capabilities"`
	// Approval is set in the approved manifest only.
	Approval *Approval `json:"approval,omitempty"`
	// PublishedSkills are the approved skills the servers publish through
	// the MCP Skills extension, each bound to its files (SetDigest) and
	// served onwards at its Path; approved manifests only.
	PublishedSkills []PublishedSkill `json:"publishedSkills,omitempty"`
	// DefaultPolicyHints are the proposer's notes for the operator (a JSON
	// array of strings), kept with the approval for whoever reads the
	// manifest later. They are not authoritative: nothing at run time
	// reads them.
	DefaultPolicyHints json.RawMessage `json:"defaultPolicyHints,omitempty"`
}

// Provider is one MCP server a manifest's capabilities come from.
type Provider struct {
	// Type is always "mcp".
	Type string `json:"type"`
	// ServerID is the id under mcpServers in mcp.json (the extensionId).
	ServerID string `json:"serverId"`
	// Server is the name and version the server reported, when it answered.
	Server *capability.ServerIdentity `json:"server,omitempty"`
	// PinDigest identifies the approved pin set (capability.PinSet.Digest);
	// approved manifests only.
	PinDigest string `json:"pinDigest,omitempty"`
}

// Capability is one approved (or proposed) MCP tool with its risk metadata.
type Capability struct {
	ExtensionID  string `json:"extensionId"`
	CapabilityID string `json:"capabilityId"`
	// ToolName is the name agents see the capability under, fixed at
	// approval and kept while the skill is approved, whatever other skills
	// come and go ("" in manifests approved before names were fixed: the
	// gateway then names it as it always did). ToolNameReason says why it
	// is not the tool's own name (the clash resolved at approval).
	ToolName       string `json:"toolName,omitempty"`
	ToolNameReason string `json:"toolNameReason,omitempty"`
	Title          string `json:"title,omitempty"`
	// Description is what agents are told the tool does, for a manifest
	// shipped with a first_party skill (whose tools are not pinned from an
	// introspection); an imported skill's comes from its pinned tool.
	Description  string          `json:"description,omitempty"`
	Risk         capability.Risk `json:"risk"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Constraints restrict the calls (domains, paths, argument values,
	// rate limit; package constraint): the operator's at approval when
	// set (recorded in the install report's approvalSettings), else the
	// proposal's, as validated; nil when none.
	Constraints json.RawMessage `json:"constraints,omitempty"`
	// CallApproval is when its calls need a human's grant, as approved:
	// "always" or "never"; absent is by risk.
	CallApproval capability.CallApproval `json:"callApproval,omitempty"`
	// Rationale is why the proposer mapped the skill to this capability.
	Rationale string `json:"rationale,omitempty"`
}

// Name returns "extensionId/capabilityId", the name operators type.
func (c Capability) Name() string { return c.ExtensionID + "/" + c.CapabilityID }

// Approval records who approved a manifest, when, and which capabilities.
type Approval struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
	// Only is set when the operator approved a subset of the proposal.
	Only []string `json:"only,omitempty"`
	// Trust is the trust the manifest was approved for: imported for an
	// operator's approval of an install, first_party for a manifest shipped
	// with a first_party skill. A skill served at another trust is refused
	// (trust_mismatch) until approved again. Empty in manifests approved
	// before trust was recorded: imported.
	Trust capability.Trust `json:"trust,omitempty"`
}

// Marshal renders v (a *Manifest or *Report) as compact JSON with a final
// newline, HTML escaping off. It does not indent: pins embed each tool's
// RFC 8785 canonical JSON, which must stay byte for byte as hashed. Slices
// are marshalled in the order the producers keep them (sorted), so equal
// content gives equal bytes.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Parse reads a manifest strictly: at most MaxManifestBytes of UTF-8, one
// JSON value, keys spelt exactly as the schema does (case-sensitive), no
// unknown field, no key twice, and every rule Validate checks.
func Parse(data []byte) (*Manifest, error) {
	var m Manifest
	if err := decodeStrict(data, MaxManifestBytes, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %w", ErrInvalid, err)
	}
	if err := m.Validate(m.Approval != nil); err != nil {
		return nil, err
	}
	return &m, nil
}

// validToolName reports whether n can be an MCP tool name as agents see
// it: 1 to 128 of [A-Za-z0-9_.-].
func validToolName(n string) bool {
	if len(n) == 0 || len(n) > 128 {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// Validate checks a manifest's invariants. approved requires every risk
// field known and Approval set.
func (m *Manifest) Validate(approved bool) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: manifest: "+format, append([]any{ErrInvalid}, args...)...)
	}
	if m.Schema != SchemaManifest {
		return bad("$schema is %q; want %q", m.Schema, SchemaManifest)
	}
	if m.SkillID == "" {
		return bad("skillId is empty")
	}
	if !strings.HasPrefix(m.Version, "sha256:") {
		return bad("version %q is not a sha256: digest", m.Version)
	}
	if len(m.Capabilities) > MaxCapabilities {
		return bad("%d capabilities, more than %d", len(m.Capabilities), MaxCapabilities)
	}
	servers := map[string]bool{}
	for i, p := range m.Providers {
		if p.Type != "mcp" {
			return bad("providers[%d].type is %q; want \"mcp\"", i, p.Type)
		}
		if p.ServerID == "" || servers[p.ServerID] {
			return bad("providers[%d].serverId %q is empty or repeated", i, p.ServerID)
		}
		servers[p.ServerID] = true
	}
	prev := ""
	toolNames := map[string]string{}
	for i, c := range m.Capabilities {
		name := c.Name()
		if c.ExtensionID == "" || c.CapabilityID == "" {
			return bad("capabilities[%d]: extensionId and capabilityId are required", i)
		}
		if !servers[c.ExtensionID] {
			return bad("capabilities[%d] (%s): no provider with serverId %q", i, name, c.ExtensionID)
		}
		if name <= prev {
			return bad("capabilities[%d] (%s): not sorted or repeated", i, name)
		}
		prev = name
		if c.ToolName != "" && !validToolName(c.ToolName) {
			return bad("capabilities[%d] (%s): toolName %q: use 1 to 128 letters, digits, '_', '-' or '.'", i, name, c.ToolName)
		}
		if c.ToolName != "" {
			if other, ok := toolNames[c.ToolName]; ok {
				return bad("capabilities[%d] (%s): toolName %q is also %s's", i, name, c.ToolName, other)
			}
			toolNames[c.ToolName] = name
		}
		if err := c.Risk.Check(); err != nil {
			return bad("capabilities[%d] (%s): %v", i, name, err)
		}
		if approved && len(c.Risk.Unknown()) > 0 {
			return bad("capabilities[%d] (%s): approved with unknown %s", i, name, strings.Join(c.Risk.Unknown(), ", "))
		}
		if a, err := capability.ParseCallApproval(string(c.CallApproval)); err != nil || a == capability.CallApprovalByRisk && c.CallApproval != "" {
			return bad("capabilities[%d] (%s): callApproval %q: use always or never, or leave it out for by-risk", i, name, c.CallApproval)
		}
	}
	if approved && m.Approval == nil {
		return bad("approval is missing")
	}
	if a := m.Approval; a != nil && a.Trust != "" && a.Trust != capability.TrustFirstParty && a.Trust != capability.TrustImported {
		return bad("approval.trust %q: use first_party or imported", m.Approval.Trust)
	}
	return nil
}

// decodeStrict decodes one JSON value into v with [strictjson.Decode]:
// keys matched case-sensitively, unknown fields and repeated keys refused,
// no trailing data, valid UTF-8, at most max bytes.
func decodeStrict(data []byte, max int, v any) error {
	if len(data) > max {
		return fmt.Errorf("%d bytes, more than %d", len(data), max)
	}
	return strictjson.Decode(data, v, strictjson.DefaultMaxDepth)
}

// Networked reports whether an approved capability of serverID declares
// dataEgress network: only then does a confined server share the host's
// network, at call time and when a recheck runs it as calls do.
func (m *Manifest) Networked(serverID string) bool {
	for _, c := range m.Capabilities {
		if c.ExtensionID == serverID && c.Risk.DataEgress.Value == capability.EgressNetwork {
			return true
		}
	}
	return false
}
