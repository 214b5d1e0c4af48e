package install

import (
	"errors"
	"net/http"
)

// Sentinel errors. Callers branch with errors.Is; messages say what to do
// next.
var (
	// ErrInvalidSource means an install source could not be read as a skill:
	// not a directory or archive, a link, path traversal, a bound exceeded,
	// or a corrupt archive. The message names the entry and the limit.
	ErrInvalidSource = errors.New("invalid install source")

	// ErrLocked means a source no longer matches its lock file entry: a
	// git ref resolved to another commit, or the content digest differs.
	ErrLocked = errors.New("differs from the lock")

	// ErrInvalidSkill means the skill failed validation (SKILL.md or
	// mcp.json); the message lists every reason.
	ErrInvalidSkill = errors.New("invalid skill")
	// ErrCredentialWithheld means a server of a skill not approved yet
	// needs a credential the operator has not given it (see
	// [Introspection]); the server was not started.
	ErrCredentialWithheld = errors.New("credential withheld")
	// ErrCredentialUnset means the operator gave a server a credential
	// (--credential NAME) that resolves to nothing: neither the credential
	// store has it for the principal, nor may skillgate's environment
	// answer it (credentials.from_environment).
	ErrCredentialUnset = errors.New("credential not set")

	// ErrNotFound means no install matches a name.
	ErrNotFound = errors.New("no such install")

	// ErrAmbiguous means a name matches installs of several skills (use
	// the full key, category/name), or several versions of one skill that
	// the operation could act on (name one as KEY@DIGEST; the message lists
	// them with their states and install times). Nothing is picked.
	ErrAmbiguous = errors.New("ambiguous install name")

	// ErrState means the operation is not possible in the install's current
	// state; the message names the state and what to run instead.
	ErrState = errors.New("not possible in this state")

	// ErrBlocked means approval is not possible: capabilities lack risk
	// metadata, have problems, or drifted.
	ErrBlocked = errors.New("blocked")

	// ErrUsage means an argument is wrong: an unknown capability or field,
	// a missing or too short explanation, a value below the server's
	// without force.
	ErrUsage = errors.New("invalid request")

	// ErrStorage means managed storage is inconsistent or unwritable.
	ErrStorage = errors.New("managed storage error")
)

// HTTPStatus is the HTTP status an error of this package is answered with
// by the REST API and the admin console (400 usage, 404 not found, 409
// blocked or not possible now, 422 an invalid source or skill); ok is
// false for an error of no such kind (an internal error).
func HTTPStatus(err error) (status int, ok bool) {
	for _, st := range []struct {
		kind   error
		status int
	}{
		{ErrUsage, http.StatusBadRequest},
		{ErrAmbiguous, http.StatusBadRequest},
		{ErrNotFound, http.StatusNotFound},
		{ErrBlocked, http.StatusConflict},
		{ErrState, http.StatusConflict},
		{ErrInvalidSource, http.StatusUnprocessableEntity},
		{ErrInvalidSkill, http.StatusUnprocessableEntity},
	} {
		if errors.Is(err, st.kind) {
			return st.status, true
		}
	}
	return 0, false
}
