package store

import (
	"context"
	"io"
	"time"
)

// GrantStore keeps stored Cedar policies and approval grants: the storage
// of package policy (policy.Store is this interface, declared there by its
// consumer). Every change is one transaction, and a grant change commits
// with its audit record, sealed with the [AuditSeal] given.
type GrantStore interface {
	// Policies returns the stored policies ordered by id.
	Policies(ctx context.Context) ([]StoredPolicy, error)
	// PutPolicy creates or replaces a stored policy.
	PutPolicy(ctx context.Context, p StoredPolicy) error
	// DeletePolicy removes a stored policy; deleting a missing id is not
	// an error.
	DeletePolicy(ctx context.Context, id string) error
	// Grants returns every grant that is not revoked, ordered by creation
	// (then id).
	Grants(ctx context.Context) ([]Grant, error)
	// CreateGrant records a new grant with its audit record.
	CreateGrant(ctx context.Context, g Grant, rec AuditRecord, seal AuditSeal) error
	// RevokeGrant marks a grant revoked at at, with the audit record rec
	// gives for the grant. It returns ErrNotFound when no unrevoked grant
	// has the id.
	RevokeGrant(ctx context.Context, id string, at time.Time, rec func(Grant) (AuditRecord, error), seal AuditSeal) error
	// RescopeGrants applies every change with its audit record in one
	// transaction; a grant no longer in force with the pattern a change
	// expects is left alone, without a record.
	RescopeGrants(ctx context.Context, cs []GrantRescope, seal AuditSeal) error
	// UseGrant atomically consumes one use of a grant that is unrevoked,
	// unexpired at at and not used up, and returns it with its new use
	// count: of concurrent uses of the last use, in any process, exactly
	// one succeeds. Otherwise it returns ErrConflict (ErrNotFound for an
	// unknown id).
	UseGrant(ctx context.Context, id string, at time.Time) (Grant, error)
	// ReleaseGrant gives back one use consumed by UseGrant; a grant with
	// no use consumed is left as it is.
	ReleaseGrant(ctx context.Context, id string) error
}

// RateBuckets keeps rate-limit token buckets shared by every process on
// the store (policy.Buckets is this interface).
type RateBuckets interface {
	// TakeTokens refills the bucket key (at most burst tokens, perSecond
	// added per second, full when new) to time now and takes up to want
	// whole tokens from it, atomically: concurrent takers in any process
	// never take the same token. It returns how many it took and how many
	// the bucket held before taking.
	TakeTokens(ctx context.Context, key string, perSecond float64, burst, want int, now time.Time) (taken int, available float64, err error)
}

// ScanCache keeps discover's per-root scan records (discover.Cache is
// this interface): bytes the store keeps as they are, which may be lost
// at any time. A committed scan of the configured roots forgets the
// records of the roots it no longer has.
type ScanCache interface {
	// ReadScanCache returns a reader of root's record, or nil when there
	// is none.
	ReadScanCache(ctx context.Context, root string) (io.ReadCloser, error)
	// WriteScanCache replaces root's record; an empty record removes it.
	WriteScanCache(ctx context.Context, root string, record []byte) error
}

// DB is everything skillgate keeps in its metadata store, as one value:
// what a command opens and hands to the registry, the install flow, the
// policy engine, the sessions and the audit log. store/sqlite (one file,
// the default) and store/postgres (shared by several processes and hosts)
// implement it; options of one implementation only (SQLite's bulk first
// scan, its file's path) are reached by a type assertion.
type DB interface {
	Store
	ScanStreamer
	VersionStreamer
	RootApplier
	InstallStore
	AuditStore
	SessionStore
	GrantStore
	ChangeStore
	RateBuckets
	ScanCache
	// Ping checks that the store answers a query, for readiness checks.
	Ping(ctx context.Context) error
	// SchemaVersion returns the applied schema version.
	SchemaVersion(ctx context.Context) (int, error)
}
