package executor

import "errors"

// Sentinel errors; every error the package returns wraps one of them, and
// its message names the file, the entry and the field at fault and says
// what to write instead.
var (
	// ErrInvalidName means an executor name is not verb_object from the
	// closed vocabulary.
	ErrInvalidName = errors.New("invalid executor name")

	// ErrInvalidCatalog means an executor catalog file is malformed.
	ErrInvalidCatalog = errors.New("invalid executor catalog")

	// ErrInvalidBackends means a backends file is malformed or names an
	// executor, server or tool that does not exist.
	ErrInvalidBackends = errors.New("invalid backends file")

	// ErrInvalidMapping means an argument mapping does not compile, does
	// not type-check against the tool's input schema, references an
	// unknown executor argument or may cost more than the limit.
	ErrInvalidMapping = errors.New("invalid argument mapping")

	// ErrMappingFailed means a mapping failed on one call's arguments: an
	// evaluation error, the runtime cost limit, or arguments the tool's
	// schema refuses.
	ErrMappingFailed = errors.New("argument mapping failed")

	// ErrInvalidResult means a result mapping does not compile or does not
	// yield a string.
	ErrInvalidResult = errors.New("invalid result mapping")

	// ErrResultFailed means a result mapping failed on one call's result:
	// an evaluation error, the cost limit reached, a result too large.
	ErrResultFailed = errors.New("result mapping failed")

	// ErrDormant means an executor has no live backend for the principal.
	ErrDormant = errors.New("executor is dormant")

	// ErrProviderOff means the call pinned a provider whose backends are
	// all off for the principal.
	ErrProviderOff = errors.New("provider is off")

	// ErrUnknownProvider means the call pinned a provider that serves no
	// backend of the executor.
	ErrUnknownProvider = errors.New("unknown provider")
)
