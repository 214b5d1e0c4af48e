package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// Error kinds of the HTTP layer.
var (
	errUnauthorized = errors.New("unauthorized: send 'Authorization: Bearer <token>' with a token from 'skillgate token add'")
	errInvalidToken = fmt.Errorf("%w (this token is unknown: mistyped, or removed with 'skillgate token rm')", errUnauthorized)
	errForbidden    = capability.ErrForbidden
	errNotFound     = errors.New("not found")
)

// statusClientClosed is what the server answers (and logs) when the client
// gave up: not a server fault.
const statusClientClosed = 499

// statuses maps error kinds to HTTP statuses, in one place. Errors of other
// kinds are internal: logged with their cause, shown as "internal error".
var statuses = []struct {
	kind   error
	status int
}{
	{errUnauthorized, http.StatusUnauthorized},
	{errForbidden, http.StatusForbidden},
	{errNotFound, http.StatusNotFound},
	{session.ErrSessionUnavailable, http.StatusForbidden},
	{session.ErrInvalidSessionID, http.StatusBadRequest},
	{session.ErrInvalidPrincipal, http.StatusBadRequest},
	{context.Canceled, statusClientClosed},
	{context.DeadlineExceeded, http.StatusGatewayTimeout},
}

// fail writes err as a JSON error {"error": message} with its status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := http.StatusInternalServerError, "internal error; the details are in the skillgate log"
	for _, st := range statuses {
		if errors.Is(err, st.kind) {
			status, msg = st.status, err.Error()
			break
		}
	}
	switch status {
	case http.StatusInternalServerError:
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", s.challenge(r, err))
	}
	msg = strings.TrimSpace(msg)
	writeJSON(w, status, errorBody{Error: msg})
}

// challenge is the WWW-Authenticate value of a 401 to r (RFC 6750): the
// realm, error="invalid_token" when a token was sent but is not valid, and
// resource_metadata, the URL of the protected resource metadata (RFC 9728,
// section 5.1) from which an MCP client learns that a bearer token is
// wanted and that no authorization server issues one.
func (s *Server) challenge(r *http.Request, err error) string {
	meta := `, resource_metadata="` + s.resourceMetadataURL(r) + `"`
	if errors.Is(err, errInvalidToken) {
		return `Bearer realm="skillgate", error="invalid_token"` + meta
	}
	return `Bearer realm="skillgate"` + meta
}

// codeUnauthorized is the JSON-RPC error code of a refused /mcp request
// (the implementation-defined server-error range).
const codeUnauthorized = -32001

// failMCP answers a request to /mcp without a valid token the way an MCP
// client expects: 401 with the WWW-Authenticate challenge and a JSON-RPC
// error response whose id is null (the request was not read).
func (s *Server) failMCP(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("WWW-Authenticate", s.challenge(r, err))
	writeJSON(w, http.StatusUnauthorized, map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": codeUnauthorized, "message": err.Error()},
	})
}
