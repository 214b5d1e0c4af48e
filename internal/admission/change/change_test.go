package change_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/admission/propose"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

var testServer string

func TestMain(m *testing.M) {
	os.Exit(testserver.RunTests(m, "../../..", "change", &testServer))
}

// tools is a tools/list result: create_repository (annotated: it writes
// outside, over the network) and extra, a tool of the given name.
func tools(extra string) string {
	ann := `"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true}`
	schema := `"inputSchema":{"type":"object","properties":{"name":{"type":"string"},"private":{"type":"boolean"}},"required":["name"]}`
	return `{"tools":[{"name":"create_repository","description":"Create a repository.",` + schema + `,` + ann + `},` +
		`{"name":"` + extra + `","description":"Something else.",` + schema + `,` + ann + `}]}`
}

// skillDir writes a skill whose server (id server, which names its
// provider) answers tools/list with result.
func skillDir(t *testing.T, name, server, result string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: Repositories on "+server+".\n---\nUse it.\n"), 0o644)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{server: map[string]any{"command": testServer,
		"env": map[string]string{testserver.EnvMode: testserver.ModeRaw, testserver.EnvResult: result}}}})
	os.WriteFile(filepath.Join(dir, "mcp.json"), cfg, 0o644)
	return dir
}

type env struct {
	db      *sqlite.DB
	svc     *install.Service
	changes *change.Service
}

func newEnv(t *testing.T, drafter ...promote.Drafter) *env {
	t.Helper()
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	opts := install.Options{Store: db, Root: filepath.Join(data, "imported"), Changes: db,
		MCP: mcpclient.Options{InheritEnv: []string{"PATH", "HOME", "TMPDIR", "GORACE"}}}
	if len(drafter) > 0 {
		opts.PromoteDrafter = drafter[0]
	}
	svc, err := install.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := change.New(change.Options{Store: db, Installs: svc, Smoke: broker.Smoke(broker.LoadInstalled(svc), broker.ExecutorOptions{Registered: db.Registrations})})
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, svc: svc, changes: cs}
}

