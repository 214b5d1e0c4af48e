package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
	"github.com/skillgate/skillgate/internal/platform/jsonscan"
)

// The two generations of MCP a connection serves, on the same stdio stream
// or HTTP endpoint, as the 2026-07-28 specification's "dual-era" server:
//
//   - legacy clients (2024-11-05 … 2025-11-25) open with initialize; the
//     SDK negotiates the version they ask for when it supports it, else
//     the newest legacy version, and the connection is theirs until they
//     leave;
//   - modern clients (2026-07-28 and later) send no handshake: every
//     request carries its protocol version, client capabilities and client
//     information in params._meta, server/discover tells them the versions
//     and capabilities, and a request at a version the server does not
//     support gets -32022 with the supported list.
//
// The SDK serves both; what skillgate takes off the stream before the SDK
// (the raw relay of capability calls, the Skills extension's methods) reads
// a request's _meta to serve a modern request on its own, without waiting
// for a handshake that never comes. skillgate's session (loaded skills,
// /workspace) is the process's on stdio and the Skillgate-Session header's
// over HTTP, for both generations.

// ModernProtocol is the first protocol version without the initialize
// handshake (SEP-2575): a request at it or later carries its version in
// params._meta.
const ModernProtocol = "2026-07-28"

// The params._meta keys of a modern request (2026-07-28), as the SDK
// names them.
const (
	MetaProtocolVersion    = mcp.MetaKeyProtocolVersion
	MetaClientCapabilities = mcp.MetaKeyClientCapabilities
	MetaClientInfo         = mcp.MetaKeyClientInfo
)

// CodeUnsupportedProtocolVersion is the JSON-RPC error of a request at a
// protocol version the server does not support (2026-07-28).
const CodeUnsupportedProtocolVersion = mcp.CodeUnsupportedProtocolVersion

// SupportedVersions returns the protocol versions skillgate serves, newest
// first: those of the SDK.
func SupportedVersions() []string { return mcp.SupportedProtocolVersions() }

// era is what a request's params._meta says of its protocol generation.
type era int

const (
	// eraLegacy: no modern protocol version; the connection's handshake
	// decides whether the request may be served.
	eraLegacy era = iota
	// eraModern: a supported modern version with the client's
	// capabilities: the request stands on its own.
	eraModern
	// eraRefused: a modern version the server does not support, or a
	// modern _meta without client capabilities; the SDK answers it with
	// the error the protocol asks for.
	eraRefused
)

var metaKeys = []string{MetaProtocolVersion, MetaClientCapabilities}

// requestEra reads the raw params._meta of a request (nil when absent).
// Like the SDK, it takes a version below ModernProtocol, or none, as
// legacy.
func requestEra(meta []byte, supported []string) era {
	if len(meta) == 0 {
		return eraLegacy
	}
	var vals [2][]byte
	if !jsonscan.Object(meta, metaKeys, vals[:]) {
		var m map[string]json.RawMessage
		if json.Unmarshal(meta, &m) != nil {
			return eraLegacy
		}
		vals[0], vals[1] = m[MetaProtocolVersion], m[MetaClientCapabilities]
	}
	if vals[0] == nil {
		return eraLegacy
	}
	v, ok := jsonscan.PlainString(vals[0])
	if !ok && json.Unmarshal(vals[0], &v) != nil {
		return eraLegacy
	}
	if v < ModernProtocol {
		return eraLegacy
	}
	if !slices.Contains(supported, v) || len(bytes.TrimSpace(vals[1])) == 0 || bytes.TrimSpace(vals[1])[0] != '{' {
		return eraRefused
	}
	return eraModern
}

// IsModernRequest reports whether body, one JSON-RPC request, is of the
// 2026-07-28 generation: its params._meta names a protocol version of
// ModernProtocol or later, supported or not (the SDK answers one it does
// not serve with the error the protocol asks for). Transports that route
// the two generations apart (serve's /mcp) decide with it.
func IsModernRequest(body []byte) bool {
	var req struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	return requestEra(paramsMeta(req.Params), SupportedVersions()) != eraLegacy
}

// paramsMeta returns the raw params._meta of a JSON-RPC request's params,
// or nil.
func paramsMeta(params []byte) []byte {
	if len(params) == 0 {
		return nil
	}
	var v [1][]byte
	if jsonscan.Object(params, metaOnly, v[:]) {
		return v[0]
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Meta
}

var metaOnly = []string{"_meta"}

var markDiscover = []byte(`"server/discover"`)

// discoverWithoutVersion answers a server/discover request that carries no
// modern protocol version, which the SDK would refuse as an unknown method
// (a client would then take skillgate for a server of the initialize
// generation): with -32022 and the versions skillgate supports, as the
// 2026-07-28 specification answers a request at a version the server does
// not serve, so that the client retries at one of them. It reports whether
// it consumed line.
func (c *Conn) discoverWithoutVersion(w *jsonrpcline.Writer, line []byte) bool {
	if !bytes.Contains(line, markDiscover) {
		return false
	}
	var req jsonrpcline.Request
	if json.Unmarshal(line, &req) != nil || req.JSONRPC != "2.0" || req.Method != "server/discover" || !isRequestID(req.ID) {
		return false
	}
	meta := paramsMeta(req.Params)
	if requestEra(meta, c.g.versions) != eraLegacy {
		return false // the SDK answers it (or refuses the version itself)
	}
	requested := ""
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) == nil {
		_ = json.Unmarshal(m[MetaProtocolVersion], &requested)
	}
	if err := w.WriteLine(respHead, req.ID, respError, unsupportedVersion(c.g.versions, requested), respTail); err != nil {
		c.g.log.Warn("writing a JSON-RPC error failed", "session", c.sess.ID(), "err", err)
	}
	return true
}

