package capability

// Effect is the outcome of a decision on a capability call: what the policy
// engine decides, what the broker enforces and what the audit log records,
// as the same three strings.
type Effect string

// The effects.
const (
	// Allow: the call may go ahead.
	Allow Effect = "allow"
	// Deny: the call is refused.
	Deny Effect = "deny"
	// RequireApproval: the call needs a grant a human has not given yet.
	RequireApproval Effect = "require_approval"
)

// Valid reports whether e is one of the defined effects.
func (e Effect) Valid() bool { return e == Allow || e == Deny || e == RequireApproval }
