package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/swaggest/jsonschema-go"
	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi31"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// errorBody is every error response of the REST API.
type errorBody struct {
	Error string `json:"error"`
}

// healthResponse is GET /v1/health.
type healthResponse struct {
	// Connections is given to a request with a valid token only.
	Connections *int   `json:"connections,omitempty"`
	Status      string `json:"status" enum:"ok"`
}

// readyResponse is GET /v1/ready.
type readyResponse struct {
	Error  string `json:"error,omitempty"`
	Status string `json:"status" enum:"ready,not ready"`
}

// scanResponse is POST /v1/scan.
type scanResponse struct {
	Changed     bool `json:"changed"`
	Connections int  `json:"connections"`
}

// revokeResponse is DELETE /v1/grants/{id}.
type revokeResponse struct {
	Revoked string `json:"revoked"`
}

// Parameter structures of the routes that take them.
type (
	reviewParams struct {
		Name string `query:"name" required:"true" description:"the skill's key (category/name) or name, optionally @DIGEST-PREFIX"`
	}
	grantIDParams struct {
		ID string `path:"id" description:"the grant's id (skillgate grant ls)"`
	}
	installRequest struct {
		Path string `json:"path" required:"true" description:"a skill directory, .tar.gz or .zip on the server"`
	}
)

// apiOperation is one REST operation, as the OpenAPI document describes it.
type apiOperation struct {
	// pattern is the ServeMux pattern that serves it.
	pattern      string
	method, path string
	tag          string
	summary      string
	request      any   // parameters and body (tags json, query, path); nil: none
	response     any   // the 200 body
	errors       []int // statuses answered with an errorBody
	// access is who may call it and which tenants it reaches: the one
	// declaration that Server.handle enforces (through guard) and the
	// document states as x-skillgate-access and x-skillgate-tiers.
	access   capability.Access
	notReady bool // 503 with a readyResponse
}

// installOps are the operations of POST /v1/installs/{op}.
var installOps = []struct{ op, summary string }{
	{"complete", "Supply risk metadata the server left unknown (skillgate complete)"},
	{"approve", "Approve the proposed capabilities, or only some, and pin them (skillgate approve)"},
	{"reject", "Reject an install that is not approved (skillgate reject)"},
	{"suppress", "Suppress content-scan findings with a reason (skillgate suppress)"},
	{"enable", "Enable an approved install (skillgate enable)"},
	{"disable", "Disable an install (skillgate disable)"},
	{"remove", "Remove an install version and its files (skillgate remove)"},
	{"recheck", "Introspect the servers again; detect drift (skillgate recheck)"},
}

