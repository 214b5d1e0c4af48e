// Package store defines how skillgate persists its registry: the records,
// the [Store] interface and its error kinds, and [DB], everything
// skillgate keeps there. Implementations live in subpackages named for
// their dependency: store/sqlite is the embedded default, store/postgres
// the database several processes share; store/storetest is the
// conformance suite both pass.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Error kinds returned (wrapped) by every Store implementation.
var (
	// ErrNotFound means no record matches.
	ErrNotFound = errors.New("not found")
	// ErrConflict means the change contradicts the stored state.
	ErrConflict = errors.New("conflict")
)

// Version is one skill version: one content digest of one skill directory,
// with everything the scan learned about it.
type Version struct {
	ID int64 `json:"-"`
	// Key is the skill's identity ("category/name", or the name alone).
	// A skill whose name could not be read is keyed by its directory.
	Key         string   `json:"key"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Category    string   `json:"category,omitempty"`
	Version     string   `json:"version,omitempty"`
	Tier        int      `json:"tier"`
	InvokableBy []string `json:"invokable_by"`

	// Root is the root directory it was found under and Scope that root's
	// scope; Dir is the skill directory and Rel it relative to Root.
	Root  string `json:"root"`
	Scope string `json:"scope"`
	// Trust is the trust of the root ("first_party", "imported"): who
	// vouches for the skill's code. It is the root's, so a root whose
	// configured trust changes changes every skill under it.
	Trust string `json:"trust"`
	Dir   string `json:"dir"`
	Rel   string `json:"rel"`
	File  string `json:"file"`

	Digest      string `json:"digest,omitempty"`
	Fingerprint string `json:"-"`

	// Valid is false for a rejected skill; Diagnostics say why.
	Valid       bool            `json:"valid"`
	Enabled     bool            `json:"enabled"`
	Frontmatter json.RawMessage `json:"frontmatter,omitempty"`
	Diagnostics json.RawMessage `json:"diagnostics"`
	// Files is the JSON list of the tree's files (path and size).
	Files json.RawMessage `json:"files,omitempty"`

	// Current is true for the version on disk now; older versions of the
	// same directory are kept as history.
	Current   bool      `json:"current"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// Ref is the little a rescan needs to know about a directory's current
// version: whether it changed, and what the scan report says about it.
type Ref struct {
	Fingerprint string
	// Key, Name and Valid are the version's; Diagnostics are set only for a
	// rejected version (Valid false), as Filter.Summary sets them.
	Key         string
	Name        string
	Valid       bool
	Diagnostics json.RawMessage
}

// RootScan is the outcome of scanning one root, applied atomically.
type RootScan struct {
	Root  string
	Scope string
	// Trust is the root's trust (capability.Trust); "" records imported.
	Trust    string
	Position int // order among the configured roots, for precedence ties
	// Upserts are versions that are new or changed since the last scan.
	Upserts []Version
	// Gone are directories that no longer hold a skill.
	Gone []string
	// Notes are findings about the root (bounds hit, links skipped).
	Notes []string
}

// ScanStreamer is implemented by a Store that can record a scan while the
// scanner is still producing its upserts, so that writing the index
// overlaps parsing. The result is that of ApplyScans with the same scans.
type ScanStreamer interface {
	// BeginScan starts the transaction of a scan of roots, the configured
	// roots in order: roots not among them are forgotten with their skills.
	BeginScan(ctx context.Context, roots []string) (ScanWriter, error)
}

// ScanWriter is a scan being recorded (see ScanStreamer). It is not safe
// for concurrent use. Exactly one of Commit or Rollback ends it.
type ScanWriter interface {
	// Root records one root's scan as ApplyScans does (its Upserts
	// included, if any) and directs the next Upsert calls to it. Roots
	// come in the order of BeginScan's, each at most once.
	Root(ctx context.Context, sc RootScan) error
	// Upsert records more new or changed versions of the current root.
	// Once it returns, the writer reads only the Dir, Fingerprint, Key,
	// Name, Valid and Diagnostics of vs (until Commit): the caller may
	// drop the other fields.
	Upsert(ctx context.Context, vs []Version) error
	// Commit makes the scan visible; Rollback forgets it.
	Commit() error
	Rollback() error
}

// VersionStreamer is implemented by a Store that can hand the versions
// Versions would return to fn one at a time, in the same order, without
// holding them all: building a catalog of 100,000 skills then never holds
// every row at once. fn's error stops the iteration and is returned. The
// InvokableBy lists handed over may be shared between versions: never
// modify them.
type VersionStreamer interface {
	EachVersion(ctx context.Context, f Filter, fn func(Version) error) error
}

// ScopeImported is the scope of the root that holds the enabled skills of
// the install pipeline (see [RootApplier]). Scans never forget it: it is
// not configured but kept in step with the installs.
const ScopeImported = "imported"

// RootApplier is implemented by a Store that can record the scan of one
// root without touching the others: how the skills of the install
// pipeline, which no configured scan walks, enter the registry.
type RootApplier interface {
	// ApplyRoot records sc as ApplyScans records one root's scan, in one
	// transaction, leaving every other root as it is.
	ApplyRoot(ctx context.Context, sc RootScan) error
}

// Root is a configured root as last scanned.
type Root struct {
	Path     string    `json:"path"`
	Scope    string    `json:"scope"`
	Trust    string    `json:"trust"`
	Position int       `json:"position"`
	LastScan time.Time `json:"last_scan"`
	Notes    []string  `json:"notes,omitempty"`
}

// Filter selects versions. The zero Filter selects every current version.
type Filter struct {
	Key      string // exact identity
	Name     string // exact name
	Dir      string // exact directory
	Category string
	Scope    string
	Trust    string
	// History includes versions that are no longer current.
	History bool
	// Brief leaves out the bulky columns (frontmatter, files, and the
	// diagnostics of valid versions), for summaries over many skills.
	Brief bool
	// Summary fills only Key, Name, Root, Scope, Dir, Rel, Valid, Enabled
	// and the diagnostics of invalid versions: what a scan report needs.
	Summary bool
}

// Store persists the registry. Every method is safe for concurrent use, and
// every change is one transaction.
type Store interface {
	// Refs returns the current version of each skill directory under root,
	// keyed by directory, with the few fields a rescan and its report need.
	Refs(ctx context.Context, root string) (map[string]Ref, error)
	// ApplyScans records the scans of the configured roots in one
	// transaction: upserts become current, gone directories leave the
	// registry, and roots not among scans (but the root of ScopeImported)
	// are forgotten with their skills
	// (and the scan cache records, if the store keeps discover's, of roots
	// no longer configured).
	ApplyScans(ctx context.Context, scans []RootScan) error
	// Versions returns the versions matching f, ordered by key, then root
	// position, then directory, then first seen.
	Versions(ctx context.Context, f Filter) ([]Version, error)
	// SetEnabled enables or disables the current versions with the given
	// key. It returns ErrNotFound when there are none.
	SetEnabled(ctx context.Context, key string, enabled bool) error
	// Roots returns the configured roots in precedence order.
	Roots(ctx context.Context) ([]Root, error)
	// RegistryGeneration increases with every committed change of what
	// Versions returns of current versions (a scan that changed, added or
	// removed a version or changed a root's scope or order, SetEnabled
	// that changed a state), made by this process or another on the same
	// store. It never decreases; one read is cheap, so a catalog built
	// from Versions is checked against it before it is served.
	RegistryGeneration(ctx context.Context) (int64, error)
	// Close releases the store.
	Close() error
}
