package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestImportedSkillsInCatalog is issue 14's "one catalog for every trust":
// an enabled imported skill is listed by ls (and ls --trust imported),
// shown by show, paged by skill_list, named in the disclosure prompt and
// loaded by load_skill like a scanned skill; a disabled one is in none of
// them. Its install report carries no warning about the managed
// directory's name.
func TestImportedSkillsInCatalog(t *testing.T) {
	f := emptyFixture(t)
	src := importable(t, "notes", "allowed-tools: notes/echo\n")
	if code, out, errs := f.runCode(t, nil, "install", src); code != 0 {
		t.Fatalf("install: %d %s %s", code, out, errs)
	}
	// The managed layout (<version>/skill) gives no spurious warning.
	reports, _ := filepath.Glob(filepath.Join(f.data, "imported", "*", "install_report.json"))
	if len(reports) != 1 {
		t.Fatalf("install reports: %v", reports)
	}
	rep, err := os.ReadFile(reports[0])
	if err != nil || strings.Contains(string(rep), "Directory name") || strings.Contains(string(rep), "must match") {
		t.Fatalf("install_report.json warns about the managed directory: %v\n%s", err, rep)
	}
	listed := func() string {
		t.Helper()
		_, out, _ := f.runCode(t, nil, "ls", "--trust", "imported")
		return out
	}
	if out := listed(); out != "" {
		t.Fatalf("ls lists an install before it is enabled:\n%s", out)
	}
	f.run(t, "approve", "notes")
	if out := listed(); out != "" {
		t.Fatalf("ls lists an approved install before it is enabled:\n%s", out)
	}
	f.run(t, "enable", "notes")
	want := "NAME   TIER  INVOKABLE BY  SCOPE     TRUST     STATE    DESCRIPTION\n" +
		"notes  2     T0,T1,T2,T3   imported  imported  enabled  Notes through the test server.\n"
	if out := listed(); out != want {
		t.Fatalf("ls --trust imported:\n%s\nwant:\n%s", out, want)
	}
	if _, out, _ := f.runCode(t, nil, "ls", "--trust", "first_party"); out != "" {
		t.Errorf("ls --trust first_party:\n%s", out)
	}
	show := f.run(t, "show", "notes")
	for _, line := range []string{"source:       " + filepath.Join(f.data, "imported") + " (imported)\n", "trust:        imported\n", "state:        enabled\n"} {
		if !strings.Contains(show, line) {
			t.Errorf("show lacks %q:\n%s", line, show)
		}
	}
	if strings.Contains(show, "Directory name") {
		t.Errorf("show warns about the managed directory:\n%s", show)
	}

	cs := f.agent(t, "T3")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_list", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("skill_list: %v %s", err, textOf(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	const wantList = `{"next_cursor":"","skills":[{"description":"Notes through the test server.","invokable_by":["T0","T1","T2","T3"],"name":"notes","source":"imported","tier":2,"trust":"imported"}],"total":1}`
	if string(b) != wantList {
		t.Errorf("skill_list:\n got %s\nwant %s", b, wantList)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skills"})
	if err != nil {
		t.Fatal(err)
	}
	var prompt strings.Builder
	for _, m := range p.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			prompt.WriteString(tc.Text)
		}
	}
	if !strings.Contains(prompt.String(), "<skill>\n<name>\nnotes\n</name>\n<description>\nNotes through the test server.\n</description>\n<location>\nnotes\n</location>\n</skill>") {
		t.Errorf("the disclosure prompt does not list notes:\n%s", prompt.String())
	}
	call := caller(cs)
	if got, isErr := call(t, "load_skill", map[string]any{"skill": "notes"}); isErr {
		t.Fatalf("load_skill: %s", got)
	}
	if got, isErr := call(t, "read_file", map[string]any{"file_path": "/skills/notes/SKILL.md"}); isErr || !strings.Contains(got, "Take notes.") {
		t.Fatalf("read_file of the loaded skill: %v %s", isErr, got)
	}

	// Disabled, it leaves every list.
	f.run(t, "disable", "notes")
	if out := listed(); out != "" {
		t.Errorf("ls lists a disabled install:\n%s", out)
	}
	res, err = f.agent(t, "T3").CallTool(ctx, &mcp.CallToolParams{Name: "skill_list", Arguments: map[string]any{}})
	if err != nil || !strings.HasPrefix(textOf(res), "No skills match.") {
		t.Errorf("skill_list after disable: %v %s", err, textOf(res))
	}
}
