package mcpserver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/model/skill"
)

var examples = filepath.Join("..", "..", "..", "examples", "skills")

// TestSeedWalk replays seed 003's complete example through the MCP tools,
// over each storage.
func TestSeedWalk(t *testing.T) {
	forEachStorage(t, func(t *testing.T, sg storage) {
		e := newEnv(t, sg)
		c := e.connect(t, principal("drafter", skill.T3), "")
		mcpservertest.Run(t, mcpservertest.Walk(t, examples, true), c.call)
	})
}

// TestToolDefinitions checks names, annotations and schemas: read-only
// tools say so, nothing claims to reach the open world, inputs are closed.
func TestToolDefinitions(t *testing.T) {
	e := newEnv(t, storages[0])
	c := e.connect(t, principal("drafter", skill.T3), "")
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type def struct {
		readOnly, destructive, idempotent bool
		required                          []string
	}
	want := map[string]def{
		"skill_list":   {readOnly: true},
		"load_skill":   {idempotent: true, required: []string{"skill"}},
		"unload_skill": {idempotent: true, required: []string{"skill"}},
		"ls":           {readOnly: true},
		"read_file":    {readOnly: true, required: []string{"file_path"}},
		"grep":         {readOnly: true, required: []string{"pattern"}},
		"glob":         {readOnly: true, required: []string{"pattern"}},
		"write_file":   {required: []string{"file_path", "content"}},
		"edit_file":    {destructive: true, required: []string{"file_path", "old_string", "new_string"}},
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		a := tool.Annotations
		if a == nil || a.Title == "" {
			t.Errorf("%s: no annotations or title", tool.Name)
			continue
		}
		destructive := a.DestructiveHint == nil || *a.DestructiveHint
		if a.ReadOnlyHint != w.readOnly || (!w.readOnly && destructive != w.destructive) || a.IdempotentHint != w.idempotent {
			t.Errorf("%s: annotations %+v (destructive %v), want %+v", tool.Name, a, destructive, w)
		}
		if a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: openWorldHint must be false", tool.Name)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type                 string   `json:"type"`
			Required             []string `json:"required"`
			AdditionalProperties any      `json:"additionalProperties"`
		}
		_ = json.Unmarshal(b, &schema)
		slices.Sort(schema.Required)
		slices.Sort(w.required)
		if schema.Type != "object" || !slices.Equal(schema.Required, w.required) || schema.AdditionalProperties == nil {
			t.Errorf("%s: input schema %s, want required %v and closed", tool.Name, b, w.required)
		}
	}
	if len(names) != len(want) {
		t.Errorf("tools = %v", names)
	}
	// The tier filter shows in load_skill's description.
	i := slices.IndexFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "load_skill" })
	if d := res.Tools[i].Description; !strings.HasSuffix(d, "Skills you can load: contratos/arrendamiento, escrituras/compraventa, pdf-forms.") {
		t.Errorf("load_skill description = %q", d)
	}
}

// TestPathRefusalsThroughTools: hostile paths reach the agent as vfs's
// exact refusals, through every filesystem tool.
func TestPathRefusalsThroughTools(t *testing.T) {
	e := newEnv(t, storages[0])
	c := e.connect(t, principal("drafter", skill.T3), "")
	c.call(t, "load_skill", map[string]any{"skill": "escrituras/compraventa"})
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"file_path": "/skills/compraventa/../hipoteca/SKILL.md"}, "Error: Path traversal not allowed: /skills/compraventa/../hipoteca/SKILL.md"},
		{"read_file", map[string]any{"file_path": "/skills/compraventa/%2e%2e/hipoteca/SKILL.md"}, "Error: Path traversal not allowed: /skills/compraventa/%2e%2e/hipoteca/SKILL.md"},
		{"read_file", map[string]any{"file_path": "C:\\Windows\\win.ini"}, "Error: Windows absolute paths are not supported: C:\\Windows\\win.ini. Please use virtual paths starting with / (e.g., /workspace/file.txt)"},
		{"read_file", map[string]any{"file_path": "/etc/passwd"}, "Error: Path must start with one of ['/skills/', '/ticket/', '/workspace/']: /etc/passwd"},
		{"ls", map[string]any{"path": "~/.ssh"}, "Error: Path traversal not allowed: ~/.ssh"},
		{"grep", map[string]any{"pattern": "x", "path": "/workspace/\x00"}, "Error: Path contains a control character: \"/workspace/\\x00\""},
		{"glob", map[string]any{"pattern": "../**"}, "Error: Path traversal not allowed in glob pattern"},
		{"write_file", map[string]any{"file_path": "/skills/compraventa/evil.md", "content": "x"}, "Error: Cannot modify '/skills/compraventa/evil.md': '/skills' is mounted read-only"},
		{"write_file", map[string]any{"file_path": "/skills/hipoteca/SKILL.md", "content": "x"}, "Error: Cannot modify '/skills/hipoteca/SKILL.md': '/skills' is mounted read-only"},
		{"edit_file", map[string]any{"file_path": "/ticket/ticket.md", "old_string": "T-1", "new_string": "T-2"}, "Error: Cannot modify '/ticket/ticket.md': '/ticket' is mounted read-only"},
	}
	for _, tc := range tests {
		got, isErr := c.call(t, tc.tool, tc.args)
		if !isErr || got != tc.want {
			t.Errorf("%s %q = %q (isError %v)\nwant %q", tc.tool, tc.args, got, isErr, tc.want)
		}
	}
}
