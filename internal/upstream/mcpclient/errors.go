package mcpclient

import (
	"errors"
	"fmt"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// Sentinel errors. Every error this package returns wraps exactly one of them,
// so callers branch with [errors.Is] and never compare strings.
var (
	// ErrInvalidConfig means an mcp.json declaration is malformed: too large,
	// not strict JSON, an unknown field, a bad server id, or a value out of
	// bounds. The message names the field and the fix.
	ErrInvalidConfig = errors.New("invalid mcp.json")

	// ErrMissingCredential means a declaration references a credential
	// (${NAME}) that the caller's lookup does not provide. The message names
	// the credential, never a value.
	ErrMissingCredential = errors.New("missing credential")

	// ErrServerStart means a stdio server's process could not be started
	// (command not found, not executable) or an HTTP server could not be
	// reached.
	ErrServerStart = errors.New("server did not start")

	// ErrServerExited means a stdio server's process exited before it answered.
	// The error message carries the exit status and the tail of its stderr.
	ErrServerExited = errors.New("server process exited")

	// ErrTimeout means the server did not answer a phase (initialize,
	// tools/list, tools/call) within its configured limit.
	ErrTimeout = errors.New("server did not answer in time")

	// ErrResponseTooLarge means one message, or the sum of all tools/list
	// pages, exceeded its byte limit ([Limits.MaxFrameBytes],
	// [Limits.MaxListBytes]).
	ErrResponseTooLarge = errors.New("response too large")

	// ErrTooManyTools means a server offers more tools than
	// [Limits.MaxTools], or more pages than [Limits.MaxPages].
	ErrTooManyTools = errors.New("too many tools")

	// ErrMalformedResponse means a server's answer is not what MCP requires at
	// the level of the whole response: a tools/list result that is not an
	// object with a tools array, a tool without a string name, a tool listed
	// twice, a repeated cursor, or an unusable serverInfo.
	ErrMalformedResponse = errors.New("malformed response")

	// ErrServerError means the server answered a request with a JSON-RPC
	// error. The message quotes the server's (bounded) error text.
	ErrServerError = errors.New("server returned an error")

	// ErrConnection means the transport failed for another reason (the
	// connection closed, an HTTP error status).
	ErrConnection = errors.New("connection failed")

	// ErrToolBlocked means [Conn.CallTool] refused a call because the tool is
	// not pinned, changed since it was pinned, or is no longer offered.
	ErrToolBlocked = errors.New("tool blocked")

	// ErrRecheckFailed means the last pin re-check of a [Conn] failed, so
	// every call is refused until a re-check succeeds (fail closed).
	ErrRecheckFailed = errors.New("pin re-check failed")

	// ErrClosed means the [Conn] was closed, by the caller or because the
	// upstream connection ended.
	ErrClosed = errors.New("connection closed")

	// ErrInvalidTool is [capability.ErrInvalidTool], a per-tool problem:
	// a field of the tool definition has the wrong type, the name breaks
	// the MCP naming rule, the definition is not canonical JSON, or the
	// skillgate risk _meta entry is malformed.
	ErrInvalidTool = capability.ErrInvalidTool

	// ErrInvalidSchema is [capability.ErrInvalidSchema], a per-tool
	// problem: a schema is not a JSON Schema object of type "object" that
	// compiles.
	ErrInvalidSchema = capability.ErrInvalidSchema

	// ErrToolTooLarge is [capability.ErrToolTooLarge], a per-tool problem:
	// the description or a schema is larger than its limit.
	ErrToolTooLarge = capability.ErrToolTooLarge

	// ErrInvalidPin is [capability.ErrInvalidPin]: a stored pin set cannot
	// be trusted.
	ErrInvalidPin = capability.ErrInvalidPin
)

// ServerError is the error returned when talking to one declared server
// fails. It names the server and the phase (start, initialize, tools/list,
// tools/call) and wraps one of the sentinels above.
type ServerError struct {
	// ServerID is the declared server id (the capability's extensionId).
	ServerID string
	// Phase is the step that failed: "start", "initialize", "tools/list",
	// "tools/call" or "credentials".
	Phase string
	// Err is the cause; it wraps one of the package's sentinel errors.
	Err error
}

// Error implements error.
func (e *ServerError) Error() string {
	return fmt.Sprintf("mcpclient: server %q: %s: %v", e.ServerID, e.Phase, e.Err)
}

// Unwrap returns the cause, so errors.Is finds the sentinel.
func (e *ServerError) Unwrap() error { return e.Err }

// ExitError is the cause of [ErrServerExited]: how a stdio server's
// process ended and the tail of what it wrote to stderr (at most
// [Limits.MaxStderrBytes]), kept as written so that a reader can show it
// as the text it is. Its message quotes the tail on one line.
type ExitError struct {
	// Status is how the process ended ("exit status 1", "signal: killed").
	Status string
	// Stderr is the tail of its stderr, trimmed of surrounding space.
	Stderr string
	// max bounds the quoted tail in the message.
	max int
}

// Error implements error.
func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%v (%s)", ErrServerExited, e.Status)
	if e.Stderr != "" {
		msg += "; stderr: " + strictjson.Quote(e.Stderr, e.max+8)
	}
	return msg
}

// Unwrap returns [ErrServerExited].
func (e *ExitError) Unwrap() error { return ErrServerExited }
