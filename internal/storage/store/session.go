package store

import (
	"context"
	"time"
)

// Session is the persisted state of one agent session: who it belongs to
// (the principal: tenant, agent id, agent tier) and which skills it has
// loaded, in load order, with the /skills mount name each one got. The
// session's workspace files live in blob storage under the session id, not
// here.
type Session struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	Agent  string `json:"agent"`
	// Tier is the agent tier, "T0" to "T4".
	Tier string `json:"tier"`
	// Skills are the loaded skills in load order.
	Skills    []LoadedSkill `json:"skills"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
	// LastUsed is when the session was last attached, detached, changed or
	// seen in use (see [SessionStore.TouchSessions]); idle expiry counts
	// from it. It is not written per tool call.
	LastUsed time.Time `json:"last_used"`
}

// SessionFilter selects sessions in [SessionStore.Sessions].
type SessionFilter struct {
	// UnusedSince, when not zero, keeps the sessions last used before it.
	UnusedSince time.Time
}

// LoadedSkill is one skill loaded in a session.
type LoadedSkill struct {
	// Key is the skill's identity ("escrituras/compraventa").
	Key string `json:"key"`
	// Mount is the directory name under /skills ("compraventa", or
	// "escrituras--compraventa" when the leaf name was taken).
	Mount    string    `json:"mount"`
	LoadedAt time.Time `json:"loaded_at"`
}

// SessionStore persists agent sessions. It is a separate interface from
// [Store] so that registry code does not depend on it; store/sqlite and
// store/postgres implement both. Every method is safe for concurrent use and every change
// is one transaction.
type SessionStore interface {
	// CreateSession records a new session with its principal and skills;
	// CreatedAt and UpdatedAt are set by the store. Returns ErrConflict when
	// a session with the same id exists.
	CreateSession(ctx context.Context, s Session) error
	// Session returns the session with the given id, its skills in load
	// order. Returns ErrNotFound when there is none.
	Session(ctx context.Context, id string) (Session, error)
	// SetSessionSkills replaces the loaded skills of a session (in load
	// order) and updates its UpdatedAt. Returns ErrNotFound when the session
	// does not exist, ErrConflict when two skills share a key or a mount.
	SetSessionSkills(ctx context.Context, id string, skills []LoadedSkill) error
	// DeleteSession forgets a session and its skills. Returns ErrNotFound
	// when there is none.
	DeleteSession(ctx context.Context, id string) error
	// Sessions returns the sessions f selects, with their skills, least
	// recently used first (then by id).
	Sessions(ctx context.Context, f SessionFilter) ([]Session, error)
	// TouchSessions records that the sessions ids were in use at at: their
	// LastUsed moves forward to at (never back). Unknown ids are ignored.
	TouchSessions(ctx context.Context, at time.Time, ids ...string) error
	// DeleteIdleSession forgets a session only if it was last used before
	// before, in one transaction, so that a session resumed meanwhile (by
	// another process) is kept. Returns ErrNotFound when there is none and
	// ErrConflict when it was used since.
	DeleteIdleSession(ctx context.Context, id string, before time.Time) error
}
