package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
)

func TestExamplesMapOntoRealSchemas(t *testing.T) {
	gh := exampleBackends(t, "github", loadTools(t, githubTools, "github"))
	gl := exampleBackends(t, "gitlab", loadTools(t, gitlabTools, "gitlab"))
	if len(gh) != 11 || len(gl) != 6 {
		t.Fatalf("backends: %d github, %d gitlab; want 11 and 6", len(gh), len(gl))
	}
	tests := []struct {
		backend *executor.Backend
		args    string
		want    string
	}{
		{gh[0], `{"repository":"acme/api","title":"Bug","labels":["p1"]}`, `{"labels":["p1"],"owner":"acme","repo":"api","title":"Bug"}`},
		{gl[0], `{"repository":"acme/platform/api","title":"Bug","body":"It fails."}`, `{"description":"It fails.","project_id":"acme/platform/api","title":"Bug"}`},
		{gh[2], `{"query":"skillgate","per_page":5}`, `{"perPage":5,"query":"skillgate"}`},
		{gl[2], `{"query":"skillgate","page":2}`, `{"page":2,"search":"skillgate"}`},
	}
	for _, tc := range tests {
		t.Run(tc.backend.Provider+"/"+tc.backend.Executor.Name, func(t *testing.T) {
			var args map[string]any
			dec := json.NewDecoder(stringsReader(tc.args))
			dec.UseNumber()
			if err := dec.Decode(&args); err != nil {
				t.Fatal(err)
			}
			got, err := tc.backend.Mapping.Apply(args)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("Apply = %s\nwant    %s", got, tc.want)
			}
		})
	}
}

// issueTool is a tool like GitLab's create_issue, closed, with a number
// argument.
var issueTool = capability.Tool{ExtensionID: "gl", CapabilityID: "create_issue", InputSchema: json.RawMessage(`{"type":"object",
	"properties":{"project_id":{"type":"string"},"title":{"type":"string"},"milestone_id":{"type":"number"},"labels":{"type":"array","items":{"type":"string"}},"confidential":{"type":"boolean"}},
	"required":["project_id","title"],"additionalProperties":false}`)}

