package session

import (
	"errors"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// Sentinel errors. Every error a [Manager] or [Session] method returns
// wraps one of these (or a storage error), so callers branch with
// [errors.Is]; the gateway maps them to tool results in one place.
var (
	// ErrInvalidPrincipal: the tenant, agent id or agent tier is missing or
	// malformed; the message names the field. It is
	// [capability.ErrInvalidPrincipal], which [capability.Principal.Validate]
	// returns.
	ErrInvalidPrincipal = capability.ErrInvalidPrincipal
	// ErrInvalidSessionID: a session id is not 1–64 characters of letters,
	// digits, '.', '_' and '-' starting with a letter or digit.
	ErrInvalidSessionID = errors.New("invalid session id")
	// ErrSessionUnavailable: the session id belongs to another principal.
	// The message does not say whose.
	ErrSessionUnavailable = errors.New("session unavailable")
	// ErrSkillNotFound: no skill the principal may use has this name. A
	// skill that exists but is outside the principal's tier gives exactly
	// the same error, so an agent cannot learn that it exists.
	ErrSkillNotFound = errors.New("skill not found")
	// ErrAmbiguous: a bare name matches several skills the principal may
	// use (in different categories); the message lists them.
	ErrAmbiguous = errors.New("skill name is ambiguous")
	// ErrNotLoaded: unload_skill named a skill that is not loaded.
	ErrNotLoaded = errors.New("skill not loaded")
	// ErrMountInUse: neither /skills/<name> nor /skills/<category>--<name>
	// is free for the skill (see the package documentation).
	ErrMountInUse = errors.New("mount name in use")
	// ErrClosed: the session handle was closed.
	ErrClosed = errors.New("session closed")
	// ErrNoSession: no stored session has this id (operator commands).
	ErrNoSession = errors.New("no such session")
	// ErrSessionInUse: the session has open handles in this process, so it
	// is not removed.
	ErrSessionInUse = errors.New("session in use")
)
