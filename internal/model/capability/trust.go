package capability

import (
	"fmt"
	"strings"
)

// Trust is how much a skill's code is trusted. It is assigned by where the
// skill comes from, never by the skill itself: the skills built into
// skillgate are core, those under a root configured "trust: first_party"
// are first_party, and everything else (installed through the install
// pipeline, or found under a root configured without a trust) is imported.
type Trust string

// The trust tiers, most trusted first.
const (
	// TrustCore is skillgate's own skill and file tools: always on, never
	// disabled.
	TrustCore Trust = "core"
	// TrustFirstParty is a skill shipped at the standard of the core: it
	// activates automatically, its capabilities carry a shipped manifest
	// instead of an operator's approval, and it is dormant until its
	// credentials are configured.
	TrustFirstParty Trust = "first_party"
	// TrustImported is third-party code: opt-in, approved by an operator
	// capability by capability.
	TrustImported Trust = "imported"
)

// Trusts lists every tier, most trusted first.
var Trusts = []Trust{TrustCore, TrustFirstParty, TrustImported}

// Valid reports whether t is one of the tiers.
func (t Trust) Valid() bool { return t == TrustCore || t == TrustFirstParty || t == TrustImported }

// ParseTrust parses a tier name as configuration and flags spell it. A
// configured root may be first_party or imported: core is skillgate's own
// and no root can claim it.
func ParseTrust(s string) (Trust, error) {
	switch t := Trust(strings.TrimSpace(s)); t {
	case TrustFirstParty, TrustImported:
		return t, nil
	case TrustCore:
		return "", fmt.Errorf("trust %q is reserved for skillgate's own tools: use first_party or imported", s)
	}
	return "", fmt.Errorf("trust %q: use first_party or imported", s)
}
