package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/skillsext"
	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
)

// maxSkillsRequest bounds how much of a POST body is read to recognise a
// request of the MCP Skills extension; its requests are far smaller, so a
// larger body is passed on to the SDK untouched.
const maxSkillsRequest = 64 << 10

var (
	markSkillsMethod  = []byte(`"skills/`)
	markReadDirMethod = []byte(`"resources/directory/read"`)
)

// skillsExt answers the MCP Skills extension's own methods (skills/list,
// skills/get, resources/directory/read), which the SDK's handler refuses
// as unknown, before the request reaches it: a POSTed JSON-RPC request of
// one of them is answered as application/json for the authenticated
// principal. With an Mcp-Session-Id the session must exist and belong to
// that principal, as the SDK requires of every request (404 "session not
// found", 403 "session user mismatch"). Everything else goes on to next
// with its body intact. A request of protocol 2026-07-28 or later at a
// version skillgate does not serve is answered -32022, as the SDK answers
// its own methods.
func (s *Server) skillsExt(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		head, err := io.ReadAll(io.LimitReader(r.Body, maxSkillsRequest+1))
		if err != nil {
			http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		if len(head) > maxSkillsRequest || (!bytes.Contains(head, markSkillsMethod) && !bytes.Contains(head, markReadDirMethod)) {
			next.ServeHTTP(w, r)
			return
		}
		var req jsonrpcline.Request
		if json.Unmarshal(head, &req) != nil || req.JSONRPC != "2.0" || !skillsext.IsMethod(req.Method) || len(req.ID) == 0 || string(req.ID) == "null" {
			next.ServeHTTP(w, r)
			return
		}
		p, ok := principalFrom(r.Context())
		if !ok {
			s.fail(w, r, errUnauthorized)
			return
		}
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			conn := s.opts.Gateway.ConnOfMCPSession(sid)
			if conn == nil {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			if conn.Session().Principal() != p {
				http.Error(w, "session user mismatch", http.StatusForbidden)
				return
			}
		}
		out := struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result,omitempty"`
			Error   json.RawMessage `json:"error,omitempty"`
		}{JSONRPC: "2.0", ID: req.ID}
		if verr := mcpserver.VersionError(req.Params); verr != nil {
			out.Error = verr
		} else if res, herr := s.opts.Gateway.SkillsRequest(r.Context(), p, req.Method, req.Params); herr != nil {
			out.Error = mcpserver.SkillsError(herr)
		} else {
			out.Result = res
		}
		writeJSON(w, http.StatusOK, out)
	})
}
