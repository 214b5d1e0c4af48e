package server

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
)

// maxModernPeek bounds how much of a POST body without the
// Mcp-Protocol-Version header is read to find a modern request's
// params._meta protocol version; a larger body goes on as a legacy one.
const maxModernPeek = 64 << 10

var markMetaVersion = []byte(`"` + mcpserver.MetaProtocolVersion + `"`)

// modern serves the requests of modern clients (protocol 2026-07-28 and
// later: no initialize, no Mcp-Session-Id, the protocol version in the
// Mcp-Protocol-Version header and in params._meta) with the SDK's
// stateless handler, on the same endpoint as legacy clients, whose
// requests go on to legacy. The skillgate session is the Skillgate-Session
// header's, sent on every request (a request without it is served without
// a session: lists, reads and capability calls work, loading skills and
// writing /workspace answer a tool error that asks for the header; see
// [mcpserver.Gateway.ConnectStateless]); the principal is the bearer
// token's, and a session of another principal is refused (403), as for
// legacy clients.
func (s *Server) modern(h, legacy http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") != "" || !isModern(r) {
			legacy.ServeHTTP(w, r)
			return
		}
		p, ok := s.connectingPrincipal(w, r)
		if !ok {
			return
		}
		sid := r.Header.Get(SessionHeader)
		conn, release, err := s.opts.Gateway.ConnectStateless(r.Context(), p, sid, s.opts.SessionTimeout)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		defer release()
		if sid != "" {
			w.Header().Set(SessionHeader, sid)
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), connKey{}, conn)))
	})
}

// isModern reports whether r is a modern client's request: its
// Mcp-Protocol-Version header names 2026-07-28 or later, or, without the
// header, a POSTed request's params._meta does (the SDK then refuses it
// for the missing header, as the protocol asks, rather than answering it
// as a legacy request).
func isModern(r *http.Request) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v >= mcpserver.ModernProtocol
	}
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxModernPeek+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	return err == nil && len(head) <= maxModernPeek && bytes.Contains(head, markMetaVersion) && mcpserver.IsModernRequest(head)
}
