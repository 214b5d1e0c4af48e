package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// MaxInstallRequestBytes bounds a request body of the install API.
const MaxInstallRequestBytes = 64 << 10

// MountInstalls serves the install flow under /v1/installs, for human
// operators (tokens of agent tier T0). Every response body is what the
// matching CLI command prints with --json, byte for byte:
//
//	GET  /v1/installs                 skillgate pending --all --json
//	GET  /v1/installs/pending         skillgate pending --json
//	GET  /v1/installs/review?name=N   skillgate review N --json
//	POST /v1/installs                 {"path"}: skillgate install PATH --json
//	POST /v1/installs/complete        {"name","capability","riskLevel","sideEffects","dataEgress","why","force"}
//	POST /v1/installs/approve         {"name","only"}
//	POST /v1/installs/reject          {"name","why"}
//	POST /v1/installs/enable          {"name"}; likewise disable, remove, recheck
//
// Errors are {"error": message} with 400 (a bad request), 404 (no such
// install), 409 (blocked, or not possible in the current state) or 422 (an
// invalid skill or source).
func (s *Server) MountInstalls(svc *install.Service) {
	h := &installAPI{s: s, svc: svc}
	s.handle("GET /v1/installs", s.installAPI(h.list))
	s.handle("GET /v1/installs/pending", s.installAPI(h.pending))
	s.handle("GET /v1/installs/review", s.installAPI(h.review))
	s.handle("POST /v1/installs", s.installAPI(h.install))
	s.handle("POST /v1/installs/{op}", s.installAPI(h.action))
}

type installAPI struct {
	s   *Server
	svc *install.Service
}

// installAPI authenticates an operator and maps install errors to statuses.
func (s *Server) installAPI(h func(*http.Request, string) (any, error)) http.Handler {
	return s.operatorAPI(install.HTTPStatus, h)
}

// operatorAPI serves h to human operators (routes of access
// capability.AccessOperator, which guard admits for T0 tokens only):
// status maps h's errors to HTTP statuses (others are internal), and h's
// value is the JSON body.
func (s *Server) operatorAPI(status func(error) (int, bool), h func(*http.Request, string) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc, _ := scopeFrom(r)
		p := sc.Principal
		v, err := h(r, operator(p))
		if err != nil {
			if code, ok := status(err); ok {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				_ = jsonout.Write(w, map[string]string{"error": err.Error()})
				return
			}
			s.fail(w, r, err)
			return
		}
		var b bytes.Buffer
		if err := jsonout.Write(&b, v); err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(b.Bytes())
	})
}

func operator(p capability.Principal) string { return "operator:" + p.String() }

// actionRequest is the body of POST /v1/installs/{op}.
type actionRequest struct {
	Name        string   `json:"name"`
	Path        string   `json:"path"`
	Capability  string   `json:"capability"`
	RiskLevel   string   `json:"riskLevel"`
	SideEffects string   `json:"sideEffects"`
	DataEgress  string   `json:"dataEgress"`
	Why         string   `json:"why"`
	Force       bool     `json:"force"`
	Only        []string `json:"only"`
	// Target is what suppress covers: RULE[@FILE[:LINE]].
	Target string `json:"target"`
	// AllowDynamic and AllowTools name published skills (serverId/uri)
	// whose "dynamic" resources, and whose allowed-tools, the operator
	// approves (approve only).
	AllowDynamic []string `json:"allowDynamic"`
	AllowTools   []string `json:"allowTools"`
	// Settings are the operator's constraints and call approval defaults
	// per capability (approve only; by and at are the server's to fill).
	Settings []manifest.Setting `json:"settings"`
}

// maxRequestDepth bounds the nesting of a REST request body.
const maxRequestDepth = 16

func decodeRequest(r *http.Request) (actionRequest, error) {
	return decodeRequestAs[actionRequest](r)
}

// decodeRequestAs reads a request body of the operator APIs as a T:
// bounded, strict (no unknown or repeated member).
func decodeRequestAs[T any](r *http.Request) (T, error) {
	var req T
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxInstallRequestBytes+1))
	if err != nil {
		return req, err
	}
	if len(body) > MaxInstallRequestBytes {
		return req, fmt.Errorf("%w: request body larger than %d bytes", install.ErrUsage, MaxInstallRequestBytes)
	}
	if err := strictjson.Decode(body, &req, maxRequestDepth); err != nil {
		return req, fmt.Errorf("%w: request body: %v", install.ErrUsage, err)
	}
	return req, nil
}

func (h *installAPI) list(r *http.Request, _ string) (any, error) { return h.svc.List(r.Context()) }

func (h *installAPI) pending(r *http.Request, _ string) (any, error) {
	return h.svc.Pending(r.Context())
}

func (h *installAPI) review(r *http.Request, _ string) (any, error) {
	name := r.URL.Query().Get("name")
	if name == "" {
		return nil, fmt.Errorf("%w: give the skill as ?name=KEY", install.ErrUsage)
	}
	return h.svc.Review(r.Context(), name)
}

func (h *installAPI) install(r *http.Request, actor string) (any, error) {
	req, err := decodeRequest(r)
	if err != nil {
		return nil, err
	}
	if req.Path == "" {
		return nil, fmt.Errorf("%w: give {\"path\": PATH}, a skill directory, .tar.gz or .zip on the server", install.ErrUsage)
	}
	return h.svc.Install(r.Context(), req.Path, actor)
}

func (h *installAPI) action(r *http.Request, actor string) (any, error) {
	req, err := decodeRequest(r)
	if err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, fmt.Errorf("%w: give {\"name\": KEY}", install.ErrUsage)
	}
	ctx := r.Context()
	switch op := r.PathValue("op"); op {
	case "complete":
		return h.svc.Complete(ctx, req.Name, install.Completion{Capability: req.Capability, RiskLevel: req.RiskLevel,
			SideEffects: req.SideEffects, DataEgress: req.DataEgress, Why: req.Why, Force: req.Force}, actor)
	case "approve":
		return h.svc.ApproveWith(ctx, req.Name, install.ApproveOptions{Only: req.Only, AllowDynamic: req.AllowDynamic, AllowTools: req.AllowTools, Settings: req.Settings}, actor)
	case "reject":
		return h.svc.Reject(ctx, req.Name, req.Why, actor)
	case "suppress":
		return h.svc.Suppress(ctx, req.Name, req.Target, req.Why, actor)
	case "enable":
		return h.svc.Enable(ctx, req.Name, actor)
	case "disable":
		return h.svc.Disable(ctx, req.Name, actor)
	case "remove":
		return h.svc.Remove(ctx, req.Name, actor)
	case "recheck":
		return h.svc.Recheck(ctx, req.Name, actor)
	default:
		return nil, fmt.Errorf("%w: unknown operation %q; use complete, approve, reject, suppress, enable, disable, remove or recheck", errNotFound, strings.TrimSpace(op))
	}
}
