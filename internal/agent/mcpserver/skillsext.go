package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skillsext"
	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
	"github.com/skillgate/skillgate/internal/platform/jsonscan"
)

// The MCP Skills extension (package mcpskills): every connection declares
// it (with directoryRead) in its capabilities and serves skill files as the
// resource template skill://{+path}, read through the SDK. The SDK refuses
// the extension's own methods (skills/list, skills/get,
// resources/directory/read) before any handler sees them, so they are
// taken off the stdio stream here (skillsRequest) and off HTTP requests by
// package server ([Gateway.SkillsRequest]), and answered as raw JSON-RPC.

// SkillFilesTemplate is the resource template of skill files.
const SkillFilesTemplate = "skill://{+path}"

// addSkillFiles registers the skill file template.
func (c *Conn) addSkillFiles() {
	c.server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: SkillFilesTemplate, Name: "skill-files", Title: "Skill files",
		Description: "The files of the skills you may see, as the MCP Skills extension serves them (skills/list lists them with their digests).",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return c.g.skills.Read(ctx, c.sess.Principal(), req.Params.URI)
	})
}

// SkillsRequest answers one request of the extension's own methods
// ([skillsext.IsMethod]) for principal p. The error is a *jsonrpc.Error.
func (g *Gateway) SkillsRequest(ctx context.Context, p capability.Principal, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := g.skills.Handle(ctx, p, method, params)
	if err != nil {
		return nil, g.agentError(nil, err)
	}
	return g.agentJSON(res), nil
}

// ConnOfMCPSession returns the open connection whose MCP session (the
// streamable HTTP Mcp-Session-Id) is id, or nil.
func (g *Gateway) ConnOfMCPSession(id string) *Conn {
	if id == "" {
		return nil
	}
	for _, c := range g.connsOf("") {
		for ss := range c.server.Sessions() {
			if ss.ID() == id {
				return c
			}
		}
	}
	return nil
}

var (
	markSkills  = []byte(`"skills/`)
	markReadDir = []byte(`"resources/directory/read"`)
)

// skillsRequest is the tap of a stdio connection for the extension's
// methods: a request (once the SDK's session is ready, as for relayed
// calls) is answered on a goroutine of its own (at most maxSkillsInFlight
// at once) and written back with its id; a notification of those methods
// is dropped.
func (c *Conn) skillsRequest(w *jsonrpcline.Writer, line []byte) bool {
	if !bytes.Contains(line, markSkills) && !bytes.Contains(line, markReadDir) {
		return false
	}
	// The usual envelope is read without decoding: a tools/call whose
	// arguments merely mention "skills/… is left to the relay at once.
	var top [4][]byte
	if jsonscan.Object(line, wireKeys, top[:]) {
		if m, ok := jsonscan.PlainString(top[2]); ok && !skillsext.IsMethod(m) {
			return false
		}
	}
	var req jsonrpcline.Request
	if json.Unmarshal(line, &req) != nil || req.JSONRPC != "2.0" || !skillsext.IsMethod(req.Method) {
		return false
	}
	if len(req.ID) == 0 {
		return true // a notification: nothing to answer
	}
	if !isRequestID(req.ID) {
		return false
	}
	// A modern request (2026-07-28) stands on its own; another waits for
	// the SDK's session to be ready, as the SDK's own methods do.
	meta := paramsMeta(req.Params)
	e := requestEra(meta, c.g.versions)
	if e == eraRefused {
		if err := w.WriteLine(respHead, req.ID, respError, versionError(meta, c.g.versions), respTail); err != nil {
			c.g.log.Warn("writing a JSON-RPC error failed", "session", c.sess.ID(), "err", err)
		}
		return true
	}
	c.mu.Lock()
	ready := !c.closed && (e == eraModern || c.sdkReadyLocked())
	c.mu.Unlock()
	if !ready {
		return false // the SDK refuses it before the handshake
	}
	answer := func() {
		res, err := c.g.SkillsRequest(c.relayBase, c.sess.Principal(), req.Method, req.Params)
		var werr error
		if err != nil {
			werr = w.WriteLine(respHead, req.ID, respError, wireError(err), respTail)
		} else {
			werr = w.WriteLine(respHead, req.ID, respResult, res, respTail)
		}
		if werr != nil {
			c.g.log.Warn("writing a skills extension response failed", "session", c.sess.ID(), "err", werr)
		}
	}
	select {
	case c.skillsSlots <- struct{}{}:
		go func() {
			defer func() { <-c.skillsSlots }()
			answer()
		}()
	default:
		answer() // as many in flight as allowed: the reader waits
	}
	return true
}

// maxSkillsInFlight bounds the extension's requests a stdio connection
// answers at once; more wait, holding up the connection's reader.
const maxSkillsInFlight = 4

// wireError is the JSON of a JSON-RPC error object for err.
func wireError(err error) []byte {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		je = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	b, _ := json.Marshal(struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{je.Code, je.Message})
	return b
}

// SkillsError is the JSON-RPC error object of an error SkillsRequest
// returned, for writing a response.
func SkillsError(err error) json.RawMessage { return wireError(err) }
