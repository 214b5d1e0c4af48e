package blob

import "errors"

// Sentinel errors returned (wrapped with %w) by every [Store] implementation.
// Callers test them with [errors.Is]; the wrapping message names the key and
// the reason.
var (
	// ErrNotFound means no object exists at the key. A key that names a
	// "directory" (a prefix of other keys) is not an object and is not found.
	ErrNotFound = errors.New("blob: object not found")

	// ErrInvalidKey means the key or prefix breaks the rules of [ValidateKey]
	// (or, for a prefix, of [ValidatePrefix]), or is reserved by the store.
	ErrInvalidKey = errors.New("blob: invalid key")

	// ErrTooLarge means the object is larger than the store's configured
	// maximum object size, on read or on write.
	ErrTooLarge = errors.New("blob: object too large")

	// ErrSizeMismatch means Put was given a reader that produced more or fewer
	// bytes than the declared size. Nothing was stored.
	ErrSizeMismatch = errors.New("blob: size mismatch")

	// ErrConflict means the key cannot be stored because the store's namespace
	// is hierarchical and an ancestor of the key is an object, or the key is
	// itself used as a directory. The local store returns it; S3 stores
	// generally do not (see the package documentation of each store).
	ErrConflict = errors.New("blob: key conflicts with an existing object or directory")

	// ErrEscape means resolving the key would leave the store's root, for
	// example through a symbolic link in a local directory that points outside
	// of it. The object is refused, not followed.
	ErrEscape = errors.New("blob: key resolves outside the store root")

	// ErrReadOnly means the store was opened read-only (a directory the
	// operator lends agents to read) and refuses Put and Delete.
	ErrReadOnly = errors.New("blob: store is read-only")
)
