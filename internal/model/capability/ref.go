package capability

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidRef means a capability reference is malformed; the message
// names the part at fault and how to write it.
var ErrInvalidRef = errors.New("invalid capability")

// Ref names a capability: the skill that declares it, the MCP server id in
// that skill's mcp.json (the extensionId), and the tool name (the
// capabilityId). Server ids are chosen by each skill's author, so two
// skills may both name a server "fs" with a tool write_file: they are
// different capabilities, and a grant or a policy for one never covers the
// other.
type Ref struct {
	Skill        string `json:"skill"`
	ExtensionID  string `json:"extensionId"`
	CapabilityID string `json:"capabilityId"`
}

// String renders r as "skill:extensionId/capabilityId"
// ("acme/notes:fs/write_file"), the Cedar entity id of the capability. It
// parses back unambiguously ([ParseRef]): a skill key has no ':' and a
// server id has neither ':' nor '/'.
func (r Ref) String() string { return r.Skill + ":" + r.ExtensionID + "/" + r.CapabilityID }

// Short renders r without its skill, "extensionId/capabilityId": the name
// of the tool inside its skill, and the short form the CLI accepts when
// only one installed skill offers it.
func (r Ref) Short() string { return r.ExtensionID + "/" + r.CapabilityID }

// RefFormHelp is how every capability-reference error says what to write.
const RefFormHelp = "write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file"

// ParseRef parses "skill:extensionId/capabilityId": the skill is everything
// before the first ':', the extension id what follows up to the next '/',
// the capability id the rest. The short form "extensionId/capabilityId" is
// refused here, because it may name a capability of several skills (the
// policy engine resolves it against the installed skills). Errors wrap
// [ErrInvalidRef].
func ParseRef(s string) (Ref, error) {
	sk, rest, hasSkill := strings.Cut(s, ":")
	if !hasSkill {
		if ext, c, ok := strings.Cut(s, "/"); ok && ext != "" && c != "" {
			return Ref{}, fmt.Errorf("%w: capability %q does not name its skill (several skills may name a server %q): %s", ErrInvalidRef, s, ext, RefFormHelp)
		}
		return Ref{}, fmt.Errorf("%w: capability %q: %s", ErrInvalidRef, s, RefFormHelp)
	}
	ext, c, ok := strings.Cut(rest, "/")
	r := Ref{Skill: sk, ExtensionID: ext, CapabilityID: c}
	if !ok || sk == "" || ext == "" || c == "" || strings.Contains(ext, ":") {
		return Ref{}, fmt.Errorf("%w: capability %q: %s", ErrInvalidRef, s, RefFormHelp)
	}
	if err := r.Validate(); err != nil {
		return Ref{}, err
	}
	return r, nil
}

// Validate checks the parts of a reference: a skill key of 1 to 256
// characters without ':', '"' or control characters, an extension id of 1
// to 128 characters without '/' or ':', a capability id of 1 to 128
// characters. Errors wrap [ErrInvalidRef].
func (r Ref) Validate() error {
	switch {
	case r.Skill == "" || len(r.Skill) > 256 || strings.ContainsFunc(r.Skill, func(c rune) bool { return c == ':' || c == '"' || c < 0x20 || c == 0x7f }):
		return fmt.Errorf("%w: skill key %q: 1 to 256 characters without ':', '\"' or control characters", ErrInvalidRef, r.Skill)
	case r.ExtensionID == "" || strings.ContainsAny(r.ExtensionID, "/:") || len(r.ExtensionID) > 128:
		return fmt.Errorf("%w: extensionId %q: 1 to 128 characters without '/' or ':'", ErrInvalidRef, r.ExtensionID)
	case r.CapabilityID == "" || len(r.CapabilityID) > 128:
		return fmt.Errorf("%w: capabilityId %q: 1 to 128 characters", ErrInvalidRef, r.CapabilityID)
	}
	return nil
}
