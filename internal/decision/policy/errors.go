package policy

import (
	"errors"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// Sentinel errors. Errors from this package wrap one of them so callers
// branch with [errors.Is]; the message names the file, field and fix.
var (
	// ErrInvalidPolicy means a Cedar policy file or stored policy does not
	// parse, has a malformed or duplicate @id, or a bad @constraints
	// annotation.
	ErrInvalidPolicy = errors.New("invalid policy")

	// ErrInvalidCapability means a capability record or reference is
	// malformed, a record duplicates another of its skill, or a short
	// reference is ambiguous. It is [capability.ErrInvalidRef], which
	// [capability.ParseRef] returns.
	ErrInvalidCapability = capability.ErrInvalidRef

	// ErrNoSuchCapability means a capability given in the short form
	// extensionId/capabilityId, or a grant's capability pattern, is offered
	// by no installed skill. Errors wrapping it wrap ErrInvalidCapability
	// too, or for a grant ErrInvalidGrant.
	ErrNoSuchCapability = errors.New("no installed skill offers it")

	// ErrInvalidPrincipal means a principal is malformed. It is
	// [capability.ErrInvalidPrincipal], which [capability.Principal.Validate]
	// returns.
	ErrInvalidPrincipal = capability.ErrInvalidPrincipal

	// ErrTierAboveParent means a sub-agent was given a tier above its
	// parent's (T0 is the highest).
	ErrTierAboveParent = errors.New("sub-agent tier above its parent's")

	// ErrUnknownParent means a delegation names a parent that is itself a
	// sub-agent without a delegation, or forms a cycle or a chain deeper
	// than MaxDelegationDepth.
	ErrUnknownParent = errors.New("unknown parent")

	// ErrInvalidGrant means a grant is malformed.
	ErrInvalidGrant = errors.New("invalid grant")

	// ErrGrantNotFound means no grant has the given id.
	ErrGrantNotFound = errors.New("grant not found")

	// ErrGrantUnusable means a grant is expired, revoked or used up.
	ErrGrantUnusable = errors.New("grant expired, revoked or used up")
)
