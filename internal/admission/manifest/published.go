package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Status values of a published skill in a report.
const (
	// SkillReady: verified; approval serves it onwards.
	SkillReady = "ready"
	// SkillDynamic: it lists no files ("dynamic"), so nothing can be
	// verified or bound; approval leaves it out unless the operator
	// allows it explicitly.
	SkillDynamic = "dynamic"
	// SkillBlocked: it failed verification or breaks a rule; see
	// Problems. It cannot be approved.
	SkillBlocked = "blocked"
)

// PublishedSkill is one skill an MCP server of the install publishes
// through the MCP Skills extension (SEP-2640), as introspection listed and
// verified it: in the install report (every skill listed) and in the
// approved manifest (those approved, bound to their files).
type PublishedSkill struct {
	// ServerID is the server (mcp.json id) that publishes it.
	ServerID string `json:"serverId"`
	// URI is the upstream URI of its SKILL.md: its identity within the
	// server.
	URI string `json:"uri"`
	// Name and Description are from its frontmatter.
	Name        string `json:"name"`
	Description string `json:"description"`
	// Frontmatter is the entry's frontmatter, verbatim.
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Resources are its files as listed, sorted by URI; nil when the
	// entry lists "dynamic".
	Resources []SkillResource `json:"resources,omitempty"`
	// Dynamic is set when the entry lists "dynamic" instead of files.
	Dynamic bool `json:"dynamic,omitempty"`
	// SetDigest identifies Resources: what an approval binds to (see
	// [ResourceSetDigest]); empty when Dynamic.
	SetDigest string `json:"setDigest,omitempty"`
	// AllowedTools is what its frontmatter's allowed-tools asks for.
	// skillgate never acts on it unless ToolsApproved.
	AllowedTools []string `json:"allowedTools,omitempty"`
	// Status is SkillReady, SkillDynamic or SkillBlocked.
	Status string `json:"status"`
	// Problems say why it is blocked.
	Problems []string `json:"problems,omitempty"`
	// Path is the skill path skillgate serves it at
	// (mcp~<install>/<server>/<upstream skill path>); approved
	// manifests only.
	Path string `json:"path,omitempty"`
	// DynamicAllowed records that an operator approved a dynamic skill
	// explicitly (approve --allow-dynamic); approved manifests only.
	DynamicAllowed bool `json:"dynamicAllowed,omitempty"`
	// ToolsApproved records that an operator approved its allowed-tools
	// (approve --allow-tools); approved manifests only.
	ToolsApproved bool `json:"toolsApproved,omitempty"`
}

// SkillResource is one file of a published skill: its upstream URI, the
// SHA-256 of its bytes ("sha256:<64 lowercase hex>") and their length.
type SkillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Ref names the skill in commands and blocked lists: "serverId/uri".
func (p PublishedSkill) Ref() string { return p.ServerID + "/" + p.URI }

// Find returns the resource listed at uri.
func (p PublishedSkill) Find(uri string) (SkillResource, bool) {
	for _, r := range p.Resources {
		if r.URI == uri {
			return r, true
		}
	}
	return SkillResource{}, false
}

// ResourceSetDigest is the digest an approval of a published skill binds
// to: SHA-256 over its files sorted by URI, each written as
// "<uri>\x00<digest>\x00<size>\n", as "sha256:<hex>". Any file added,
// removed, rotated or resized changes it.
func ResourceSetDigest(rs []SkillResource) string {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b SkillResource) int { return strings.Compare(a.URI, b.URI) })
	h := sha256.New()
	for _, r := range sorted {
		fmt.Fprintf(h, "%s\x00%s\x00%d\n", r.URI, r.Digest, r.Size)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// SkillDrift is a difference between an approved published skill and what
// its server publishes now.
type SkillDrift struct {
	// Skill is the skill's Ref ("serverId/uri").
	Skill string `json:"skill"`
	// Reason says what differs.
	Reason string `json:"reason"`
}
