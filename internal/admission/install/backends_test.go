package install_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestApproveChecksBackends: a provider skill whose backends.yaml maps an
// executor onto a tool with an argument of the wrong type, or names a
// tool its server does not offer, cannot be approved: the error names the
// file, the backend, the argument and the fix, and the install stays
// where it was. The same skill with the worked example's mappings is
// approved.
func TestApproveChecksBackends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gitlab := newGitLabProvider(t)
	tests := []struct {
		name, backends, want string
	}{
		{"wrong type", backendsHead + "  - {executor: find_repositories, server: gitlab, tool: search_repositories, arguments: {search: size(args.query)}}\n",
			`blocked: gitlab cannot be approved: gitlab/backends.yaml: backends[0] (find_repositories): invalid argument mapping: arguments.search: the expression "size(args.query)" yields int, but tool gitlab/search_repositories's inputSchema wants search to be string; convert it (string(x)); fix backends.yaml and install the skill again`},
		{"unknown tool", backendsHead + "  - {executor: create_issue, server: gitlab, tool: open_issue, arguments: {title: args.title}}\n",
			`blocked: gitlab cannot be approved: invalid backends file: gitlab/backends.yaml: backends[0] (create_issue): server gitlab offers no tool "open_issue" (its tools: create_branch, create_issue, create_merge_request, create_or_update_file, create_repository, fork_repository, get_file_contents, push_files, search_repositories); fix backends.yaml and install the skill again`},
		{"unknown executor", backendsHead + "  - {executor: create_ticket, server: gitlab, tool: create_issue, arguments: {title: args.title}}\n",
			`blocked: gitlab cannot be approved: invalid backends file: gitlab/backends.yaml: backends[0]: executor "create_ticket" is not in the catalog (executors: create_branch, create_issue, create_pull_request, find_issues, find_pull_requests, find_repositories, read_file_contents, read_issue, read_pull_request, update_issue, write_file_contents); fix backends.yaml and install the skill again`},
		{"the worked example", gitlab.example, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, install.Options{})
			src := gitlab.write(t, "---\nGitLab as a provider.\n", tc.backends)
			if _, err := e.svc.Install(ctx, src, "operator:ana"); err != nil {
				t.Fatal(err)
			}
			for _, c := range []string{"gitlab/search_repositories", "gitlab/create_issue"} {
				if _, err := e.svc.Complete(ctx, "gitlab", install.Completion{Capability: c, RiskLevel: "write", SideEffects: "external", DataEgress: "network",
					Why: "talks to the GitLab API for the tenant"}, "operator:ana"); err != nil {
					t.Fatal(err)
				}
			}
			r, err := e.svc.Approve(ctx, "gitlab", []string{"gitlab/search_repositories", "gitlab/create_issue"}, "operator:ana")
			if tc.want == "" {
				if err != nil || r.State != store.StateInstalled {
					t.Fatalf("approve: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, install.ErrBlocked) || err.Error() != tc.want {
				t.Fatalf("approve:\n got %v\nwant %s", err, tc.want)
			}
			r, err = e.svc.Review(ctx, "gitlab")
			if err != nil || r.State == store.StateInstalled {
				t.Fatalf("after the refusal: %v, state %s", err, r.State)
			}
		})
	}
}
