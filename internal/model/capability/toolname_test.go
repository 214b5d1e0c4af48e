package capability_test

import (
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
)

func TestAssignToolNames(t *testing.T) {
	ref := func(ext, tool string) capability.Ref {
		return capability.Ref{Skill: "tools/gitlab", ExtensionID: ext, CapabilityID: tool}
	}
	held := map[string]string{"create_issue": "github", "tools--gitlab__search": "other"}
	taken := func(n string) string { return held[n] }
	tests := []struct {
		name string
		refs []capability.Ref
		keep map[string]string
		want map[string]capability.AssignedName
	}{
		{"free name", []capability.Ref{ref("gl", "list_projects")}, nil,
			map[string]capability.AssignedName{"gl/list_projects": {Name: "list_projects"}}},
		{"taken by another skill", []capability.Ref{ref("gl", "create_issue")}, nil,
			map[string]capability.AssignedName{"gl/create_issue": {Name: "tools--gitlab__create_issue", Reason: "create_issue is taken by github"}}},
		{"a gateway tool", []capability.Ref{ref("gl", "read_file")}, nil,
			map[string]capability.AssignedName{"gl/read_file": {Name: "tools--gitlab__read_file", Reason: "read_file is a tool of skillgate's own"}}},
		{"free, though its namespaced form is taken", []capability.Ref{ref("gl", "search")}, map[string]string{},
			map[string]capability.AssignedName{"gl/search": {Name: "search"}}},
		{"two servers of one skill", []capability.Ref{ref("a", "create_issue"), ref("b", "create_issue")}, nil,
			map[string]capability.AssignedName{
				"a/create_issue": {Name: "tools--gitlab__create_issue", Reason: "create_issue is taken by github"},
				"b/create_issue": {Name: "tools--gitlab__b__create_issue", Reason: "create_issue is taken by github"},
			}},
		{"kept from an earlier approval", []capability.Ref{ref("gl", "list_projects")}, map[string]string{"gl/list_projects": "tools--gitlab__list_projects"},
			map[string]capability.AssignedName{"gl/list_projects": {Name: "tools--gitlab__list_projects", Reason: "kept from an earlier approval"}}},
		{"kept own name", []capability.Ref{ref("gl", "list_projects")}, map[string]string{"gl/list_projects": "list_projects"},
			map[string]capability.AssignedName{"gl/list_projects": {Name: "list_projects"}}},
		{"a kept name since taken is given up", []capability.Ref{ref("gl", "create_issue")}, map[string]string{"gl/create_issue": "create_issue"},
			map[string]capability.AssignedName{"gl/create_issue": {Name: "tools--gitlab__create_issue", Reason: "create_issue is taken by github"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := capability.AssignToolNames("tools/gitlab", tc.refs, tc.keep, taken)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}
