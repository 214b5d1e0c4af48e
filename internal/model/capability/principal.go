package capability

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// ErrInvalidPrincipal means a principal's tenant, agent id, agent tier or
// parent is missing or malformed; the message names the field.
var ErrInvalidPrincipal = errors.New("invalid principal")

// MaxAgentLen bounds an agent id, in bytes.
const MaxAgentLen = 128

// Principal is who acts: an agent id, the agent's tier (T0 a human, T1 the
// top orchestrator … T4 small models) and the tenant it acts for. The tier
// decides which skills it may see and load: those whose invokable_by
// includes it. The tenant names its storage (workspaces, and skill trees on
// object storage). A sub-agent names its parent's [Principal.ID] in Parent.
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

// Validate reports the first malformed field, wrapping
// [ErrInvalidPrincipal]: the tenant must be an identifier (see [CheckID]),
// the agent id 1 to [MaxAgentLen] bytes of valid UTF-8 without control
// characters (C0, DEL, C1), bidirectional formatting characters (U+061C,
// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), U+FFFD or '"', and
// without a '/' at its start or end or two in a row (the principal's id is
// "tenant/agent": the agent may name a team, "team/alice", but not an
// empty segment); the tier exactly one of T0–T4; and the parent, when
// set, a valid "tenant/agent" that is not the principal itself.
//
// It is the one rule of every surface that takes a principal: tokens,
// REST requests, console forms, CLI flags, MCP sessions ([ParseID] and
// [ValidatePattern] apply its field rules to ids and grant patterns). It
// allocates nothing on success: the policy engine checks every request's
// principal.
func (p Principal) Validate() error {
	if err := validateID("tenant", "agent id", p.Tenant, p.Agent, false); err != nil {
		return err
	}
	if !slices.Contains(skill.AllAgentTiers, p.Tier) {
		return fmt.Errorf("%w: agent tier %q: use one of T0, T1, T2, T3, T4", ErrInvalidPrincipal, p.Tier)
	}
	if p.Parent != "" {
		tenant, agent, ok := strings.Cut(p.Parent, "/")
		if !ok {
			return fmt.Errorf("%w: parent %q: write it as tenant/agent", ErrInvalidPrincipal, p.Parent)
		}
		if err := validateID("parent tenant", "parent agent id", tenant, agent, false); err != nil {
			return err
		}
	}
	if len(p.Parent) == len(p.Tenant)+1+len(p.Agent) && p.Parent == p.ID() {
		return fmt.Errorf("%w: %s cannot be its own parent", ErrInvalidPrincipal, p.ID())
	}
	return nil
}

// ParseID parses a principal's id "tenant/agent" (the tenant ends at the
// first '/') and checks both parts by [Principal.Validate]'s rules. Errors
// wrap [ErrInvalidPrincipal].
func ParseID(s string) (tenant, agent string, err error) {
	tenant, agent, ok := strings.Cut(s, "/")
	if !ok {
		return "", "", fmt.Errorf("%w: %q: write it as tenant/agent", ErrInvalidPrincipal, s)
	}
	if err := validateID("tenant", "agent id", tenant, agent, false); err != nil {
		return "", "", err
	}
	return tenant, agent, nil
}

// ValidatePattern reports whether s is a principal pattern, as grants name
// whom they cover: "*" (every principal), or "tenant/agent" where '*'
// matches any run of characters ("acme/*", "*/reviewer"). Apart from '*',
// the tenant and the agent follow [Principal.Validate]'s rules. Errors
// wrap [ErrInvalidPrincipal].
func ValidatePattern(s string) error {
	if s == "*" {
		return nil
	}
	tenant, agent, ok := strings.Cut(s, "/")
	if !ok {
		return fmt.Errorf("%w: %q: write tenant/agent, or a pattern like acme/*", ErrInvalidPrincipal, s)
	}
	return validateID("tenant", "agent id", tenant, agent, true)
}

// validateID checks a principal's tenant and agent id, named tenantField
// and agentField in errors; star allows '*' in the tenant (a pattern).
func validateID(tenantField, agentField, tenant, agent string, star bool) error {
	if err := checkID(tenantField, tenant, star); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidPrincipal, err)
	}
	switch {
	case agent == "":
		return fmt.Errorf("%w: %s is empty; set --agent or SKILLGATE_AGENT", ErrInvalidPrincipal, agentField)
	case len(agent) > MaxAgentLen:
		return fmt.Errorf("%w: %s is %d bytes, limit %d", ErrInvalidPrincipal, agentField, len(agent), MaxAgentLen)
	case agent[0] == '/' || agent[len(agent)-1] == '/' || strings.Contains(agent, "//"):
		return fmt.Errorf("%w: %s %q has an empty segment: no '/' at its start or end, nor two in a row", ErrInvalidPrincipal, agentField, agent)
	}
	for i := 0; i < len(agent); {
		c := agent[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return fmt.Errorf("%w: %s %q contains control characters or invalid UTF-8", ErrInvalidPrincipal, agentField, agent)
			}
			if c == '"' {
				return fmt.Errorf("%w: %s %q contains '\"'", ErrInvalidPrincipal, agentField, agent)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(agent[i:])
		if r == utf8.RuneError || unicode.IsControl(r) {
			return fmt.Errorf("%w: %s %q contains control characters or invalid UTF-8", ErrInvalidPrincipal, agentField, agent)
		}
		if unicode.Is(unicode.Bidi_Control, r) {
			return fmt.Errorf("%w: %s %q contains a bidirectional formatting character (U+%04X)", ErrInvalidPrincipal, agentField, agent, r)
		}
		i += n
	}
	return nil
}

// MaxIDLen bounds an identifier ([CheckID]), in bytes.
const MaxIDLen = 64

// CheckID reports whether s is an identifier, for a tenant or a session
// id: 1 to [MaxIDLen] ASCII letters, digits, '.', '_' and '-', starting
// with a letter or digit. Such ids are single storage-key segments and safe
// in HTTP headers, file names and Cedar entity ids. The error names what s
// is ("tenant", "session id").
func CheckID(what, s string) error { return checkID(what, s, false) }

// checkID is [CheckID]; star also allows '*' anywhere (a pattern).
func checkID(what, s string, star bool) error {
	if s == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if len(s) > MaxIDLen {
		return fmt.Errorf("%s %q is longer than %d characters", what, s, MaxIDLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && !(star && c == '*') && (i == 0 || c != '.' && c != '_' && c != '-') {
			return fmt.Errorf("%s %q must be letters, digits, '.', '_' and '-', starting with a letter or digit", what, s)
		}
	}
	return nil
}
