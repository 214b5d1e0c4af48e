package capability

import (
	"errors"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/skill"
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
// characters, U+FFFD or '"', the tier exactly one of T0–T4, and the parent,
// when set, not the principal itself. It allocates nothing on success: the
// policy engine checks every request's principal.
func (p Principal) Validate() error {
	if err := CheckID("tenant", p.Tenant); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidPrincipal, err)
	}
	switch {
	case p.Agent == "":
		return fmt.Errorf("%w: agent id is empty; set --agent or SKILLGATE_AGENT", ErrInvalidPrincipal)
	case len(p.Agent) > MaxAgentLen:
		return fmt.Errorf("%w: agent id is %d bytes, limit %d", ErrInvalidPrincipal, len(p.Agent), MaxAgentLen)
	}
	for i := 0; i < len(p.Agent); {
		c := p.Agent[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return fmt.Errorf("%w: agent id %q contains control characters or invalid UTF-8", ErrInvalidPrincipal, p.Agent)
			}
			if c == '"' {
				return fmt.Errorf("%w: agent id %q contains '\"'", ErrInvalidPrincipal, p.Agent)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(p.Agent[i:])
		if r == utf8.RuneError || unicode.IsControl(r) {
			return fmt.Errorf("%w: agent id %q contains control characters or invalid UTF-8", ErrInvalidPrincipal, p.Agent)
		}
		i += n
	}
	if !slices.Contains(skill.AllAgentTiers, p.Tier) {
		return fmt.Errorf("%w: agent tier %q: use one of T0, T1, T2, T3, T4", ErrInvalidPrincipal, p.Tier)
	}
	if len(p.Parent) == len(p.Tenant)+1+len(p.Agent) && p.Parent == p.ID() {
		return fmt.Errorf("%w: %s cannot be its own parent", ErrInvalidPrincipal, p.ID())
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
func CheckID(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if len(s) > MaxIDLen {
		return fmt.Errorf("%s %q is longer than %d characters", what, s, MaxIDLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return fmt.Errorf("%s %q must be letters, digits, '.', '_' and '-', starting with a letter or digit", what, s)
		}
	}
	return nil
}
