package executor_test

import (
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
)

const backendsHead = "apiVersion: skillgate.dev/v1\nkind: Backends\nprovider: gitlab\n"

func TestParseBackendsRefuses(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"kind", "apiVersion: skillgate.dev/v1\nkind: ExecutorCatalog\n", `invalid backends file: b.yaml: kind "ExecutorCatalog": write kind: Backends`},
		{"unknown provider", "apiVersion: skillgate.dev/v1\nkind: Backends\nprovider: gitee\n",
			`invalid backends file: b.yaml: provider "gitee" is not a known provider; use one of bitbucket, gitea, github, gitlab, google-workspace, local, microsoft-365, slack (or declare it in an executor catalog)`},
		{"no backends", backendsHead, `invalid backends file: b.yaml: no backends: list at least one under backends:`},
		{"unknown executor", backendsHead + "backends:\n  - {executor: create_ticket, server: gitlab, tool: create_issue, arguments: {title: args.title}}\n",
			`invalid backends file: b.yaml: backends[0]: executor "create_ticket" is not in the catalog (executors: create_branch, create_issue, create_pull_request, find_issues, find_pull_requests, find_repositories, read_file_contents, read_issue, read_pull_request, update_issue, write_file_contents)`},
		{"suffixed executor", backendsHead + "backends:\n  - {executor: create_issue_gitlab, server: gitlab, tool: create_issue, arguments: {title: args.title}}\n",
			`invalid backends file: b.yaml: backends[0]: executor "create_issue_gitlab" is not in the catalog (executors: create_branch, create_issue, create_pull_request, find_issues, find_pull_requests, find_repositories, read_file_contents, read_issue, read_pull_request, update_issue, write_file_contents) (it carries provider "gitlab"'s suffix: write executor: create_issue; the provider is the file's)`},
		{"verb outside the vocabulary", backendsHead + "backends:\n  - {executor: get_file_contents, server: gitlab, tool: get_file_contents, arguments: {file_path: args.path}}\n",
			`invalid backends file: b.yaml: backends[0]: executor "get_file_contents" is not in the catalog (executors: create_branch, create_issue, create_pull_request, find_issues, find_pull_requests, find_repositories, read_file_contents, read_issue, read_pull_request, update_issue, write_file_contents) (invalid executor name: "get_file_contents": verb "get" is not in the vocabulary; use one of find, list, read, create, update, write, delete, send (for "get" write "read"))`},
		{"executor twice", backendsHead + "backends:\n  - {executor: create_issue, server: gitlab, tool: create_issue, arguments: {title: args.title}}\n  - {executor: create_issue, server: gitlab, tool: create_issue, arguments: {title: args.title}}\n",
			`invalid backends file: b.yaml: backends[1] (create_issue): executor create_issue already has a backend at backends[0]; a provider skill serves an executor once`},
		{"no server", backendsHead + "backends:\n  - {executor: create_issue, tool: create_issue, arguments: {title: args.title}}\n",
			`invalid backends file: b.yaml: backends[0] (create_issue): server "": write the key of the server in mcp.json`},
		{"no arguments", backendsHead + "backends:\n  - {executor: create_issue, server: gitlab, tool: create_issue}\n",
			`invalid backends file: b.yaml: backends[0] (create_issue): arguments: map each argument of tool create_issue to a CEL expression over args`},
		{"empty expression", backendsHead + "backends:\n  - {executor: create_issue, server: gitlab, tool: create_issue, arguments: {title: ' '}}\n",
			`invalid backends file: b.yaml: backends[0] (create_issue): arguments.title: a CEL expression of 1 to 4096 bytes`},
		{"unknown field", backendsHead + "backends:\n  - {executor: create_issue, server: gitlab, tool: create_issue, args: {title: args.title}}\n",
			`invalid backends file: b.yaml: yaml: unmarshal errors: line 5: field args not found in type executor.backendEntry`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := executor.ParseBackends("b.yaml", []byte(tc.file), executor.Builtin())
			if err == nil || !errors.Is(err, executor.ErrInvalidBackends) || err.Error() != tc.want {
				t.Fatalf("error:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestCompileBackendsRefuses(t *testing.T) {
	tools := loadTools(t, gitlabTools, "gitlab")
	tests := []struct {
		name, file, want string
	}{
		{"unknown server", backendsHead + "backends:\n  - {executor: create_issue, server: gl, tool: create_issue, arguments: {title: args.title}}\n",
			`invalid backends file: b.yaml: backends[0] (create_issue): server "gl" is not a key of mcp.json (servers: gitlab)`},
		{"unknown tool", backendsHead + "backends:\n  - {executor: create_issue, server: gitlab, tool: open_issue, arguments: {title: args.title}}\n",
			`invalid backends file: b.yaml: backends[0] (create_issue): server gitlab offers no tool "open_issue" (its tools: create_branch, create_issue, create_merge_request, create_or_update_file, create_repository, fork_repository, get_file_contents, push_files, search_repositories)`},
		{"both wrong, both reported", backendsHead + "backends:\n  - {executor: create_issue, server: gitlab, tool: create_issue, arguments: {project_id: args.repo, title: args.title}}\n  - {executor: find_repositories, server: gitlab, tool: search_repositories, arguments: {search: size(args.query)}}\n",
			"b.yaml: backends[0] (create_issue): invalid argument mapping: arguments.project_id: executor create_issue has no argument \"repo\" (its arguments: body, labels, repository, title)\n" +
				"b.yaml: backends[1] (find_repositories): invalid argument mapping: arguments.search: the expression \"size(args.query)\" yields int, but tool gitlab/search_repositories's inputSchema wants search to be string; convert it (string(x))"},
		{"result not a string", backendsHead + "backends:\n  - {executor: create_issue, server: gitlab, tool: create_issue, arguments: {project_id: args.repository, title: args.title}, result: size(result)}\n",
			`b.yaml: backends[0] (create_issue): invalid result mapping: result "size(result)" yields int; it must yield the text for the agent, a string (for example result.content.map(c, c.text).join("\n"))`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := executor.ParseBackends("b.yaml", []byte(tc.file), executor.Builtin())
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Compile(executor.Builtin(), "acme/gitlab", []string{"gitlab"}, tools)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}
