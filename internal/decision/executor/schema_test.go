package executor_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/skillgate/skillgate/internal/decision/executor"
)

// publishedSchema compiles one of the JSON Schemas in docs/schemas.
func publishedSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(filepath.Join("..", "..", "..", "docs", "schemas", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// yamlAsJSON reads a YAML file as the JSON value it denotes.
func yamlAsJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestPublishedSchemas checks that the files skillgate ships and the
// worked example validate against the published schemas, and that the
// schemas refuse what the parsers refuse.
func TestPublishedSchemas(t *testing.T) {
	cat := publishedSchema(t, "executor-catalog.v1.json")
	back := publishedSchema(t, "backends.v1.json")
	if err := cat.Validate(yamlAsJSON(t, executor.BuiltinYAML())); err != nil {
		t.Errorf("the built-in catalog: %v", err)
	}
	for _, p := range []string{"github", "gitlab"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "providers", p, executor.BackendsFileName))
		if err != nil {
			t.Fatal(err)
		}
		if err := back.Validate(yamlAsJSON(t, data)); err != nil {
			t.Errorf("examples/providers/%s/backends.yaml: %v", p, err)
		}
	}
	refused := []struct {
		schema *jsonschema.Schema
		file   string
	}{
		{cat, catalogHead + "executors:\n  - name: get_page\n    description: d\n    inputSchema: {type: object}\n"},
		{cat, catalogHead + "executors:\n  - name: find_pages\n    description: d\n    inputSchema: {type: object, properties: {provider: {type: string}}}\n"},
		{cat, catalogHead + "providers:\n  - {name: github, suffix: github}\n"},
		{back, backendsHead + "backends: []\n"},
		{back, backendsHead + "backends:\n  - {executor: create_issue, server: gl, tool: create_issue, arguments: {}}\n"},
		{back, backendsHead + "backends:\n  - {executor: create_issue, server: gl, tool: create_issue, args: {title: args.title}}\n"},
	}
	for _, r := range refused {
		if err := r.schema.Validate(yamlAsJSON(t, []byte(r.file))); err == nil {
			t.Errorf("the schema accepts\n%s", r.file)
		}
	}
}

// TestSchemaVerbs checks that the published schemas' name pattern lists
// exactly the vocabulary.
func TestSchemaVerbs(t *testing.T) {
	verbs := make([]string, len(executor.Verbs))
	for i, v := range executor.Verbs {
		verbs[i] = string(v)
	}
	want := `"^(` + strings.Join(verbs, "|") + `)_[a-z][a-z0-9]*(_[a-z][a-z0-9]*)*$"`
	for _, f := range []string{"executor-catalog.v1.json", "backends.v1.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schemas", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("docs/schemas/%s does not hold the name pattern %s", f, want)
		}
	}
}
