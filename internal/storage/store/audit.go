package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// AuditRecord is one record of the audit log as the store keeps it. Package
// audit gives it its meaning (audit.Record is this type with the hash
// chain's methods); the store only writes and reads the fields, and never
// computes a hash: a record reaches it sealed (see [AuditSeal]).
type AuditRecord struct {
	// Seq numbers records from 1, without gaps, in append order.
	Seq int64 `json:"seq"`
	// Time is when the event happened (UTC, nanosecond precision).
	Time time.Time `json:"time"`
	// Actor is who caused it: "operator:alice", "agent:acme/planner",
	// "system".
	Actor string `json:"actor"`
	// Session is the agent session, for decisions made in one.
	Session string `json:"session,omitempty"`
	// Action is what happened, dotted: "install.approve",
	// "capability.invoke", "grant.add".
	Action string `json:"action"`
	// Subject is what it happened to: a skill key, or a capability as
	// "extension/capability".
	Subject string `json:"subject"`
	// Decision is allow, deny or require_approval, for decisions.
	Decision capability.Effect `json:"decision,omitempty"`
	// Reasons say why, each naming the policy, constraint or human note.
	Reasons []string `json:"reasons,omitempty"`
	// ArgsHash is the hash of a call's arguments (audit.HashArgs): the log
	// proves what was asked without keeping the arguments themselves.
	ArgsHash string `json:"argsHash,omitempty"`
	// LatencyNS is how long the decision or operation took.
	LatencyNS int64 `json:"latencyNs,omitempty"`
	// Data holds event-specific details as a JSON object, for example
	// {"from": "analyzing", "to": "blocked"} for a state transition.
	Data json.RawMessage `json:"data,omitempty"`
	// Prev is the previous record's Hash, or audit.Genesis.
	Prev string `json:"prev"`
	// Hash is this record's hash (audit.Record.ComputeHash).
	Hash string `json:"hash"`
}

// AuditHead identifies the last record of a log: its sequence number and
// hash. The zero AuditHead is the empty log.
type AuditHead struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// AuditFilter selects records. The zero AuditFilter selects every record.
type AuditFilter struct {
	// AfterSeq selects records with Seq > AfterSeq; BeforeSeq, when not
	// zero, those with Seq < BeforeSeq (a page of the log before one
	// already shown).
	AfterSeq, BeforeSeq int64
	// Actor, Session, Subject and Decision match exactly when set.
	Actor, Session, Subject string
	Decision                capability.Effect
	// Action matches exactly, or as a prefix when it ends in "." or "*"
	// ("install." or "install.*" selects every install transition).
	Action string
	// Since and Until bound Time (inclusive, exclusive) when set.
	Since, Until time.Time
	// Limit caps the number of records; <= 0 means no cap. With Last, the
	// last Limit matching records are returned (still in Seq order).
	Limit int
	Last  bool
}

// AuditSeal makes r the successor of head in the hash chain (audit.Seal):
// it returns r with Seq, Prev and Hash set. A store calls it inside the
// transaction that appends r, with the head read in that transaction, so
// two writers can never chain to the same record. The store computes no
// hash itself: the chain's format is package audit's, whatever the store.
type AuditSeal func(head AuditHead, r AuditRecord) (AuditRecord, error)

// AuditStore keeps the audit log: an append-only sequence of sealed
// records. Implementations are safe for concurrent use. Package audit wraps
// it as an audit.Log.
type AuditStore interface {
	// AppendAudit seals rs in order after the log's head with seal and
	// stores them in one transaction, returning them as stored. A zero
	// Time is set to the store's clock first.
	AppendAudit(ctx context.Context, seal AuditSeal, rs ...AuditRecord) ([]AuditRecord, error)
	// AuditRecords returns the records matching f in Seq order.
	AuditRecords(ctx context.Context, f AuditFilter) ([]AuditRecord, error)
	// ScanAudit calls fn for every record with Seq > afterSeq, in Seq
	// order, without holding them all in memory. An error from fn stops it.
	ScanAudit(ctx context.Context, afterSeq int64, fn func(AuditRecord) error) error
	// AuditHead returns the last record's head, or the zero AuditHead.
	AuditHead(ctx context.Context) (AuditHead, error)
}
