package store

import (
	"context"
	"encoding/json"
	"time"
)

// ChangeKind names what a queued change proposes.
type ChangeKind string

// The change kinds the store keeps. (A new version awaiting re-consent,
// kind "update", is an install awaiting approval: it lives with the
// installs, not here.)
const (
	// ChangePromoteProvider merges the same action offered by several
	// providers' tools into one executor with one backend per provider.
	ChangePromoteProvider ChangeKind = "promote_provider"
)

// ChangeState is where a change stands. A change leaves pending once, by a
// human's decision.
type ChangeState string

// The change states.
const (
	ChangePending  ChangeState = "pending"
	ChangeApplied  ChangeState = "applied"
	ChangeRejected ChangeState = "rejected"
)

// Change is a proposed modification of the registry that waits for a
// human: never applied automatically.
type Change struct {
	ID   int64      `json:"id"`
	Kind ChangeKind `json:"kind"`
	// State is pending until a human applies or rejects it.
	State ChangeState `json:"state"`
	// Key identifies what the change proposes (its kind, subject and the
	// backends drafted): a change whose Key is already queued, applied or
	// rejected is not queued again, so a rejection stays one.
	Key string `json:"key"`
	// Subject is what the change is about: an executor name.
	Subject string `json:"subject"`
	// Summary is one line for lists.
	Summary string `json:"summary"`
	// Proposal is the kind's proposal document (JSON).
	Proposal json.RawMessage `json:"proposal"`
	// QueuedBy is who or what queued it, Why the evidence in one line.
	QueuedBy string    `json:"queuedBy"`
	Why      string    `json:"why"`
	Created  time.Time `json:"created"`
	// Decided, DecidedBy and Decision (the reason given) are set when it
	// leaves pending.
	Decided   time.Time `json:"decided,omitzero"`
	DecidedBy string    `json:"decidedBy,omitempty"`
	Decision  string    `json:"decision,omitempty"`
}

// ChangeFilter selects changes. The zero filter selects every change.
type ChangeFilter struct {
	ID     int64
	Kind   ChangeKind
	States []ChangeState
}

// Registration is what an applied promote_provider change registered: an
// executor (its definition, when the executor catalog does not declare
// it) and its backends.
type Registration struct {
	// Change is the applied change's ID.
	Change int64 `json:"change"`
	// Executor is the executor's name; Definition its definition (name,
	// description, inputSchema) as JSON, empty when the catalog has it.
	Executor   string          `json:"executor"`
	Definition json.RawMessage `json:"definition,omitempty"`
	// Backends are the registered backends.
	Backends []RegisteredBackend `json:"backends"`
}

// RegisteredBackend is one backend of a [Registration]: one tool of one
// server of one provider skill, with its argument mapping (CEL, as in a
// backends.yaml).
type RegisteredBackend struct {
	Provider  string            `json:"provider"`
	Skill     string            `json:"skill"`
	Server    string            `json:"server"`
	Tool      string            `json:"tool"`
	Arguments map[string]string `json:"arguments"`
}

// ChangeDecision takes a pending change to Applied or Rejected.
type ChangeDecision struct {
	ID     int64
	To     ChangeState
	By     string
	Reason string
	At     time.Time
	// Register is what an applied change registers; nil for a rejection.
	Register *Registration
}

// ChangeStore persists the changes queue and what applied changes
// registered. Every change is one transaction with its audit record.
type ChangeStore interface {
	// QueueChange records c as pending with the audit record rec, sealed
	// with seal. When a change with c.Key exists, whatever its state, it
	// returns that change and false, and records nothing.
	QueueChange(ctx context.Context, c Change, rec AuditRecord, seal AuditSeal) (Change, bool, error)
	// Changes returns the matching changes, newest first.
	Changes(ctx context.Context, f ChangeFilter) ([]Change, error)
	// DecideChange moves a pending change to d.To, records its
	// registration (an applied change's, with the install generation
	// bumped so that gateways reload) and the audit record rec, in one
	// transaction. It returns ErrNotFound for an unknown ID and
	// ErrConflict when the change is not pending or the registration
	// gives an executor a second backend of the same provider.
	DecideChange(ctx context.Context, d ChangeDecision, rec AuditRecord, seal AuditSeal) (Change, error)
	// Registrations returns what applied changes registered, oldest
	// first.
	Registrations(ctx context.Context) ([]Registration, error)
}
