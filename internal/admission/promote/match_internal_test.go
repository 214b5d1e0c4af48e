package promote

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// realTools reads the captured tools/list of a real npm server (the
// executor package's test data) by tool name.
func realTools(t *testing.T, file string) map[string]capability.Tool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "decision", "executor", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	out := map[string]capability.Tool{}
	for _, x := range res.Tools {
		out[x.Name] = capability.Tool{ExtensionID: "s", CapabilityID: x.Name, Description: x.Description, InputSchema: x.InputSchema}
	}
	return out
}

// TestMatcherWritesTheExampleMappings: for every backend of the worked
// example's hand-written backends.yaml (GitHub and GitLab, against the
// real servers' schemas), the matcher writes exactly the mapping a human
// wrote, owner + repo and project_id from repository included.
func TestMatcherWritesTheExampleMappings(t *testing.T) {
	cat := executor.Builtin()
	for _, s := range []struct{ provider, captured string }{
		{"github", "server-github-2025.4.8.tools.json"},
		{"gitlab", "server-gitlab-2025.4.25.tools.json"},
	} {
		tools := realTools(t, s.captured)
		file := filepath.Join("..", "..", "..", "examples", "providers", s.provider, executor.BackendsFileName)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := executor.ParseBackends(file, data, cat)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range f.Backends {
			t.Run(s.provider+"/"+b.Executor, func(t *testing.T) {
				got := mapTool(cat.Lookup(b.Executor).InputSchema, tools[b.Tool].InputSchema)
				if !reflect.DeepEqual(got, b.Arguments) {
					t.Errorf("%s → %s:\n got %v\nwant %v", b.Executor, b.Tool, got, b.Arguments)
				}
			})
		}
	}
}

// TestArgScore: the scores of argument pairs of the built-in executors
// and the real servers' tools, exactly, and whether the matcher takes
// them (at least MatchThreshold).
func TestArgScore(t *testing.T) {
	cat := executor.Builtin()
	gh, gl := realTools(t, "server-github-2025.4.8.tools.json"), realTools(t, "server-gitlab-2025.4.25.tools.json")
	arg := func(schema json.RawMessage, name string) argInfo {
		for _, a := range argsOf(schema) {
			if a.name == name {
				return a
			}
		}
		t.Fatalf("no argument %s", name)
		return argInfo{}
	}
	for _, tc := range []struct {
		executor, earg string
		tool           capability.Tool
		targ           string
		want           string
	}{
		{"create_issue", "title", gl["create_issue"], "title", "1.00"},
		{"create_issue", "body", gl["create_issue"], "description", "1.00"},
		{"create_issue", "repository", gl["create_issue"], "project_id", "0.62"},
		{"read_file_contents", "path", gl["get_file_contents"], "file_path", "0.69"},
		{"read_file_contents", "ref", gh["get_file_contents"], "branch", "0.83"},
		{"write_file_contents", "message", gl["create_or_update_file"], "commit_message", "0.78"},
		{"read_issue", "number", gh["get_issue"], "issue_number", "0.78"},
		{"find_repositories", "query", gl["search_repositories"], "search", "1.00"},
		{"find_repositories", "per_page", gh["search_repositories"], "perPage", "0.95"},
		{"create_pull_request", "source_branch", gh["create_pull_request"], "head", "0.71"},
		{"create_pull_request", "source_branch", gh["create_pull_request"], "base", "0.33"},
		{"create_pull_request", "title", gh["create_pull_request"], "body", "0.17"},
		{"create_issue", "labels", gl["create_issue"], "assignee_ids", "0.10"},
	} {
		e, tl := arg(cat.Lookup(tc.executor).InputSchema, tc.earg), arg(tc.tool.InputSchema, tc.targ)
		if got := fmt.Sprintf("%.2f", argScore(e, tl)); got != tc.want {
			t.Errorf("%s.%s ↔ %s.%s: score %s, want %s", tc.executor, tc.earg, tc.tool.CapabilityID, tc.targ, got, tc.want)
		}
	}
}

