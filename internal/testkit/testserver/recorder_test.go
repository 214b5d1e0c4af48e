package testserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
)

func TestRecorder(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(tools, []byte(`{"tools":[{"name":"create_issue","description":"Create an issue.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RECORDER_TOKEN", "tok-1")
	records := filepath.Join(dir, "calls.jsonl")
	s, err := testserver.New(testserver.ModeRecorder, testserver.Config{ToolsFile: tools, Name: "github", ReportEnv: "RECORDER_TOKEN, UNSET_NAME", RecordFile: records})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != 1 || list.Tools[0].Name != "create_issue" {
		t.Fatalf("tools/list = %v, %v", list, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_issue", Arguments: map[string]any{"title": "Bug"}})
	if err != nil {
		t.Fatal(err)
	}
	var got testserver.Recording
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	if got.Server != "github" || got.Tool != "create_issue" || string(got.Arguments) != `{"title":"Bug"}` ||
		len(got.Env) != 1 || got.Env["RECORDER_TOKEN"] != "tok-1" || got.PID != os.Getpid() {
		t.Fatalf("recording = %+v", got)
	}
	line, err := os.ReadFile(records)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(got)
	if string(line) != string(want)+"\n" {
		t.Fatalf("record file = %q, want %q", line, want)
	}
}