// apiOperations lists every REST route: the document is generated from
// this table and the Go types it names, and TestOpenAPICoversEveryRoute
// holds it to the routes the server registers.
func apiOperations() []apiOperation {
	installErrs := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity}
	policyErrs := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}
	ops := []apiOperation{
		{pattern: "GET /v1/health", method: http.MethodGet, path: "/v1/health", tag: "server", access: capability.AccessPublic,
			summary: "Liveness; with a valid token also the number of connections", response: healthResponse{}, errors: []int{http.StatusUnauthorized}},
		{pattern: "GET /v1/ready", method: http.MethodGet, path: "/v1/ready", tag: "server", access: capability.AccessPublic,
			summary: "Readiness: the store answers (503 with the reason when not)", response: readyResponse{}, errors: nil, notReady: true},
		{pattern: "GET /v1/openapi.json", method: http.MethodGet, path: "/v1/openapi.json", tag: "server", access: capability.AccessPublic,
			summary: "This document", response: map[string]any{}},
		{pattern: "POST /v1/scan", access: capability.AccessServer, method: http.MethodPost, path: "/v1/scan", tag: "server",
			summary: "Rescan the configured roots (tokens of tier T0 or T1)", response: scanResponse{},
			errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}},
		{pattern: "GET /v1/installs", access: capability.AccessOperator, method: http.MethodGet, path: "/v1/installs", tag: "installs",
			summary: "Every install, whatever its state (skillgate pending --all --json)", response: []install.Summary{}, errors: installErrs},
		{pattern: "GET /v1/installs/pending", access: capability.AccessOperator, method: http.MethodGet, path: "/v1/installs/pending", tag: "installs",
			summary: "Installs that need a human (skillgate pending --json)", response: []install.Summary{}, errors: installErrs},
		{pattern: "GET /v1/installs/review", access: capability.AccessOperator, method: http.MethodGet, path: "/v1/installs/review", tag: "installs",
			summary: "An install's review (skillgate review NAME --json)", request: reviewParams{}, response: install.Review{}, errors: installErrs},
		{pattern: "POST /v1/installs", access: capability.AccessOperator, method: http.MethodPost, path: "/v1/installs", tag: "installs",
			summary: "Install a skill from a path on the server (skillgate install PATH --json)", request: installRequest{}, response: install.Review{}, errors: installErrs},
		{pattern: "GET /v1/grants", access: capability.AccessTenant, method: http.MethodGet, path: "/v1/grants", tag: "policy",
			summary: "The grants: every tenant's for T0 tokens, its own tenant's for T1", response: []policy.Grant{}, errors: policyErrs},
		{pattern: "POST /v1/grants", access: capability.AccessOperator, method: http.MethodPost, path: "/v1/grants", tag: "policy",
			summary: "Add a grant, audited (tokens of tier T0)", request: grantRequest{}, response: policy.Grant{}, errors: policyErrs},
		{pattern: "DELETE /v1/grants/{id}", access: capability.AccessOperator, method: http.MethodDelete, path: "/v1/grants/{id}", tag: "policy",
			summary: "Revoke a grant, audited (tokens of tier T0)", request: grantIDParams{}, response: revokeResponse{}, errors: policyErrs},
		{pattern: "POST /v1/policy/test", access: capability.AccessTenant, method: http.MethodPost, path: "/v1/policy/test", tag: "policy",
			summary: "Decide a call without making it (T0 tokens; T1 tokens for principals of their tenant)", request: testRequest{}, response: policy.TestReport{}, errors: policyErrs},
	}
	changeErrs := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict}
	ops = append(ops,
		apiOperation{pattern: "GET /v1/changes", access: capability.AccessOperator, method: http.MethodGet, path: "/v1/changes", tag: "changes",
			summary: "The changes waiting for a human, or all with ?all=true (skillgate changes ls --json)", request: changesListParams{}, response: []change.Item{}, errors: changeErrs},
		apiOperation{pattern: "GET /v1/changes/show", access: capability.AccessOperator, method: http.MethodGet, path: "/v1/changes/show", tag: "changes",
			summary: "One change (skillgate changes show ID --json)", request: changeIDParams{}, response: change.Item{}, errors: changeErrs},
		apiOperation{pattern: "POST /v1/changes/{op}", access: capability.AccessOperator, method: http.MethodPost, path: "/v1/changes/approve", tag: "changes",
			summary: "Apply a change, audited (skillgate changes approve ID --why WHY)", request: changeRequest{}, response: change.Item{}, errors: changeErrs},
		apiOperation{pattern: "POST /v1/changes/{op}", access: capability.AccessOperator, method: http.MethodPost, path: "/v1/changes/reject", tag: "changes",
			summary: "Reject a change, keeping its record, audited (skillgate changes reject ID --why WHY)", request: changeRequest{}, response: change.Item{}, errors: changeErrs},
	)
	for _, o := range installOps {
		ops = append(ops, apiOperation{pattern: "POST /v1/installs/{op}", access: capability.AccessOperator, method: http.MethodPost, path: "/v1/installs/" + o.op, tag: "installs",
			summary: o.summary, request: actionRequest{}, response: install.Review{}, errors: installErrs})
	}
	return ops
}

