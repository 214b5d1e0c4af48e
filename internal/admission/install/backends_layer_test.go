package install_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestInstallChecksBackends: admission layer 3 (format) compiles a
// provider skill's backends.yaml against the tools its server offered at
// install, not only at approval: a file that does not compile blocks the
// install with the file, the backend, the argument and the fix, and a good
// one passes, its mapped tools in the default proposal beside the tool
// SKILL.md names.
func TestInstallChecksBackends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gitlab := newGitLabProvider(t)
	tests := []struct {
		name, backends string
		verdict        string
		evidence       string
		reason         string
		proposal       []string
	}{
		{"wrong type", backendsHead + "  - {executor: find_repositories, server: gitlab, tool: search_repositories, arguments: {search: size(args.query)}}\n",
			manifest.LayerBlock,
			`backends.yaml: gitlab/backends.yaml: backends[0] (find_repositories): invalid argument mapping: arguments.search: the expression "size(args.query)" yields int, but tool gitlab/search_repositories's inputSchema wants search to be string; convert it (string(x))`,
			`layer 3 (format): gitlab/backends.yaml: backends[0] (find_repositories): invalid argument mapping: arguments.search: the expression "size(args.query)" yields int, but tool gitlab/search_repositories's inputSchema wants search to be string; convert it (string(x)); fix backends.yaml and install the skill again`,
			[]string{"gitlab/create_issue"}},
		{"unknown tool", backendsHead + "  - {executor: create_issue, server: gitlab, tool: open_issue, arguments: {title: args.title}}\n",
			manifest.LayerBlock,
			`backends.yaml: invalid backends file: gitlab/backends.yaml: backends[0] (create_issue): server gitlab offers no tool "open_issue" (its tools: create_branch, create_issue, create_merge_request, create_or_update_file, create_repository, fork_repository, get_file_contents, push_files, search_repositories)`,
			`layer 3 (format): invalid backends file: gitlab/backends.yaml: backends[0] (create_issue): server gitlab offers no tool "open_issue" (its tools: create_branch, create_issue, create_merge_request, create_or_update_file, create_repository, fork_repository, get_file_contents, push_files, search_repositories); fix backends.yaml and install the skill again`,
			[]string{"gitlab/create_issue"}},
		{"the worked example", gitlab.example, manifest.LayerPass,
			"backends.yaml: provider gitlab, 6 tools mapped onto executors, every mapping compiled against the introspected tools", "",
			[]string{"gitlab/create_issue", "gitlab/get_file_contents", "gitlab/search_repositories", "gitlab/create_or_update_file", "gitlab/create_merge_request", "gitlab/create_branch"}},
	}
	// A server that cannot be introspected blocks the skill on its own; its
	// backends are not blamed for tools nobody could list.
	t.Run("a server that does not start", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, install.Options{})
		src := writeSkill(t, t.TempDir(), "gitlab", "---\nGitLab as a provider: use create_issue.\n",
			map[string]any{"gitlab": testServerDecl("exit", nil)})
		if err := os.WriteFile(filepath.Join(src, "backends.yaml"), []byte(gitlab.example), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := e.svc.Install(ctx, src, "operator:ana")
		if err != nil {
			t.Fatal(err)
		}
		format := r.Layers[2]
		want := "backends.yaml: provider gitlab, 6 tools mapped onto executors; the mappings onto gitlab not compiled: the server could not be introspected"
		if format.Verdict != manifest.LayerPass || format.Evidence[len(format.Evidence)-1] != want {
			t.Errorf("layer 3: %+v\nwant pass with %s", format, want)
		}
		if r.State != store.StateBlocked || slices.ContainsFunc(r.Validation.Reasons, func(s string) bool { return strings.HasPrefix(s, "layer 3 ") }) {
			t.Errorf("state %s, reasons %q: want blocked by the server alone", r.State, r.Validation.Reasons)
		}
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, install.Options{})
			src := gitlab.write(t, "---\nGitLab as a provider: use create_issue.\n", tc.backends)
			r, err := e.svc.Install(ctx, src, "operator:ana")
			if err != nil {
				t.Fatal(err)
			}
			format := r.Layers[2]
			if format.Name != "format" || format.Verdict != tc.verdict || format.Evidence[len(format.Evidence)-1] != tc.evidence {
				t.Errorf("layer 3: %+v\nwant %s with %s", format, tc.verdict, tc.evidence)
			}
			hasReason := slices.Contains(r.Validation.Reasons, tc.reason)
			if tc.reason != "" && (!hasReason || !strings.Contains(r.Reason, tc.reason)) {
				t.Errorf("reasons: %q (%s)\nwant %s", r.Validation.Reasons, r.Reason, tc.reason)
			}
			if tc.reason == "" && slices.ContainsFunc(r.Validation.Reasons, func(s string) bool { return strings.HasPrefix(s, "layer 3 ") }) {
				t.Errorf("reasons: %q", r.Validation.Reasons)
			}
			if !slices.Equal(r.Proposal.Capabilities, tc.proposal) {
				t.Errorf("proposal: %q, want %q", r.Proposal.Capabilities, tc.proposal)
			}
		})
	}
}
