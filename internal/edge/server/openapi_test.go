package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// openAPIFixture is a server with every API mounted, and its document.
type openAPIFixture struct {
	*fixture
	doc      map[string]any
	compiler *jsonschema.Compiler
	human    string // a T0 token
	agent    string // a T3 token
}

const docURL = "https://skillgate.dev/openapi.json"

func newOpenAPIFixture(t *testing.T) *openAPIFixture {
	t.Helper()
	f := newFixture(t)
	f.mountAll(t)
	o := &openAPIFixture{fixture: f, human: f.token(t, "ops", skill.T0), agent: f.token(t, "drafter", skill.T3)}
	status, body := o.do(t, "GET", "/v1/openapi.json", "", "")
	if status != 200 {
		t.Fatalf("GET /v1/openapi.json: %d %s", status, body)
	}
	if err := json.Unmarshal(body, &o.doc); err != nil {
		t.Fatal(err)
	}
	res, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	o.compiler = jsonschema.NewCompiler()
	if err := o.compiler.AddResource(docURL, res); err != nil {
		t.Fatal(err)
	}
	return o
}

func (o *openAPIFixture) do(t *testing.T, method, path, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, o.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// docPath is the document's path that serves path ("/v1/grants/{id}" for
// "/v1/grants/g-1"), or "".
func (o *openAPIFixture) docPath(path string) string {
	paths := o.doc["paths"].(map[string]any)
	if _, ok := paths[path]; ok {
		return path
	}
	for p := range paths {
		re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`) + "$")
		if re.MatchString(path) {
			return p
		}
	}
	return ""
}

// check validates a response against the document: the path, method and
// status must be documented and the body must match their schema.
func (o *openAPIFixture) check(t *testing.T, method, path string, status int, body []byte) {
	t.Helper()
	if err := o.validate(method, path, status, body); err != nil {
		t.Fatal(err)
	}
}

func (o *openAPIFixture) validate(method, path string, status int, body []byte) error {
	p := o.docPath(strings.SplitN(path, "?", 2)[0])
	if p == "" {
		return fmt.Errorf("%s %s: no such path in the document", method, path)
	}
	ptr := "/paths/" + pointerEscape(p) + "/" + strings.ToLower(method) + "/responses/" + fmt.Sprint(status) + "/content/application~1json/schema"
	sch, err := o.compiler.Compile(docURL + "#" + (&url.URL{Path: ptr}).EscapedPath())
	if err != nil {
		return fmt.Errorf("%s %s answered %d, which the document does not describe: %v", method, path, status, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: the body is not JSON: %v: %s", method, path, err, body)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("%s %s (%d): the body does not match the document: %v\n%s", method, path, status, err, body)
	}
	return nil
}

// TestOpenAPIValidationBites: the check above refuses what it must.
func TestOpenAPIValidationBites(t *testing.T) {
	o := newOpenAPIFixture(t)
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/v1/health", 200, `{}`},
		{"GET", "/v1/health", 200, `{"status":"ok","connections":"two"}`},
		{"GET", "/v1/health", 418, `{"status":"ok"}`},
		{"GET", "/v1/installs", 200, `[{"key":"notes"}]`},
		{"POST", "/v1/installs/approve", 409, `{"message":"x"}`},
		{"GET", "/v1/nothing", 200, `{}`},
	} {
		if err := o.validate(tc.method, tc.path, tc.status, []byte(tc.body)); err == nil {
			t.Errorf("%s %s %d %s: validated; want a refusal", tc.method, tc.path, tc.status, tc.body)
		}
	}
	if err := o.validate("GET", "/v1/health", 200, []byte(`{"status":"ok","connections":2}`)); err != nil {
		t.Errorf("a right body refused: %v", err)
	}
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// TestOpenAPIResponsesValidate calls every route of the REST API, with
// successes and errors, and validates each response against the document
// the server serves at /v1/openapi.json.
func TestOpenAPIResponsesValidate(t *testing.T) {
	o := newOpenAPIFixture(t)
	src := filepath.Join(t.TempDir(), "notes")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: notes\ndescription: Keeps notes.\n---\nWrite notes.\n"), 0o644)
	mustJSON := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	var grantID string
	steps := []struct {
		method, path, token, body string
		status                    int
	}{
		{"GET", "/v1/health", "", "", 200},
		{"GET", "/v1/health", o.agent, "", 200},
		{"GET", "/v1/health", "sgt_nope", "", 401},
		{"GET", "/v1/ready", "", "", 200},
		{"POST", "/v1/scan", o.human, "", 200},
		{"POST", "/v1/scan", o.agent, "", 403},
		{"POST", "/v1/scan", "", "", 401},
		{"GET", "/v1/installs", o.human, "", 200},
		{"GET", "/v1/installs", o.agent, "", 403},
		{"POST", "/v1/installs", o.human, mustJSON(map[string]string{"path": src}), 200},
		{"POST", "/v1/installs", o.human, `{"path":""}`, 400},
		{"POST", "/v1/installs", o.human, `{"paht":"x"}`, 400},
		{"GET", "/v1/installs/pending", o.human, "", 200},
		{"GET", "/v1/installs/review?name=notes", o.human, "", 200},
		{"GET", "/v1/installs/review?name=absent", o.human, "", 404},
		{"GET", "/v1/installs/review", o.human, "", 400},
		{"POST", "/v1/installs/complete", o.human, `{"name":"notes","capability":"x/y","riskLevel":"read","why":"a reason long enough"}`, 400},
		{"POST", "/v1/installs/suppress", o.human, `{"name":"notes","target":"SG501","why":"a reason long enough"}`, 400},
		{"POST", "/v1/installs/approve", o.human, `{"name":"notes","settings":[{"capability":"x/y","constraints":{"rateLimit":"1/minute"},"callApproval":"always"}]}`, 400},
		{"POST", "/v1/installs/approve", o.human, `{"name":"notes"}`, 200},
		{"POST", "/v1/installs/approve", o.human, `{"name":"notes"}`, 409},
		{"POST", "/v1/installs/enable", o.human, `{"name":"notes"}`, 200},
		{"POST", "/v1/installs/disable", o.human, `{"name":"notes"}`, 200},
		{"POST", "/v1/installs/recheck", o.human, `{"name":"notes"}`, 200},
		{"POST", "/v1/installs/reject", o.human, `{"name":"notes","why":"a reason long enough"}`, 409},
		{"POST", "/v1/installs/remove", o.human, `{"name":"notes"}`, 200},
		{"GET", "/v1/grants", o.human, "", 200},
		{"POST", "/v1/grants", o.human, `{"principal":"acme/drafter","capability":"tools/fs:fs/delete_file","uses":1,"expires":"1h","reason":"cleanup of the build tree"}`, 200},
		{"POST", "/v1/grants", o.agent, `{}`, 403},
		{"POST", "/v1/grants", o.human, `{"principal":"acme/drafter"`, 400},
		{"GET", "/v1/grants", o.agent, "", 403},
		{"DELETE", "/v1/grants/{id}", o.human, "", 200},
		{"DELETE", "/v1/grants/g-absent", o.human, "", 404},
		{"POST", "/v1/policy/test", o.human, `{"principal":"acme/drafter","tier":"T3","capability":"tools/fs:fs/delete_file","args":{"path":"/tmp/x"}}`, 200},
		{"POST", "/v1/policy/test", o.human, `{"principal":"nope"}`, 400},
		{"GET", "/v1/changes", o.human, "", 200},
		{"GET", "/v1/changes?all=true", o.human, "", 200},
		{"GET", "/v1/changes", o.agent, "", 403},
		{"GET", "/v1/changes/show?id=1", o.human, "", 200},
		{"GET", "/v1/changes/show?id=9", o.human, "", 404},
		{"GET", "/v1/changes/show", o.human, "", 400},
		{"POST", "/v1/changes/approve", o.human, `{"id":"1","why":"one executor for both"}`, 409},
		{"POST", "/v1/changes/approve", o.human, `{"id":"1"}`, 400},
		{"POST", "/v1/changes/approve", o.human, `{"id":"1","why":"one executor for both","smokeCall":{"executor":"find_labels","arguments":[1]}}`, 400},
		{"POST", "/v1/changes/reject", o.human, `{"id":"1","why":"short"}`, 400},
		{"POST", "/v1/changes/reject", o.human, `{"id":"1","why":"we keep the forges apart"}`, 200},
		{"POST", "/v1/changes/reject", o.human, `{"id":"1","why":"we keep the forges apart"}`, 409},
		{"POST", "/v1/changes/approve", o.human, `{"id":"update:vcs/gl@0123456789ab","why":"a reason long enough"}`, 404},
	}
	seen := map[string]bool{}
	for _, s := range steps {
		path := s.path
		if strings.Contains(path, "{id}") {
			path = strings.ReplaceAll(path, "{id}", grantID)
		}
		status, body := o.do(t, s.method, path, s.token, s.body)
		if status != s.status {
			t.Fatalf("%s %s: %d, want %d: %s", s.method, path, status, s.status, body)
		}
		o.check(t, s.method, path, status, body)
		if s.method == "POST" && path == "/v1/grants" && status == 200 {
			var g struct{ ID string }
			json.Unmarshal(body, &g)
			grantID = g.ID
		}
		seen[s.method+" "+o.docPath(strings.SplitN(path, "?", 2)[0])] = true
	}
	// Every documented operation was called.
	for p, item := range o.doc["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			if !seen[strings.ToUpper(m)+" "+p] && p != "/v1/openapi.json" {
				t.Errorf("%s %s is documented but not exercised here", strings.ToUpper(m), p)
			}
		}
	}
}

// TestOpenAPICoversEveryRoute holds the document to the routes the server
// registers (which its 404 lists, completely): each route has an operation
// and each operation a route, and each documented install operation is one
// the handler knows.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	o := newOpenAPIFixture(t)
	_, body := o.do(t, "GET", "/nope", "", "")
	var e struct{ Error string }
	json.Unmarshal(body, &e)
	_, list, ok := strings.Cut(e.Error, "; the endpoints are ")
	if !ok {
		t.Fatalf("404 body %s", body)
	}
	var routes []string
	for _, r := range strings.Split(list, ", ") {
		if !strings.HasPrefix(r, "/") && !strings.Contains(r, " (") { // /mcp, /admin/ and /metrics are not REST
			routes = append(routes, r)
		}
	}
	var ops []string
	for p, item := range o.doc["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			ops = append(ops, strings.ToUpper(m)+" "+p)
		}
	}
	matches := func(route, op string) bool {
		re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllString(regexp.QuoteMeta(route), `[^/ ]+`) + "$")
		return route == op || re.MatchString(op)
	}
	for _, r := range routes {
		if !slices.ContainsFunc(ops, func(op string) bool { return matches(r, op) }) {
			t.Errorf("route %s has no operation in the document", r)
		}
	}
	for _, op := range ops {
		if !slices.ContainsFunc(routes, func(r string) bool { return matches(r, op) }) {
			t.Errorf("operation %s is served by no route", op)
		}
		if strings.HasPrefix(op, "POST /v1/installs/") {
			_, b := o.do(t, "POST", strings.TrimPrefix(op, "POST "), o.human, `{"name":"absent"}`)
			if strings.Contains(string(b), "unknown operation") {
				t.Errorf("%s is documented, but the handler does not know it: %s", op, b)
			}
		}
	}
	if o.doc["openapi"] != "3.1.0" {
		t.Errorf("openapi %v; want 3.1.0", o.doc["openapi"])
	}
}

// mountAll mounts the install API and the policy API (with one
// capability, tools/fs:fs/delete_file) on f's server.
func (f *fixture) mountAll(t *testing.T) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc, err := install.New(install.Options{Store: db, Root: filepath.Join(t.TempDir(), "imported")})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.MountInstalls(svc)
	cs, err := change.New(change.Options{Store: db, Installs: svc, Smoke: broker.Smoke(broker.LoadInstalled(svc), broker.ExecutorOptions{Registered: db.Registrations})})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.MountChanges(cs)
	// A change waiting for a human, as an install that found one queues it.
	if _, _, err := db.QueueChange(context.Background(), store.Change{Kind: store.ChangePromoteProvider, Key: "promote_provider:create_repository:1",
		Subject: "create_repository", Summary: "create_repository: one executor", QueuedBy: "operator:ops", Why: "found when vcs/gl was awaiting_approval",
		Proposal: json.RawMessage(`{"executor":{"name":"create_repository","description":"Create a new repository.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}},"new":true,"backends":[{"provider":"github","skill":"vcs/gh","server":"gh","tool":"create_repository","arguments":{"name":"args.name"}}],"evidence":["vcs/gh (provider github) offers gh/create_repository"],"drafter":"deterministic"}`)},
		store.AuditRecord{Actor: "operator:ops", Action: "change.queue"}, audit.SealStored); err != nil {
		t.Fatal(err)
	}
	eng := policy.New(&policy.Options{Store: db})
	if err := eng.SetCapabilities([]policy.Capability{{SkillKey: "tools/fs", SkillTrust: policy.TrustCore, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
		SkillState: policy.SkillEnabled, ExtensionID: "fs", CapabilityID: "delete_file", Enabled: true,
		RiskLevel: capability.RiskDestructive, SideEffects: capability.SideEffectsInternal, DataEgress: capability.EgressNone}}); err != nil {
		t.Fatal(err)
	}
	f.srv.MountPolicy(eng)
}