// OpenAPI is the OpenAPI 3.1 document of skillgate's REST API, generated
// from the Go types the handlers decode and encode. version is skillgate's.
func OpenAPI(version string) ([]byte, error) {
	r := openapi31.NewReflector()
	r.Spec.Info.WithTitle("skillgate REST API").WithVersion(version).
		WithDescription("The REST API of `skillgate serve`: the install flow, the changes queue, grants and policy tests, rescans. Every request but GET /v1/health and GET /v1/openapi.json needs 'Authorization: Bearer <token>' (skillgate token add); each operation's x-skillgate-access says who may call it and which tenants it reaches (public: no token; server: T0 and T1, no tenant's data; tenant: T0 every tenant, T1 its own only; operator: T0 only) and x-skillgate-tiers the tiers it serves. Errors are {\"error\": message}. Agents use MCP at /mcp instead (docs/mcp.md).")
	r.SpecEns().SetHTTPBearerTokenSecurity("bearer", "skillgate token", "A token from skillgate token add; its agent tier decides what it may do.")
	// A member without omitempty is always present: required.
	r.JSONSchemaReflector().DefaultOptions = append(r.JSONSchemaReflector().DefaultOptions, jsonschema.InterceptProp(func(p jsonschema.InterceptPropParams) error {
		if !p.Processed || p.ParentSchema == nil {
			return nil
		}
		tag, ok := p.Field.Tag.Lookup("json")
		if !ok || strings.Contains(tag, ",omitempty") || strings.Contains(tag, ",omitzero") || tag == "-" || p.Field.Type.Kind() == reflect.Pointer {
			return nil
		}
		for _, n := range p.ParentSchema.Required {
			if n == p.Name {
				return nil
			}
		}
		p.ParentSchema.Required = append(p.ParentSchema.Required, p.Name)
		return nil
	}))
	for _, op := range apiOperations() {
		oc, err := r.NewOperationContext(op.method, op.path)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s %s: %w", op.method, op.path, err)
		}
		oc.SetTags(op.tag)
		oc.SetSummary(op.summary)
		oc.SetID(operationID(op.method, op.path))
		if op.request != nil {
			oc.AddReqStructure(op.request)
		}
		oc.AddRespStructure(op.response, openapi.WithHTTPStatus(http.StatusOK))
		for _, st := range op.errors {
			oc.AddRespStructure(errorBody{}, openapi.WithHTTPStatus(st))
		}
		if op.notReady {
			oc.AddRespStructure(readyResponse{}, openapi.WithHTTPStatus(http.StatusServiceUnavailable))
		}
		if op.access != capability.AccessPublic {
			oc.AddSecurity("bearer")
		}
		if err := r.AddOperation(oc); err != nil {
			return nil, fmt.Errorf("openapi: %s %s: %w", op.method, op.path, err)
		}
	}
	b, err := r.Spec.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	// Each operation states its declared access and the tiers it serves.
	paths, _ := v["paths"].(map[string]any)
	for _, op := range apiOperations() {
		item, _ := paths[op.path].(map[string]any)
		o, _ := item[strings.ToLower(op.method)].(map[string]any)
		if o == nil {
			return nil, fmt.Errorf("openapi: %s %s: not in the generated document", op.method, op.path)
		}
		tiers := []string{}
		for _, t := range op.access.Tiers() {
			tiers = append(tiers, string(t))
		}
		o["x-skillgate-access"], o["x-skillgate-tiers"] = string(op.access), tiers
	}
	return json.MarshalIndent(v, "", "  ")
}

// operationID names an operation: getV1Installs, postV1InstallsApprove.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '.' || r == '{' || r == '}' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// openAPIDoc serves GET /v1/openapi.json, generated once.
type openAPIDoc struct {
	version string
	once    sync.Once
	body    []byte
	err     error
}

func (d *openAPIDoc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.once.Do(func() { d.body, d.err = OpenAPI(d.version) })
	if d.err != nil {
		http.Error(w, d.err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(d.body)
}
