package executor_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
)

// FuzzParseCatalog: a catalog file never panics the parser, and one that
// parses holds only names of the vocabulary and compiled schemas. The
// committed corpus is in testdata/fuzz/FuzzParseCatalog.
func FuzzParseCatalog(f *testing.F) {
	f.Add(executor.BuiltinYAML())
	f.Add([]byte(catalogHead + "executors:\n  - name: find_pages\n    description: d\n    inputSchema: {type: object, properties: {q: {type: string}}}\n"))
	f.Add([]byte(catalogHead + "executors: &a [*a]\n"))
	f.Add([]byte(catalogHead + "providers:\n  - {name: github, suffix: _github}\nexecutors:\n  - name: create_issue_github\n"))
	f.Add([]byte("{\"apiVersion\":\"skillgate.dev/v1\",\"kind\":\"ExecutorCatalog\",\"executors\":[{\"name\":\"read_x\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\",\"$ref\":\"http://x\"}}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := executor.ParseCatalog("f.yaml", data)
		if err != nil {
			return
		}
		for _, e := range c.Executors {
			if _, _, err := executor.ParseName(e.Name); err != nil {
				t.Fatalf("parsed an executor with an invalid name: %v", err)
			}
			if c.Lookup(e.Name) != e {
				t.Fatalf("Lookup(%q) does not return it", e.Name)
			}
			_ = executor.ToolSchema(e, []string{"github"})
		}
	})
}

// FuzzParseBackends: a backends file never panics the parser or the
// compiler, and one that compiles against the real GitLab tools maps
// onto them. The committed corpus is in testdata/fuzz/FuzzParseBackends.
func FuzzParseBackends(f *testing.F) {
	for _, p := range []string{"github", "gitlab"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "providers", p, executor.BackendsFileName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(backendsHead + "backends:\n  - {executor: create_issue, server: gitlab, tool: create_issue, arguments: {project_id: args.repository, title: 'args.labels.map(a, args.labels.map(b, a)).size() > 0 ? \"x\" : \"y\"'}}\n"))
	f.Add([]byte(backendsHead + "backends:\n  - {executor: create_issue, server: gitlab, tool: create_issue, arguments: {project_id: 'args[\"repository\"]', title: 'string(size(args.title))'}}\n"))
	f.Add([]byte(backendsHead + "backends:\n  - {executor: find_repositories, server: gitlab, tool: search_repositories, arguments: {search: args.query, page: args.?page}}\n"))
	tools := loadTools(f, gitlabTools, "gitlab")
	f.Fuzz(func(t *testing.T, data []byte) {
		bf, err := executor.ParseBackends("f.yaml", data, executor.Builtin())
		if err != nil {
			return
		}
		bs, err := bf.Compile(executor.Builtin(), "acme/gitlab", []string{"gitlab"}, tools)
		if err != nil {
			return
		}
		for _, b := range bs {
			if executor.Builtin().Lookup(b.Executor.Name) == nil || b.Provider != bf.Provider {
				t.Fatalf("compiled backend %+v is not the file's", b)
			}
			// Mapping arbitrary arguments fails or yields valid arguments;
			// it never panics.
			_, _ = b.Mapping.Apply(map[string]any{"repository": "a/b", "title": "t", "query": "q", "path": "p", "page": 2})
		}
	})
}

// FuzzMerge: an operator catalog file never panics the merge, and one
// that merges keeps every built-in executor and provider as it was and
// adds only valid names. The committed corpus is in
// testdata/fuzz/FuzzMerge.
func FuzzMerge(f *testing.F) {
	f.Add([]byte(catalogHead + "providers:\n  - {name: jira, suffix: _jira}\nexecutors:\n  - name: create_ticket\n    description: d\n    inputSchema: {type: object, properties: {project: {type: string}}}\n"))
	f.Add([]byte(catalogHead + "providers:\n  - {name: github, suffix: _gh}\n"))
	f.Add([]byte(catalogHead + "executors:\n  - {name: create_issue, description: d, inputSchema: {type: object}}\n"))
	f.Add([]byte(catalogHead + "executors:\n  - {name: find_x_gitlab, description: d, inputSchema: {type: object}}\n"))
	f.Add([]byte("{\"apiVersion\":\"skillgate.dev/v1\",\"kind\":\"ExecutorCatalog\",\"providers\":[{\"name\":\"a\",\"suffix\":\"_github\"}]}"))
	base := executor.Builtin()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := base.Merge("ops.yaml", data)
		if err != nil {
			return
		}
		for _, e := range base.Executors {
			if c.Lookup(e.Name) != e {
				t.Fatalf("built-in executor %s changed", e.Name)
			}
		}
		for _, p := range base.Providers {
			if q, ok := c.Provider(p.Name); !ok || q != p {
				t.Fatalf("built-in provider %s changed", p.Name)
			}
		}
		for _, e := range c.Executors {
			if _, _, err := executor.ParseName(e.Name); err != nil {
				t.Fatalf("merged an executor with an invalid name: %v", err)
			}
		}
	})
}
