package server

import (
	"fmt"
	"net/http"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
)

// MountChanges serves the changes queue under /v1/changes, for human
// operators (tokens of agent tier T0). Response bodies are what the
// matching CLI command prints with --json:
//
//	GET  /v1/changes[?all=true]   skillgate changes ls [--all] --json
//	GET  /v1/changes/show?id=ID   skillgate changes show ID --json
//	POST /v1/changes/approve      {"id","why","smokeCall"}: skillgate changes approve ID --why WHY [--smoke-call …] --json
//	POST /v1/changes/reject       {"id","why"}: skillgate changes reject ID --why WHY --json
//
// Errors are {"error": message} with 400 (no reason, a bad request), 404
// (no such change) or 409 (already decided, or it cannot be applied as
// the registry stands: the message says what to do first).
func (s *Server) MountChanges(svc *change.Service) {
	h := &changesAPI{svc: svc}
	s.handle("GET /v1/changes", s.changesAPI(h.list))
	s.handle("GET /v1/changes/show", s.changesAPI(h.show))
	s.handle("POST /v1/changes/{op}", s.changesAPI(h.decide))
}

type changesAPI struct{ svc *change.Service }

// changeRequest is the body of POST /v1/changes/{op}.
type changeRequest struct {
	ID  string `json:"id" required:"true" description:"the change's ID (skillgate changes ls)"`
	Why string `json:"why" description:"why; required for promote_provider and for rejections"`
	// SmokeCall is approve's optional call through each backend of a
	// promote_provider change before it is registered (--smoke-call).
	SmokeCall *change.SmokeCall `json:"smokeCall,omitempty" description:"approve only: a read-only call of the change's executor through each of its backends before anything is registered"`
}

// changeIDParams is GET /v1/changes/show's query.
type changeIDParams struct {
	ID string `query:"id" required:"true" description:"the change's ID: a number, or update:KEY@DIGEST12"`
}

// changesListParams is GET /v1/changes's query.
type changesListParams struct {
	All bool `query:"all" description:"list decided changes too"`
}

// changesAPI authenticates an operator and maps the queue's errors (and,
// for an update, the install flow's) to statuses.
func (s *Server) changesAPI(h func(*http.Request, string) (any, error)) http.Handler {
	return s.operatorAPI(change.HTTPStatus, h)
}

func (h *changesAPI) list(r *http.Request, _ string) (any, error) {
	items, err := h.svc.List(r.Context(), r.URL.Query().Get("all") == "true")
	if items == nil && err == nil {
		items = []change.Item{}
	}
	return items, err
}

func (h *changesAPI) show(r *http.Request, _ string) (any, error) {
	id := r.URL.Query().Get("id")
	if id == "" {
		return nil, fmt.Errorf("%w: give the change as ?id=ID", install.ErrUsage)
	}
	return h.svc.Get(r.Context(), id)
}

func (h *changesAPI) decide(r *http.Request, actor string) (any, error) {
	req, err := decodeRequestAs[changeRequest](r)
	if err != nil {
		return nil, err
	}
	if req.ID == "" {
		return nil, fmt.Errorf("%w: give the change as {\"id\": ID}", install.ErrUsage)
	}
	switch r.PathValue("op") {
	case "approve":
		var o change.ApplyOptions
		if c := req.SmokeCall; c != nil {
			// The CLI's checks, on the CLI's spelling of the call.
			if o.SmokeCall, err = change.ParseSmokeCall(c.Executor + "=" + string(c.Arguments)); err != nil {
				return nil, err
			}
		}
		return h.svc.ApproveWith(r.Context(), req.ID, req.Why, actor, o)
	case "reject":
		return h.svc.Reject(r.Context(), req.ID, req.Why, actor)
	}
	return nil, fmt.Errorf("%w: unknown operation %q: approve or reject", install.ErrNotFound, r.PathValue("op"))
}
