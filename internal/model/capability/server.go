package capability

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Sentinel errors of per-tool problems and pins. The MCP client returns
// them as they are, so callers branch with [errors.Is] on either name.
var (
	// ErrInvalidTool is a per-tool problem: a field of the tool definition
	// has the wrong type, the name breaks the MCP naming rule, the
	// definition is not canonical JSON (for example a duplicate key), or
	// the skillgate risk _meta entry is malformed.
	ErrInvalidTool = errors.New("invalid tool definition")

	// ErrInvalidSchema is a per-tool problem: the input or output schema is
	// not a JSON Schema object of type "object" that compiles.
	ErrInvalidSchema = errors.New("invalid schema")

	// ErrToolTooLarge is a per-tool problem: the description or a schema is
	// larger than its limit.
	ErrToolTooLarge = errors.New("tool definition too large")

	// ErrInvalidPin means a stored pin set cannot be trusted: a digest does
	// not match its recorded definition, or a definition is not canonical.
	ErrInvalidPin = errors.New("invalid pin")
)

// MaxServers is the most servers one skill's mcp.json may declare.
const MaxServers = 32

// Transport names how skillgate reaches a declared server.
type Transport string

// The transports a declaration may use.
const (
	// TransportStdio starts Command as a subprocess and speaks
	// newline-delimited JSON-RPC over its stdin and stdout.
	TransportStdio Transport = "stdio"
	// TransportHTTP connects to URL with the MCP streamable HTTP transport.
	TransportHTTP Transport = "http"
)

// RedactedServer is the view of a server declaration that is safe for
// reports and logs: credential references are kept by name, every literal
// env or header value is replaced by "[redacted]", and URL query values are
// hidden.
type RedactedServer struct {
	ID        string            `json:"id"`
	Transport Transport         `json:"transport"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	// Credentials lists, sorted, the credential names the declaration
	// references.
	Credentials []string `json:"credentials,omitempty"`
}

// RawPage is one tools/list result exactly as received. Result holds the
// bytes the server sent; marshalling with encoding/json compacts it, so
// SHA256 and Bytes record the original for audit.
type RawPage struct {
	Result json.RawMessage `json:"result"`
	SHA256 string          `json:"sha256"`
	Bytes  int             `json:"bytes"`
}

// ProblemCode classifies a per-tool problem found during introspection.
type ProblemCode string

// The closed set of per-tool problem codes. Each maps to one sentinel error
// (see [Problem.Err]).
const (
	// ProblemInvalidTool maps to [ErrInvalidTool].
	ProblemInvalidTool ProblemCode = "invalid_tool"
	// ProblemInvalidSchema maps to [ErrInvalidSchema].
	ProblemInvalidSchema ProblemCode = "invalid_schema"
	// ProblemTooLarge maps to [ErrToolTooLarge].
	ProblemTooLarge ProblemCode = "too_large"
)

// Problem is one reason a tool cannot be approved. Problems are data, not
// errors, because a server with one bad tool still reports its good ones; a
// caller must block a capability that has any.
type Problem struct {
	// Code classifies the problem.
	Code ProblemCode `json:"code"`
	// Field is the tool field at fault, for example "inputSchema" or
	// "annotations.readOnlyHint".
	Field string `json:"field"`
	// Message says what is wrong and, where it helps, what the limit is.
	Message string `json:"message"`
}

// Err returns the problem as an error that wraps its sentinel.
func (p Problem) Err() error {
	var sentinel error
	switch p.Code {
	case ProblemInvalidSchema:
		sentinel = ErrInvalidSchema
	case ProblemTooLarge:
		sentinel = ErrToolTooLarge
	default:
		sentinel = ErrInvalidTool
	}
	return fmt.Errorf("%w: %s: %s", sentinel, p.Field, p.Message)
}

// Tool is one tool of one server as introspected: its identity (the
// declared server id and the tool name) and its definition fields as the
// server sent them. The MCP client's introspected capabilities and the
// install report's capabilities both begin with it.
type Tool struct {
	// ExtensionID is the declared server id.
	ExtensionID string `json:"extensionId"`
	// CapabilityID is the tool name.
	CapabilityID string `json:"capabilityId"`
	// Title is the tool's title, if any.
	Title string `json:"title,omitempty"`
	// Description is the tool's description; empty when it broke a limit.
	Description string `json:"description,omitempty"`
	// InputSchema and OutputSchema are the schemas as received.
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are the tool annotations as received.
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// Name returns "extensionId/capabilityId", the name operators type.
func (t Tool) Name() string { return t.ExtensionID + "/" + t.CapabilityID }
