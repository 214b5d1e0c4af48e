package change_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
)

// recorderSkill writes a skill whose server (id server) is the recording
// test server offering tool with schema; shipped adds the manifest.json
// of a first_party skill.
func recorderSkill(t *testing.T, key, server, tool, schema string, shipped bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), key)
	os.MkdirAll(dir, 0o755)
	tools := filepath.Join(t.TempDir(), "tools.json")
	os.WriteFile(tools, []byte(`{"tools":[{"name":"`+tool+`","description":"Find issues.","inputSchema":`+schema+
		`,"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true}}]}`), 0o644)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{server: map[string]any{"command": testServer,
		"env": map[string]string{testserver.EnvMode: testserver.ModeRecorder, testserver.EnvToolsFile: tools, testserver.EnvName: server}}}})
	files := map[string]string{"SKILL.md": "---\nname: " + key + "\ndescription: Issues on " + server + ".\n---\nUse it.\n", "mcp.json": string(cfg)}
	if shipped {
		files["manifest.json"] = `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"` + key + `","version":"sha256:` + strings.Repeat("0", 64) + `",` +
			`"providers":[{"type":"mcp","serverId":"` + server + `"}],` +
			`"capabilities":[{"extensionId":"` + server + `","capabilityId":"` + tool + `","description":"Find issues.","inputSchema":` + schema + `,` +
			`"risk":{"riskLevel":{"value":"read","source":"operator"},"sideEffects":{"value":"none","source":"operator"},"dataEgress":{"value":"network","source":"operator"}}}]}`
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSmokeCall: an operator applying a promote_provider change of a
// read-only executor may have it called once through every backend first:
// the call's arguments must fit the change's executor, each backend's
// server (a first_party one and an imported one) is started and called
// with the mapped arguments, and the record says they answered.
func TestSmokeCall(t *testing.T) {
	ctx := context.Background()
	schema := `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`
	hub := recorderSkill(t, "hub", "github", "find_labels_github", schema, true)
	e := newTierEnv(t, shippedRoot{{Version: store.Version{Key: "hub", Name: "hub", Dir: hub, Trust: "first_party", Tier: 2,
		InvokableBy: []string{"T0", "T1", "T2", "T3"}, Valid: true, Enabled: true, Current: true}}})
	ok(t)(e.svc.Install(ctx, recorderSkill(t, "lab", "gitlab", "find_labels_gitlab", schema, false), "operator:ana"))
	ok(t)(e.svc.Approve(ctx, "lab", nil, "operator:ana"))
	ok(t)(e.svc.Enable(ctx, "lab", "operator:ana"))
	items, err := e.changes.List(ctx, false)
	if err != nil || len(items) != 1 || items[0].Subject != "find_labels" {
		t.Fatalf("changes: %+v %v", items, err)
	}
	why := "one find_labels for both forges"
	for _, tc := range []struct {
		call string
		want string
	}{
		{"find_labels", `invalid decision: a smoke call is EXECUTOR=JSON (find_repositories={"query":"skillgate"}), not "find_labels"`},
		{`find_labels=[1]`, "invalid decision: the smoke call's arguments must be a JSON object: [1]"},
		{`create_issue={"query":"bug"}`, "invalid decision: the smoke call names create_issue, but the change registers find_labels: a smoke call tests the change's backends"},
		{`find_labels={"q":"bug"}`, "invalid decision: the smoke call's arguments do not fit executor find_labels: "},
		{`find_labels={"query":"bug"}`, ""},
	} {
		call, err := change.ParseSmokeCall(tc.call)
		if err == nil {
			_, err = e.changes.ApproveWith(ctx, items[0].ID, why, "operator:bo", change.ApplyOptions{SmokeCall: call})
		}
		switch {
		case tc.want == "" && err != nil:
			t.Fatalf("smoke call %s: %v", tc.call, err)
		case tc.want != "" && (!errors.Is(err, change.ErrInvalid) || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("smoke call %s: %v\nwant %s", tc.call, err, tc.want)
		}
	}
	recs, _ := e.db.AuditRecords(ctx, store.AuditFilter{Action: "change.apply"})
	if len(recs) != 1 {
		t.Fatalf("audit: %+v", recs)
	}
	var data struct{ Admission []string }
	json.Unmarshal(recs[0].Data, &data)
	if n := len(data.Admission); n != 5 || data.Admission[n-1] != `smoke call of find_labels with {"query":"bug"} answered through github, gitlab` {
		t.Errorf("admission: %q", data.Admission)
	}
}
