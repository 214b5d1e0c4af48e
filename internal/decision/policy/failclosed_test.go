package policy_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// TestErroringPolicies: Cedar skips a policy whose condition errors (here
// `like` on an argument that arrives as an array); for a forbid that would
// allow the call, so skillgate denies it instead, and an allowed call lists
// the permits that were skipped.
func TestErroringPolicies(t *testing.T) {
	t.Parallel()
	const policies = `
@id("default-permit")
permit (principal, action == Action::"invoke", resource);

@id("no-etc")
forbid (principal, action, resource) when { context.args has path && context.args.path like "/etc/*" };

@id("reports-permit")
permit (principal, action, resource) when { context.args has dir && context.args.dir like "/srv/reports/*" };
`
	e := policy.New(nil)
	set, err := policy.ParsePolicies([]policy.Source{{Name: "policies/files.cedar", Text: []byte(policies)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetPolicies(set); err != nil {
		t.Fatal(err)
	}
	if err := e.SetCapabilities([]policy.Capability{capRecord("fs", "read_file")}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		want       policy.Decision
	}{
		{"string path", `{"path":"/srv/x"}`, policy.Decision{Effect: capability.Allow, Reasons: []policy.Reason{
			{Kind: "policy", Policy: "default-permit", Position: "policies/files.cedar:2", Message: "permitted by default-permit"}}}},
		{"forbid applies", `{"path":"/etc/passwd"}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "policy", Policy: "no-etc", Position: "policies/files.cedar:5", Message: "forbidden by no-etc"}}}},
		{"forbid errors: denied", `{"path":["/etc/passwd"]}`, policy.Decision{Effect: capability.Deny, Reasons: []policy.Reason{
			{Kind: "policy", Policy: "no-etc", Position: "policies/files.cedar:5", Message: "forbid no-etc failed to evaluate (type error: expected string, got set); skillgate denies a call that a forbid cannot rule on"}}}},
		{"permit errors: listed", `{"path":"/srv/x","dir":[1]}`, policy.Decision{Effect: capability.Allow, Reasons: []policy.Reason{
			{Kind: "policy", Policy: "default-permit", Position: "policies/files.cedar:2", Message: "permitted by default-permit"},
			{Kind: "policy", Policy: "reports-permit", Position: "policies/files.cedar:8", Message: "policy reports-permit failed to evaluate and was skipped: type error: expected string, got set"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a map[string]any
			if err := json.Unmarshal([]byte(tt.args), &a); err != nil {
				t.Fatal(err)
			}
			got := e.Evaluate(context.Background(), agent("a", "T3"), ref("fs", "read_file"), a)
			if !reflect.DeepEqual(got, tt.want) {
				gj, _ := json.MarshalIndent(got, "", " ")
				wj, _ := json.MarshalIndent(tt.want, "", " ")
				t.Errorf("got  %s\nwant %s", gj, wj)
			}
		})
	}
}
