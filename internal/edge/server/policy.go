package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// MaxPolicyRequestBytes bounds a request body of the policy API.
const MaxPolicyRequestBytes = 64 << 10

// MountPolicy serves approval grants and policy replays from the engine e.
// Response bodies are what the matching CLI command prints with --json:
//
//	GET    /v1/grants        skillgate grant ls --json            (T0; T1: its tenant's)
//	POST   /v1/grants        skillgate grant add … --json         (T0)
//	DELETE /v1/grants/{id}   skillgate grant revoke ID → {"revoked": id} (T0)
//	POST   /v1/policy/test   skillgate policy test … --json       (T0; T1: its tenant's agents)
//
// A T1 token lists the grants whose principal names its tenant (a pattern
// over several tenants, "*" or "*/reviewer", is an operator's: T0 only)
// and replays decisions for principals (and parents) of its tenant only.
//
// POST /v1/grants takes {"principal", "capability", "args", "level",
// "expires_at" (RFC 3339) or "expires" (a duration: "2h", "7d"), "uses",
// "reason"}; the grant is recorded as created by the calling operator, and
// adding and revoking are audited (grant.add, grant.revoke). Capabilities
// name their skill here ("acme/notes:fs/write_file", or a pattern such as
// "acme/notes:fs/*"): unlike the CLI, the API does not complete the short
// form "fs/write_file".
// POST /v1/policy/test takes {"principal" (Agent::"t/a", t/a or an agent
// id), "tier", "parent", "capability", "args"}; it has no side effects.
// Errors are {"error": message}: 400 for a malformed request or grant, 403
// for a token of the wrong tier, 404 for an unknown grant.
func (s *Server) MountPolicy(e *policy.Engine) {
	h := &policyAPI{e: e}
	s.handle("GET /v1/grants", s.policyAPI(h.list))
	s.handle("POST /v1/grants", s.policyAPI(h.add))
	s.handle("DELETE /v1/grants/{id}", s.policyAPI(h.revoke))
	s.handle("POST /v1/policy/test", s.policyAPI(h.test))
}

type policyAPI struct{ e *policy.Engine }

// errBadPolicyRequest marks a malformed request body.
var errBadPolicyRequest = errors.New("bad request")

func (s *Server) policyAPI(h func(*http.Request, capability.Scope) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := scopeFrom(r)
		v, err := h(r, p)
		status := http.StatusOK
		switch {
		case errors.Is(err, errBadPolicyRequest), errors.Is(err, policy.ErrInvalidGrant), errors.Is(err, policy.ErrInvalidPrincipal), errors.Is(err, policy.ErrInvalidCapability):
			status, v = http.StatusBadRequest, map[string]string{"error": err.Error()}
		case errors.Is(err, policy.ErrGrantNotFound):
			status, v = http.StatusNotFound, map[string]string{"error": err.Error()}
		case err != nil:
			s.fail(w, r, err)
			return
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(b.Bytes())
	})
}

func decodePolicyBody(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxPolicyRequestBytes+1))
	if err != nil {
		return err
	}
	if len(body) > MaxPolicyRequestBytes {
		return fmt.Errorf("%w: request body larger than %d bytes", errBadPolicyRequest, MaxPolicyRequestBytes)
	}
	if err := strictjson.Decode(body, v, maxRequestDepth); err != nil {
		return fmt.Errorf("%w: request body: %v", errBadPolicyRequest, err)
	}
	return nil
}

// list is GET /v1/grants: the grants the scope reaches. A grant's tenant
// is its principal's up to the first '/'; a pattern there ("*", "a*")
// names several tenants and is reached by T0 only.
func (h *policyAPI) list(_ *http.Request, sc capability.Scope) (any, error) {
	gs := h.e.Grants()
	return slices.DeleteFunc(gs, func(g policy.Grant) bool {
		tenant, _, _ := strings.Cut(g.Principal, "/")
		return !sc.Allows(tenant)
	}), nil
}

type grantRequest struct {
	Principal  string               `json:"principal"`
	Capability string               `json:"capability"`
	Args       map[string][]string  `json:"args"`
	Level      capability.RiskLevel `json:"level"`
	ExpiresAt  *time.Time           `json:"expires_at"`
	Expires    string               `json:"expires"`
	Uses       int                  `json:"uses"`
	Reason     string               `json:"reason"`
}

func (h *policyAPI) add(r *http.Request, sc capability.Scope) (any, error) {
	var req grantRequest
	if err := decodePolicyBody(r, &req); err != nil {
		return nil, err
	}
	exp := req.ExpiresAt
	if req.Expires != "" {
		if exp != nil {
			return nil, fmt.Errorf("%w: give expires or expires_at, not both", errBadPolicyRequest)
		}
		d, err := policy.ParseDuration(req.Expires)
		if err != nil {
			return nil, fmt.Errorf("%w: expires %q: a duration like 30m, 2h or 7d", errBadPolicyRequest, req.Expires)
		}
		t := time.Now().Add(d)
		exp = &t
	}
	return h.e.AddGrant(r.Context(), policy.Grant{Principal: req.Principal, Capability: req.Capability, Args: req.Args, Level: req.Level,
		ExpiresAt: exp, Uses: req.Uses, Reason: req.Reason, CreatedBy: operator(sc.Principal)})
}

func (h *policyAPI) revoke(r *http.Request, sc capability.Scope) (any, error) {
	id := r.PathValue("id")
	if err := h.e.RevokeGrant(r.Context(), id, operator(sc.Principal)); err != nil {
		return nil, err
	}
	return revokeResponse{Revoked: id}, nil
}

type testRequest struct {
	Principal  string          `json:"principal"`
	Tier       skill.AgentTier `json:"tier"`
	Parent     string          `json:"parent"`
	Capability string          `json:"capability"`
	Args       map[string]any  `json:"args"`
}

// test is POST /v1/policy/test, for a principal (and parent) of a tenant
// the scope reaches.
func (h *policyAPI) test(r *http.Request, sc capability.Scope) (any, error) {
	var req testRequest
	if err := decodePolicyBody(r, &req); err != nil {
		return nil, err
	}
	tenant, agent, err := policy.ParsePrincipalID(req.Principal)
	if err != nil {
		return nil, err
	}
	ref, err := capability.ParseRef(req.Capability)
	if err != nil {
		return nil, err
	}
	if req.Tier == "" {
		req.Tier = skill.T3
	}
	if req.Args == nil {
		req.Args = map[string]any{}
	}
	p := capability.Principal{Tenant: tenant, Agent: agent, Tier: req.Tier, Parent: req.Parent}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := sc.Check(p.Tenant); err != nil {
		return nil, err
	}
	if parentTenant, _, _ := strings.Cut(p.Parent, "/"); p.Parent != "" {
		if err := sc.Check(parentTenant); err != nil {
			return nil, fmt.Errorf("parent: %w", err)
		}
	}
	return policy.TestReport{Principal: p, Capability: ref.String(), Args: req.Args, Decision: h.e.Test(r.Context(), p, ref, req.Args)}, nil
}
