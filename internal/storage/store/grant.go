package store

import (
	"encoding/json"
	"time"
)

// Grant is an approval grant as the store keeps it. Package policy gives
// it its meaning (policy.Grant) and writes the audit records of its
// changes; the store keeps the columns and applies changes atomically.
type Grant struct {
	ID         string
	Principal  string
	Capability string
	// Args is the JSON of the grant's argument values; nil when the grant
	// is not bound to arguments.
	Args  json.RawMessage
	Level string
	// ExpiresAt and RevokedAt are zero for "never" and "not revoked".
	ExpiresAt, RevokedAt time.Time
	// Uses is how many calls the grant allows (0 unlimited); Used how
	// many it allowed.
	Uses, Used        int
	Reason, CreatedBy string
	CreatedAt         time.Time
}

// StoredPolicy is a Cedar policy kept in the store, added at run time
// rather than read from the policy directory.
type StoredPolicy struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	UpdatedAt time.Time `json:"updated_at"`
}

// GrantRescope rewrites the capability pattern of one grant still in force
// whose pattern is From: to To, or, when To is "", revokes it. Record is
// the audit record of the change, appended with it.
type GrantRescope struct {
	ID, From, To string
	Record       AuditRecord
}
