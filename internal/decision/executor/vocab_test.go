package executor_test

import (
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name         string
		verb, object string
		err          string
	}{
		{name: "create_issue", verb: "create", object: "issue"},
		{name: "read_file_contents", verb: "read", object: "file_contents"},
		{name: "find_repositories", verb: "find", object: "repositories"},
		{name: "send_message2", verb: "send", object: "message2"},
		{name: "get_file_contents", err: `invalid executor name: "get_file_contents": verb "get" is not in the vocabulary; use one of find, list, read, create, update, write, delete, send (for "get" write "read")`},
		{name: "search_repositories", err: `invalid executor name: "search_repositories": verb "search" is not in the vocabulary; use one of find, list, read, create, update, write, delete, send (for "search" write "find")`},
		{name: "frobnicate_widget", err: `invalid executor name: "frobnicate_widget": verb "frobnicate" is not in the vocabulary; use one of find, list, read, create, update, write, delete, send`},
		{name: "create", err: `invalid executor name: "create" has no object: write verb_object like create_issue, the verb one of find, list, read, create, update, write, delete, send`},
		{name: "create_", err: `invalid executor name: "create_" has no object: write verb_object like create_issue, the verb one of find, list, read, create, update, write, delete, send`},
		{name: "create_Issue", err: `invalid executor name: "create_Issue": object "Issue" must be lowercase words of letters and digits joined by '_', each starting with a letter`},
		{name: "create_issue__x", err: `invalid executor name: "create_issue__x": object "issue__x" must be lowercase words of letters and digits joined by '_', each starting with a letter`},
		{name: "create_2fa", err: `invalid executor name: "create_2fa": object "2fa" must be lowercase words of letters and digits joined by '_', each starting with a letter`},
		{name: "", err: `invalid executor name: "": 1 to 64 characters, written verb_object like create_issue`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			verb, object, err := executor.ParseName(tc.name)
			if tc.err != "" {
				if err == nil || !errors.Is(err, executor.ErrInvalidName) || err.Error() != tc.err {
					t.Fatalf("error:\n got %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil || string(verb) != tc.verb || object != tc.object {
				t.Fatalf("ParseName = %q, %q, %v; want %q, %q", verb, object, err, tc.verb, tc.object)
			}
		})
	}
}

func TestSplitProvider(t *testing.T) {
	cat := executor.Builtin()
	tests := []struct {
		tool, base, provider string
		ok                   bool
	}{
		{"create_issue_github", "create_issue", "github", true},
		{"find_issues_gitlab", "find_issues", "gitlab", true},
		{"send_message_google", "send_message", "google-workspace", true},
		{"create_issue", "", "", false},
		{"_github", "", "", false},
	}
	for _, tc := range tests {
		base, provider, ok := cat.SplitProvider(tc.tool)
		if base != tc.base || provider != tc.provider || ok != tc.ok {
			t.Errorf("SplitProvider(%q) = %q, %q, %v; want %q, %q, %v", tc.tool, base, provider, ok, tc.base, tc.provider, tc.ok)
		}
	}
}

func TestCanonicalName(t *testing.T) {
	for _, tc := range []struct{ tool, want, err string }{
		{"create_issue", "create_issue", ""},
		{"search_repositories", "find_repositories", ""},
		{"get_file_contents", "read_file_contents", ""},
		{"create_merge_request", "create_pull_request", ""},
		{"get_merge_requests", "read_pull_requests", ""},
		{"create_merge_request_note", "create_merge_request_note", ""},
		{"create_or_update_file", "", `invalid executor name: "create_or_update_file" joins two actions with "or": an executor is one action`},
	} {
		got, err := executor.CanonicalName(tc.tool)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("CanonicalName(%q) = %q, %v; want %q, %s", tc.tool, got, err, tc.want, tc.err)
		}
	}
}
