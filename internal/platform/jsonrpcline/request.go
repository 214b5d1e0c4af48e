package jsonrpcline

import "encoding/json"

// Request is a JSON-RPC request or notification with its params left
// raw: what a tap decodes of a message it may take (the method tells it
// whether to), and what skillgate encodes for a request of its own. ID is
// absent for a notification.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}