// ok fails t on an install flow error: ok(t)(svc.Approve(…)).
func ok(t *testing.T) func(*install.Review, error) *install.Review {
	return func(r *install.Review, err error) *install.Review {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// TestPromoteProvider: installing a second provider's skill queues a
// change; applying it is refused, with what to do, until both skills are
// approved and enabled; then it registers the executor, audited, and the
// smoke check's findings are in the record. A second apply is refused.
func TestPromoteProvider(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	ok(t)(e.svc.Install(ctx, skillDir(t, "hub", "github", tools("list_stars")), "operator:ana"))
	ok(t)(e.svc.Approve(ctx, "hub", nil, "operator:ana"))
	ok(t)(e.svc.Enable(ctx, "hub", "operator:ana"))
	if items, err := e.changes.List(ctx, true); err != nil || len(items) != 0 {
		t.Fatalf("one provider: %+v %v", items, err)
	}
	ok(t)(e.svc.Install(ctx, skillDir(t, "lab", "gitlab", tools("list_tags")), "operator:ana"))
	items, err := e.changes.List(ctx, false)
	if err != nil || len(items) != 1 {
		t.Fatalf("changes: %+v %v", items, err)
	}
	it := items[0]
	if it.ID != "1" || it.Kind != "promote_provider" || it.Why != "found when lab was awaiting_approval" || it.QueuedBy != "operator:ana" ||
		it.Summary != "create_repository: one executor with backends github (hub: github/create_repository), gitlab (lab: gitlab/create_repository) (a new executor)" {
		t.Fatalf("change: %+v", it)
	}
	why := "one create_repository for both forges"
	for _, tc := range []struct {
		before func()
		why    string
		want   error
		msg    string
	}{
		{nil, "short", change.ErrInvalid, "invalid decision: say why you apply change 1 in at least 15 characters"},
		{nil, why, change.ErrRefused, "change cannot be applied: lab is not approved; review and approve it first (skillgate review lab)"},
		{func() { ok(t)(e.svc.Approve(ctx, "lab", nil, "operator:ana")) }, why, change.ErrRefused,
			"change cannot be applied: lab is installed; enable it first (skillgate enable lab)"},
	} {
		if tc.before != nil {
			tc.before()
		}
		if _, err := e.changes.Approve(ctx, "1", tc.why, "operator:bo"); !errors.Is(err, tc.want) || err.Error() != tc.msg {
			t.Errorf("approve: %v, want %q", err, tc.msg)
		}
	}
	if regs, _ := e.db.Registrations(ctx); len(regs) != 0 {
		t.Fatalf("refused applies registered %+v", regs)
	}
	ok(t)(e.svc.Enable(ctx, "lab", "operator:ana"))
	got, err := e.changes.Approve(ctx, "1", why, "operator:bo")
	if err != nil || got.State != "applied" || got.DecidedBy != "operator:bo" || got.Decision != why {
		t.Fatalf("apply: %+v %v", got, err)
	}
	regs, _ := e.db.Registrations(ctx)
	if len(regs) != 1 || regs[0].Executor != "create_repository" || len(regs[0].Backends) != 2 ||
		string(regs[0].Definition) != `{"name":"create_repository","description":"Create a new repository.","inputSchema":{"additionalProperties":false,"properties":{"name":{"type":"string"},"private":{"type":"boolean"}},"required":["name"],"type":"object"}}` {
		t.Fatalf("registrations: %+v %s", regs, regs[0].Definition)
	}
	recs, _ := e.db.AuditRecords(ctx, store.AuditFilter{Action: "change."})
	if len(recs) != 2 || recs[0].Action != "change.queue" || recs[1].Action != "change.apply" || recs[1].Actor != "operator:bo" || len(recs[1].Reasons) != 2 ||
		recs[1].Reasons[1] != "create_repository lists providers github, gitlab; a call resolves to github (hub: github/create_repository) (provider github is the first live provider in name order (skill hub)); pinned: github → github (hub: github/create_repository); gitlab → gitlab (lab: gitlab/create_repository)" {
		t.Fatalf("audit: %+v", recs)
	}
	if _, err := e.changes.Approve(ctx, "1", why, "operator:bo"); !errors.Is(err, change.ErrDecided) || err.Error() != "change already decided: change 1 was applied by operator:bo" {
		t.Errorf("apply twice: %v", err)
	}
	// The gateway serves the executor now: a broker over the same store
	// lists it with both providers.
	res, err := broker.SmokeRegistration(ctx, broker.LoadInstalled(e.svc), broker.ExecutorOptions{}, regs[0])
	if err != nil || len(res.Providers) != 2 {
		t.Fatalf("served: %+v %v", res, err)
	}
}

// TestRejectAndUpdate: a rejected change keeps its record and is not
// queued again; a new version of an approved skill is an update change,
// approved through the install flow.
func TestRejectAndUpdate(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	ok(t)(e.svc.Install(ctx, skillDir(t, "hub", "github", tools("list_stars")), "operator:ana"))
	ok(t)(e.svc.Approve(ctx, "hub", nil, "operator:ana"))
	ok(t)(e.svc.Enable(ctx, "hub", "operator:ana"))
	ok(t)(e.svc.Install(ctx, skillDir(t, "lab", "gitlab", tools("list_tags")), "operator:ana"))
	if _, err := e.changes.Reject(ctx, "1", "no", "operator:bo"); !errors.Is(err, change.ErrInvalid) {
		t.Errorf("reject without a reason: %v", err)
	}
	got, err := e.changes.Reject(ctx, "1", "we keep the two forges apart", "operator:bo")
	if err != nil || got.State != "rejected" {
		t.Fatalf("reject: %+v %v", got, err)
	}
	ok(t)(e.svc.Approve(ctx, "lab", nil, "operator:ana"))
	ok(t)(e.svc.Enable(ctx, "lab", "operator:ana"))
	if all, _ := e.changes.List(ctx, true); len(all) != 1 || all[0].State != "rejected" || all[0].Decision != "we keep the two forges apart" {
		t.Fatalf("after enable: %+v", all)
	}
	// A new version of hub: an update waiting for re-consent.
	rv, err := e.svc.Install(ctx, skillDir(t, "hub", "github", tools("list_forks")), "operator:ana")
	if err != nil {
		t.Fatal(err)
	}
	pending, _ := e.changes.List(ctx, false)
	ref := "hub@" + rv.Digest[len("sha256:"):][:12]
	if len(pending) != 1 || pending[0].Kind != change.KindUpdate || pending[0].ID != "update:"+ref || pending[0].Update.Ref != ref {
		t.Fatalf("update: %+v", pending)
	}
	if _, err := e.changes.Get(ctx, "update:hub@000000000000"); !errors.Is(err, change.ErrNotFound) {
		t.Errorf("unknown update: %v", err)
	}
	if _, err := e.changes.Approve(ctx, pending[0].ID, "", "operator:bo"); err != nil {
		t.Fatal(err)
	}
	if r, _ := e.svc.Review(ctx, ref); r.State != store.StateInstalled {
		t.Errorf("update approved: %s", r.State)
	}
	if pending, _ := e.changes.List(ctx, false); len(pending) != 0 {
		t.Errorf("after the update: %+v", pending)
	}
}

// TestLLMDraftedChange: tools the deterministic drafter cannot map
// (alpha, a string, against zeta, an integer: nothing pairs them) are
// drafted by the configured model
// (an OpenAI-compatible endpoint on loopback answering as a model would),
// validated by code, queued with the model's name, and applied like any
// other change.
func TestLLMDraftedChange(t *testing.T) {
	ctx := context.Background()
	answer := `{"description":"Create a widget in a repository.",` +
		`"inputSchemaJSON":"{\"type\":\"object\",\"properties\":{\"repository\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}},\"required\":[\"repository\",\"size\"],\"additionalProperties\":false}",` +
		`"backends":[` +
		`{"provider":"github","skill":"hub","server":"github","tool":"create_widget","arguments":[{"name":"owner","expression":"args.repository.split(\"/\")[0]"},{"name":"repo","expression":"args.repository.split(\"/\")[1]"},{"name":"alpha","expression":"string(args.size)"}]},` +
		`{"provider":"gitlab","skill":"lab","server":"gitlab","tool":"create_widget","arguments":[{"name":"project_id","expression":"args.repository"},{"name":"zeta","expression":"args.size"}]}]}`
	var asked int
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || !strings.Contains(string(body), `"name":"promote_provider_mapping"`) {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		asked++
		content, _ := json.Marshal(answer)
		fmt.Fprintf(w, `{"choices":[{"message":{"content":%s},"finish_reason":"stop"}]}`, content)
	}))
	t.Cleanup(model.Close)
	llm, err := propose.NewOpenAI(propose.OpenAIConfig{BaseURL: model.URL + "/v1", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, promote.LLM{Chat: llm.Complete, Name: llm.Name()})
	tool := func(schema string) string {
		return `{"tools":[{"name":"create_widget","description":"Create a widget.","inputSchema":` + schema +
			`,"annotations":{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":true}}]}`
	}
	ok(t)(e.svc.Install(ctx, skillDir(t, "hub", "github", tool(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"alpha":{"type":"string"}},"required":["owner","repo","alpha"]}`)), "operator:ana"))
	ok(t)(e.svc.Approve(ctx, "hub", nil, "operator:ana"))
	ok(t)(e.svc.Enable(ctx, "hub", "operator:ana"))
	ok(t)(e.svc.Install(ctx, skillDir(t, "lab", "gitlab", tool(`{"type":"object","properties":{"project_id":{"type":"string"},"zeta":{"type":"integer"}},"required":["project_id","zeta"]}`)), "operator:ana"))
	items, _ := e.changes.List(ctx, false)
	if asked != 1 || len(items) != 1 || items[0].Proposal.Drafter != "llm:test-model" || items[0].Subject != "create_widget" {
		t.Fatalf("asked %d; changes %+v", asked, items)
	}
	ok(t)(e.svc.Approve(ctx, "lab", nil, "operator:ana"))
	ok(t)(e.svc.Enable(ctx, "lab", "operator:ana"))
	if got, err := e.changes.Approve(ctx, items[0].ID, "one create_widget for both forges", "operator:bo"); err != nil || got.State != "applied" {
		t.Fatalf("apply: %+v %v", got, err)
	}
	if asked != 1 {
		t.Errorf("the model was asked %d times; enabling lab must not ask again for tools a change proposes", asked)
	}
}