// TestDraftNewExecutor: with a catalog that does not declare
// create_branch, the real servers' create_branch tools draft a new
// executor of repository, branch and from_branch (GitLab's ref), mapped
// onto owner + repo and project_id.
func TestDraftNewExecutor(t *testing.T) {
	cat, err := executor.ParseCatalog("test.yaml", []byte("apiVersion: skillgate.dev/v1\nkind: ExecutorCatalog\nproviders:\n"+
		"  - {name: github, suffix: _github}\n  - {name: gitlab, suffix: _gitlab}\nexecutors: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	gh, gl := realTools(t, "server-github-2025.4.8.tools.json"), realTools(t, "server-gitlab-2025.4.25.tools.json")
	p, ok := draft(cat, "create_branch", []offer{{"github", "gh", "s", gh["create_branch"]}, {"gitlab", "gl", "s", gl["create_branch"]}}, nil)
	if !ok {
		t.Fatal("not drafted")
	}
	want := `{"additionalProperties":false,"properties":{"branch":{"type":"string"},"from_branch":{"type":"string"},` +
		`"repository":{"type":"string","description":"The repository, \"owner/name\" (on GitLab the project's full path).","pattern":"^[^/\\s]+(/[^/\\s]+)+$"}},` +
		`"required":["branch","repository"],"type":"object"}`
	if !p.New || string(p.Executor.InputSchema) != want || p.Executor.Description != "Create a new branch." {
		t.Errorf("executor %s %s new %v\nwant schema %s", p.Executor.Description, p.Executor.InputSchema, p.New, want)
	}
	wantB := []map[string]string{
		{"owner": `args.repository.split("/")[0]`, "repo": `args.repository.split("/")[1]`, "branch": "args.branch", "from_branch": "args.?from_branch"},
		{"project_id": "args.repository", "branch": "args.branch", "ref": "args.?from_branch"},
	}
	for i, b := range p.Backends {
		if !reflect.DeepEqual(b.Arguments, wantB[i]) {
			t.Errorf("backend %s: %v, want %v", b.Provider, b.Arguments, wantB[i])
		}
	}
	ss := []Skill{{Key: "gh", Tools: []capability.Tool{gh["create_branch"]}}, {Key: "gl", Tools: []capability.Tool{gl["create_branch"]}}}
	if v, err := Validate(cat, p, ss, Serving{}); err != nil || len(v.Backends) != 2 || len(v.Removed) != 0 {
		t.Errorf("validate: %+v %v", v, err)
	}
}

// TestMatchArgsAmbiguous: an argument that scores alike against two tool
// arguments is paired with neither; a clear best pair is taken once.
func TestMatchArgsAmbiguous(t *testing.T) {
	exec := argsOf(json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string"}},"required":["branch"]}`))
	for _, tc := range []struct {
		tool string
		want []pair
	}{
		{`{"type":"object","properties":{"source_branch":{"type":"string"},"target_branch":{"type":"string"}},"required":["source_branch","target_branch"]}`, nil},
		{`{"type":"object","properties":{"source_branch":{"type":"string"},"title":{"type":"string"}},"required":["source_branch"]}`, []pair{{"branch", "source_branch", 0.78}}},
		{`{"type":"object","properties":{"branch":{"type":"integer"}}}`, nil},
	} {
		got := matchArgs(exec, argsOf(json.RawMessage(tc.tool)))
		for i := range got {
			got[i].score = float64(int(got[i].score*100+0.5)) / 100
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.tool, got, tc.want)
		}
	}
}

// TestArgWords: the words the matcher compares, from the shared split
// and plural folding (internal/platform/words) with the matcher's own
// equivalents and stop words on top. "This" is a stop word however it
// is spelled, and "status" and "repositories" fold as search folds them.
func TestArgWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"issue_number", []string{"issue", "number"}},
		{"perPage", []string{"per", "page"}},
		{"project_id", []string{"repository", "id"}},
		{"mergeRequestIid", []string{"merge", "request", "number"}},
		{"Only pull requests from this branch", []string{"only", "pull", "request", "branch"}},
		{"Search GitHub repositories", []string{"query", "git", "hub", "repository"}},
		{"The combined status of all checks", []string{"combined", "status", "all", "check"}},
		{"Label names the issue carries", []string{"label", "name", "issue", "carry"}},
		{"", nil},
	} {
		if got := argWords(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("argWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := len(argWords(strings.Repeat("word ", 1000))); got != maxArgWords+1 {
		t.Errorf("argWords of 1000 words: %d words, want %d", got, maxArgWords+1)
	}
}
