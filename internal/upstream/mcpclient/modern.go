package mcpclient

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol versions. skillgate's client asks every upstream server for the
// newest version the SDK speaks (2026-07-28 with v1.8.0): the SDK probes
// with server/discover and, when the server answers it, speaks the
// stateless protocol; otherwise it falls back to initialize at the newest
// version of that generation (2025-11-25) and takes what the server
// negotiates. ServerReport.ProtocolVersion records the outcome. What
// skillgate sends past the SDK (a relayed tools/call over stdio, the Skills
// extension's methods, resources/read as bytes) then follows the
// negotiated generation: at 2026-07-28 and later each request carries
// params._meta (protocol version, client capabilities, client info) and,
// over HTTP, the Mcp-Method and Mcp-Name headers, as the SDK's own
// requests do.

// modernProtocol is the first protocol version without initialize.
const modernProtocol = "2026-07-28"

// requestMeta is the params._meta of a raw request at protocol version v,
// or nil below modernProtocol. The capabilities are those the client
// declares (the Skills extension only; see open).
func requestMeta(v, name, version string) json.RawMessage {
	if v < modernProtocol {
		return nil
	}
	b, err := json.Marshal(map[string]any{
		mcp.MetaKeyProtocolVersion:    v,
		mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{SkillsExtension: map[string]any{}}},
		mcp.MetaKeyClientInfo:         mcp.Implementation{Name: name, Version: version},
	})
	if err != nil {
		return nil
	}
	return b
}

// withMeta returns params (a JSON object) with meta as its _meta member;
// params itself when meta is nil or params is not an object.
func withMeta(params, meta json.RawMessage) json.RawMessage {
	if meta == nil || len(params) < 2 || params[0] != '{' || params[len(params)-1] != '}' {
		return params
	}
	out := make([]byte, 0, len(params)+len(meta)+10)
	out = append(out, params[:len(params)-1]...)
	if len(params) > 2 {
		out = append(out, ',')
	}
	out = append(append(append(out, `"_meta":`...), meta...), '}')
	return out
}

// setModernHeaders sets the headers a 2026-07-28 server requires of a
// request over streamable HTTP besides Mcp-Protocol-Version (SEP-2243):
// Mcp-Method, and Mcp-Name for the methods that name something
// (resources/read's uri, tools/call's and prompts/get's name).
func setModernHeaders(h http.Header, method string, params json.RawMessage) {
	h.Set("Mcp-Method", method)
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	switch method {
	case "resources/read":
		if json.Unmarshal(params, &p) == nil && p.URI != "" {
			h.Set("Mcp-Name", p.URI)
		}
	case "tools/call", "prompts/get":
		if json.Unmarshal(params, &p) == nil && p.Name != "" {
			h.Set("Mcp-Name", p.Name)
		}
	}
}