// unsupportedMessage is the message of the -32022 error.
func unsupportedMessage(requested string) string {
	if requested == "" {
		return "Unsupported protocol version: server/discover needs params._meta[\"" + MetaProtocolVersion + "\"] of " + ModernProtocol +
			" or later (and the client's capabilities); clients of earlier versions open with initialize"
	}
	return "Unsupported protocol version " + strconv.Quote(requested) + "; data.supported lists the versions served"
}

// unsupportedVersion is the JSON of the -32022 error object for a request
// at version requested ("" when it named none).
func unsupportedVersion(supported []string, requested string) []byte {
	type data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	b, _ := json.Marshal(struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    data   `json:"data"`
	}{CodeUnsupportedProtocolVersion,
		unsupportedMessage(requested),
		data{supported, requested}})
	return b
}

// The cache hints of the 2026-07-28 list results (tools/list,
// prompts/list, resources/list, resources/templates/list), of
// resources/read and of server/discover (SEP-2549).
const (
	// ListCacheScope: what a connection lists (the principal's capability
	// tools, the skills its tier may load in load_skill's description,
	// its session's disclosure) depends on who asks, so no result may be
	// shared across tokens.
	ListCacheScope = "private"
	// ListTTL is the ttlMs of the standard list results: 0, re-read each
	// time. What they list changes at any moment, not only with the
	// registry: a policy edit, a grant, a credential going dormant, a
	// skill loaded; a client that cached tools/list would keep calling a
	// tool a policy has just forbidden (clients such as the Go SDK's
	// honour ttlMs). The Skills extension's lists, which follow the
	// registry alone, have their own (mcpskills.DefaultTTL).
	ListTTL = 0
	// DiscoverTTL is server/discover's: a minute, since the versions and
	// capabilities a server offers change only with its binary.
	DiscoverTTL = 60000
)

// setCacheable is the SDK's ServerOptions.SetCacheable: every cacheable
// result skillgate's server sends is private, with ListTTL for lists,
// DiscoverTTL for server/discover, and 0 (re-read each time) for the
// session's own resources (its disclosure and description change as
// skills load).
func setCacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	c.CacheScope = ListCacheScope
	if r, ok := req.(*mcp.ReadResourceRequest); ok {
		if r.Params != nil && (r.Params.URI == DisclosureURI || r.Params.URI == SessionURI) {
			c.TTLMs = 0
		}
		return // a skill file's: mcpskills decides
	}
	if _, ok := req.(*mcp.DiscoverRequest); ok {
		c.TTLMs = DiscoverTTL
		return
	}
	c.TTLMs = ListTTL
}

var (
	completeHead  = []byte(`{"resultType":"complete",`)
	completeEmpty = []byte(`{"resultType":"complete"}`)
	markResType   = []byte(`"resultType"`)
)

// withResultType returns the parts that write res, a tools/call result
// object relayed as sent, with "resultType": "complete", which a modern
// server puts in every result (an upstream server of the initialize
// generation does not): head then body. A result that has the member
// already is written as it is.
func withResultType(res []byte) (head, body []byte) {
	res = bytes.TrimSpace(res)
	if len(res) < 2 || res[0] != '{' {
		return nil, res
	}
	if bytes.Contains(res, markResType) {
		var v [1][]byte
		if !jsonscan.Object(res, resTypeOnly, v[:]) || v[0] != nil {
			return nil, res // it has one (or the scan cannot tell: as sent)
		}
	}
	rest := bytes.TrimLeft(res[1:], " \t\r\n")
	if len(rest) > 0 && rest[0] == '}' {
		return nil, completeEmpty
	}
	return completeHead, rest
}

var resTypeOnly = []string{"resultType"}

// VersionError returns the JSON-RPC error object the SDK would answer a
// request with these params with, when it is one of 2026-07-28 or later
// that the SDK refuses: -32022 with the supported versions for a version
// skillgate does not serve, -32602 without the client's capabilities; nil
// for any other request. Transports that answer a method before the SDK
// (the Skills extension's) answer such a request with it.
func VersionError(params json.RawMessage) json.RawMessage {
	return versionError(paramsMeta(params), SupportedVersions())
}

func versionError(meta []byte, supported []string) json.RawMessage {
	if requestEra(meta, supported) != eraRefused {
		return nil
	}
	var m map[string]json.RawMessage
	var v string
	if json.Unmarshal(meta, &m) == nil && json.Unmarshal(m[MetaProtocolVersion], &v) == nil && !slices.Contains(supported, v) {
		return unsupportedVersion(supported, v)
	}
	b, _ := json.Marshal(struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{jsonrpc.CodeInvalidParams, "missing or invalid _meta field \"" + MetaClientCapabilities + "\""})
	return b
}
