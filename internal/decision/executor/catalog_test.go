package executor_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
)

func TestBuiltin(t *testing.T) {
	cat := executor.Builtin()
	var names []string
	for _, e := range cat.Executors {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, " "); got != "create_branch create_issue create_pull_request find_issues find_pull_requests find_repositories read_file_contents read_issue read_pull_request update_issue write_file_contents" {
		t.Fatalf("built-in executors = %s", got)
	}
	if p, ok := cat.Provider("gitlab"); !ok || p.Suffix != "_gitlab" {
		t.Fatalf("Provider(gitlab) = %+v, %v", p, ok)
	}
}

const catalogHead = "apiVersion: skillgate.dev/v1\nkind: ExecutorCatalog\n"

func TestParseCatalogRefuses(t *testing.T) {
	schema := "    inputSchema: {type: object, properties: {q: {type: string}}}\n"
	tests := []struct {
		name, file, want string
	}{
		{"empty", "", `invalid executor catalog: c.yaml: the file is empty; it must begin with apiVersion: skillgate.dev/v1`},
		{"version", "apiVersion: v2\nkind: ExecutorCatalog\n", `invalid executor catalog: c.yaml: apiVersion "v2": write apiVersion: skillgate.dev/v1`},
		{"kind", "apiVersion: skillgate.dev/v1\nkind: Backends\n", `invalid executor catalog: c.yaml: kind "Backends": write kind: ExecutorCatalog`},
		{"unknown key", catalogHead + "executor: []\n", `invalid executor catalog: c.yaml: yaml: unmarshal errors: line 3: field executor not found in type executor.catalogFile`},
		{"duplicate key", catalogHead + "kind: ExecutorCatalog\n", `invalid executor catalog: c.yaml: yaml: unmarshal errors: line 3: mapping key "kind" already defined at line 2`},
		{"two documents", catalogHead + "---\nkind: x\n", `invalid executor catalog: c.yaml: more than one YAML document; keep one`},
		{"NUL", catalogHead + "#\x00\n", `invalid executor catalog: c.yaml: contains a NUL byte`},
		{"verb outside the vocabulary", catalogHead + "executors:\n  - name: fetch_page\n    description: d\n" + schema,
			`c.yaml: executors[0]: name: invalid executor name: "fetch_page": verb "fetch" is not in the vocabulary; use one of find, list, read, create, update, write, delete, send (for "fetch" write "read")`},
		{"provider suffix", catalogHead + "providers:\n  - {name: github, suffix: _github}\nexecutors:\n  - name: create_issue_github\n    description: d\n" + schema,
			`invalid executor catalog: c.yaml: executors[0] (create_issue_github): the name carries provider "github"'s suffix; an executor is provider-neutral: name it create_issue and declare a backend per provider`},
		{"a gateway tool's name", catalogHead + "executors:\n  - name: read_file\n    description: d\n" + schema,
			`invalid executor catalog: c.yaml: executors[0] (read_file): read_file is one of the gateway's own tools (skill_list, load_skill, unload_skill, ls, read_file, grep, glob, write_file, edit_file); name the executor for its object, like read_file_contents`},
		{"twice", catalogHead + "executors:\n  - name: find_pages\n    description: d\n" + schema + "  - name: find_pages\n    description: d\n" + schema,
			`invalid executor catalog: c.yaml: executors[1] (find_pages): declared twice; keep one`},
		{"no description", catalogHead + "executors:\n  - name: find_pages\n" + schema,
			`invalid executor catalog: c.yaml: executors[0] (find_pages): description: 1 to 2048 bytes saying what the executor does`},
		{"no schema", catalogHead + "executors:\n  - name: find_pages\n    description: d\n",
			`invalid executor catalog: c.yaml: executors[0] (find_pages): inputSchema is missing: write a JSON Schema object with type: object`},
		{"schema not an object", catalogHead + "executors:\n  - name: find_pages\n    description: d\n    inputSchema: {type: string}\n",
			`invalid executor catalog: c.yaml: executors[0] (find_pages): inputSchema: must have "type": "object"`},
		{"provider argument", catalogHead + "executors:\n  - name: find_pages\n    description: d\n    inputSchema: {type: object, properties: {provider: {type: string}}}\n",
			`invalid executor catalog: c.yaml: executors[0] (find_pages): inputSchema.properties.provider: skillgate adds the provider argument itself; remove it`},
		{"argument name", catalogHead + "executors:\n  - name: find_pages\n    description: d\n    inputSchema: {type: object, properties: {Query: {type: string}}}\n",
			`invalid executor catalog: c.yaml: executors[0] (find_pages): inputSchema.properties.Query: an argument name is lowercase letters, digits and '_', starting with a letter`},
		{"required unknown", catalogHead + "executors:\n  - name: find_pages\n    description: d\n    inputSchema: {type: object, properties: {q: {type: string}}, required: [query]}\n",
			`invalid executor catalog: c.yaml: executors[0] (find_pages): inputSchema.required names "query", which is not among its properties (q)`},
		{"schema does not compile", catalogHead + "executors:\n  - name: find_pages\n    description: d\n    inputSchema: {type: object, properties: {q: {type: strin}}}\n",
			`invalid executor catalog: c.yaml: executors[0] (find_pages): inputSchema does not compile: "skillgate:executor-schema.json#" is not valid against metaschema: jsonschema validation failed with 'https://json-schema.org/draft/2020-12/schema#' - at '': 'allOf' failed - at '/properties/q': 'allOf' failed - at '/properties/q/type': 'anyOf' failed - at '/properties/q/type': value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string' - at '/properties/q/type': got string, want array`},
		{"schema nested too deep", catalogHead + "executors:\n  - name: find_pages\n    description: d\n    inputSchema: {type: object, properties: {q: " + strings.Repeat("{items: ", 9000) + "{}" + strings.Repeat("}", 9000) + "}}\n",
			`invalid executor catalog: c.yaml: executors[0] (find_pages): inputSchema does not compile: properties.q.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.items.i…: nested more than 64 levels deep (schemas nest at most 64 levels, each key once)`},
		{"provider name", catalogHead + "providers:\n  - {name: GitHub, suffix: _github}\n",
			`invalid executor catalog: c.yaml: providers[0]: name "GitHub": lowercase words of letters and digits joined by '-', like google-workspace`},
		{"provider suffix form", catalogHead + "providers:\n  - {name: github, suffix: github}\n",
			`invalid executor catalog: c.yaml: providers[0] (github): suffix "github": '_' then lowercase letters and digits, like _github`},
		{"suffix twice", catalogHead + "providers:\n  - {name: github, suffix: _gh}\n  - {name: gitlab, suffix: _gh}\n",
			`invalid executor catalog: c.yaml: providers[1] (gitlab): suffix "_gh" is already provider "github"'s; choose another`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := executor.ParseCatalog("c.yaml", []byte(tc.file))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error:\n got %v\nwant %s", err, tc.want)
			}
			if !errors.Is(err, executor.ErrInvalidCatalog) && !errors.Is(err, executor.ErrInvalidName) {
				t.Fatalf("error %v wraps neither sentinel", err)
			}
		})
	}
}