func TestCompileMappingRefuses(t *testing.T) {
	ex := executor.Builtin().Lookup("create_issue")
	base := map[string]string{"project_id": "args.repository", "title": "args.title"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		args map[string]string
		want string
	}{
		{"unknown executor argument", with("title", "args.name"),
			`invalid argument mapping: arguments.title: executor create_issue has no argument "name" (its arguments: body, labels, repository, title)`},
		{"unknown argument through index", with("title", `args["titel"]`),
			`invalid argument mapping: arguments.title: executor create_issue has no argument "titel" (its arguments: body, labels, repository, title)`},
		{"unknown optional argument", with("milestone_id", `args.?milestone`),
			`invalid argument mapping: arguments.milestone_id: executor create_issue has no argument "milestone" (its arguments: body, labels, repository, title)`},
		{"args used whole", with("title", `args.size() > 2 ? "many" : "few"`),
			`invalid argument mapping: arguments.title: use args only as args.NAME, args.?NAME (optional) or has(args.NAME), with a constant NAME`},
		{"int for a string", with("title", "size(args.title)"),
			`invalid argument mapping: arguments.title: the expression "size(args.title)" yields int, but tool gl/create_issue's inputSchema wants title to be string; convert it (string(x))`},
		{"string argument for a number", with("milestone_id", "args.title"),
			`invalid argument mapping: arguments.milestone_id: the expression "args.title" yields args.title (string), but tool gl/create_issue's inputSchema wants milestone_id to be number; convert it (int(x) or double(x))`},
		{"list for a boolean", with("confidential", "args.?labels"),
			`invalid argument mapping: arguments.confidential: the expression "args.?labels" yields args.labels (array), but tool gl/create_issue's inputSchema wants confidential to be boolean; convert it (a comparison, x == "true")`},
		{"no JSON form", with("title", `b"x"`),
			`invalid argument mapping: arguments.title: the expression "b\"x\"" yields bytes, which has no JSON form; convert it (string(x))`},
		{"required argument unmapped", with("project_id", ""),
			`invalid argument mapping: tool gl/create_issue requires project_id, which no mapping writes: add arguments.project_id: <a CEL expression over args>`},
		{"required argument optional", with("title", "args.?title"),
			`invalid argument mapping: arguments.title: tool gl/create_issue requires title, but the expression may yield no value (an optional); map it to a value, e.g. args.?x.orValue("")`},
		{"argument the tool lacks", with("owner", `args.repository.split("/")[0]`),
			`invalid argument mapping: arguments.owner: tool gl/create_issue has no argument "owner" (its arguments: confidential, labels, milestone_id, project_id, title); remove it`},
		{"does not compile", with("title", "args.title +"),
			`invalid argument mapping: arguments.title: the expression "args.title +" does not compile: ERROR: <input>:1:13: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER} | args.title + | ............^`},
		{"undeclared variable", with("title", "title"),
			`invalid argument mapping: arguments.title: the expression "title" does not compile: ERROR: <input>:1:1: undeclared reference to 'title' (in container '') | title | ^`},
		{"nested loop over the arguments", with("title", `args.labels.exists(a, args.labels.exists(b, a == b)) ? "x" : "y"`),
			`invalid argument mapping: arguments.title: the expression "args.labels.exists(a, args.labels.exists(b, a == b)) ? \"x\" : \"y\"" may cost up to 28174985920515, over the limit of 1000000 (for arguments of up to 65536 bytes); do less work per argument byte (no nested loops over the arguments, no replace or join that multiplies them)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := executor.CompileMapping(ex, issueTool, tc.args)
			if err == nil {
				t.Fatal("compiled; want an error")
			}
			if !errors.Is(err, executor.ErrInvalidMapping) || err.Error() != tc.want {
				t.Fatalf("error:\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestApplyRefuses(t *testing.T) {
	ex := executor.Builtin().Lookup("create_issue")
	tests := []struct {
		name string
		args map[string]string
		call map[string]any
		want string
	}{
		{"runtime cost limit", map[string]string{"project_id": "args.repository", "title": "args.title.lowerAscii()"},
			map[string]any{"repository": "a/b", "title": strings.Repeat("A", 12<<20)},
			`argument mapping failed: gl/create_issue: arguments.title: operation cancelled: actual cost limit exceeded`},
		{"evaluation error", map[string]string{"project_id": `args.repository.split("/")[2]`, "title": "args.title"},
			map[string]any{"repository": "a/b", "title": "t"},
			`argument mapping failed: gl/create_issue: arguments.project_id: index out of bounds: 2`},
		{"absent argument", map[string]string{"project_id": "args.repository", "title": "args.body"},
			map[string]any{"repository": "a/b", "title": "t"},
			`argument mapping failed: gl/create_issue: arguments.title: no such key: body`},
		{"tool schema refuses", map[string]string{"project_id": "args.repository", "title": "args.title", "labels": "args.labels.map(l, size(l))"},
			map[string]any{"repository": "a/b", "title": "t", "labels": []any{"bug"}},
			`argument mapping failed: gl/create_issue: the mapped arguments do not satisfy the tool's inputSchema: jsonschema validation failed with 'skillgate:executor-schema.json#' - at '/labels/0': got number, want string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := executor.CompileMapping(ex, issueTool, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Apply(tc.call)
			if err == nil || !errors.Is(err, executor.ErrMappingFailed) || err.Error() != tc.want {
				t.Fatalf("error:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestApplyInterrupted: a call whose context ends stops the mapping of
// arguments larger than the estimate assumed (those run with the runtime
// limit and interrupt checks).
func TestApplyInterrupted(t *testing.T) {
	ex := executor.Builtin().Lookup("create_issue")
	m, err := executor.CompileMapping(ex, issueTool, map[string]string{"project_id": "args.repository", "title": "string(args.labels.map(l, 1).size())"})
	if err != nil {
		t.Fatal(err)
	}
	labels := make([]any, executor.MaxArgBytes+1)
	for i := range labels {
		labels[i] = "x"
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = m.ApplyContext(ctx, map[string]any{"repository": "a/b", "title": "t", "labels": labels})
	const want = "argument mapping failed: gl/create_issue: arguments.title: operation interrupted: context canceled"
	if err == nil || !errors.Is(err, executor.ErrMappingFailed) || err.Error() != want {
		t.Fatalf("error:\n got %v\nwant %s", err, want)
	}
}
