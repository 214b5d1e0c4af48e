package session

import (
	"crypto/rand"
	"fmt"
	"strings"
	"unicode"

	"github.com/skillgate/skillgate/skill"
)

// MaxAgentLen bounds an agent id, in bytes.
const MaxAgentLen = 128

// Principal is who acts: an agent id, the agent's tier (T0 a human, T1 the
// top orchestrator … T4 small models) and the tenant it acts for. The tier
// decides which skills it may see and load: those whose invokable_by
// includes it. The tenant names its storage (workspaces, and skill trees on
// object storage).
type Principal struct {
	Tenant string
	Agent  string
	Tier   skill.AgentTier
}

// String renders the principal as "tenant/agent@tier", for logs.
func (p Principal) String() string { return p.Tenant + "/" + p.Agent + "@" + string(p.Tier) }

// Validate reports the first malformed field, wrapping [ErrInvalidPrincipal]:
// the tenant must be an identifier (see [ValidID]), the agent id 1 to
// MaxAgentLen bytes of printable UTF-8 without control characters, and the
// tier one of T0–T4.
func (p Principal) Validate() error {
	if err := validID("tenant", p.Tenant); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidPrincipal, err)
	}
	switch {
	case p.Agent == "":
		return fmt.Errorf("%w: agent id is empty; set --agent or SKILLGATE_AGENT", ErrInvalidPrincipal)
	case len(p.Agent) > MaxAgentLen:
		return fmt.Errorf("%w: agent id is %d bytes, limit %d", ErrInvalidPrincipal, len(p.Agent), MaxAgentLen)
	case strings.IndexFunc(p.Agent, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0:
		return fmt.Errorf("%w: agent id %q contains control characters or invalid UTF-8", ErrInvalidPrincipal, p.Agent)
	}
	if t, err := skill.ParseAgentTier(string(p.Tier)); err != nil || t != p.Tier {
		return fmt.Errorf("%w: agent tier %q: use one of T0, T1, T2, T3, T4", ErrInvalidPrincipal, p.Tier)
	}
	return nil
}

// ValidID reports whether s is a valid session id (and tenant name): 1 to
// 64 characters of ASCII letters, digits, '.', '_' and '-', starting with a
// letter or digit. Such ids are single storage-key segments and safe in HTTP
// headers and file names. The error wraps [ErrInvalidSessionID].
func ValidID(s string) error {
	if err := validID("session id", s); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidSessionID, err)
	}
	return nil
}

func validID(field, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", field)
	}
	if len(s) > 64 {
		return fmt.Errorf("%s %q is longer than 64 characters", field, s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return fmt.Errorf("%s %q must be letters, digits, '.', '_' and '-', starting with a letter or digit", field, s)
		}
	}
	return nil
}

// NewID returns a fresh random session id (26 characters, 130 bits).
func NewID() string { return strings.ToLower(rand.Text()) }
