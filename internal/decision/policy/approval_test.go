package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
)

// TestCallApproval: the call approval default an operator approves
// decides step 8: always asks for a grant for a read, never waives it for
// an external write, and never does not waive it for a destructive
// capability, whatever the record says.
func TestCallApproval(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	caps := fixtureCaps()
	set := map[string]capability.CallApproval{"read_file": capability.CallApprovalAlways, "send": capability.CallApprovalNever, "delete_file": capability.CallApprovalNever}
	for i := range caps {
		caps[i].Approval = set[caps[i].CapabilityID]
	}
	if err := e.SetCapabilities(caps); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		ref  capability.Ref
		args string
		want capability.Effect
		msg  string
	}{
		{ref("fs", "read_file"), `{"path":"/srv/a"}`, capability.RequireApproval, "tools/fs:fs/read_file is approved to need a grant for every call: a human must approve it"},
		{ref("mail", "send"), `{}`, capability.Allow, ""},
		{ref("fs", "delete_file"), `{"path":"/srv/a"}`, capability.RequireApproval, "tools/fs:fs/delete_file is destructive: a human must approve it"},
	} {
		d := e.Test(ctx, agent("a", "T0"), tc.ref, args(t, tc.args))
		if d.Effect != tc.want {
			t.Errorf("%s: %s %+v, want %s", tc.ref, d.Effect, d.Reasons, tc.want)
			continue
		}
		if tc.msg != "" && d.Reasons[len(d.Reasons)-1].Message != tc.msg {
			t.Errorf("%s: reason %q, want %q", tc.ref, d.Reasons[len(d.Reasons)-1].Message, tc.msg)
		}
	}
	bad := caps[0]
	bad.Approval = "sometimes"
	if err := e.SetCapabilities([]policy.Capability{bad}); err == nil || err.Error() != `capability 0 (tools/fs:fs/read_file): invalid capability: approval: call approval "sometimes": use by-risk, always or never` {
		t.Errorf("SetCapabilities with a bad approval: %v", err)
	}
}

// TestCheckApproval: the settings an approval would record are checked
// against what the engine can enforce.
func TestCheckApproval(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"owner":{"type":"string"}}}`)
	base := policy.Capability{ExtensionID: "gh", CapabilityID: "fetch", RiskLevel: capability.RiskRead, SideEffects: capability.SideEffectsNone,
		DataEgress: capability.EgressNetwork, InputSchema: schema}
	for _, tc := range []struct {
		name string
		mod  func(*policy.Capability)
		want string
	}{
		{"none", func(*policy.Capability) {}, ""},
		{"domains on a URL argument", func(c *policy.Capability) {
			c.Constraints = constraint.Set{AllowedDomains: []string{"api.github.com"}, URLArgs: []string{"url"}}
		}, ""},
		{"argValues of its argument", func(c *policy.Capability) {
			c.Constraints = constraint.Set{ArgValues: map[string][]string{"owner": {"acme"}}}
		}, ""},
		{"never on a read", func(c *policy.Capability) { c.Approval = capability.CallApprovalNever }, ""},
		{"no schema", func(c *policy.Capability) {
			c.InputSchema = nil
			c.Constraints = constraint.Set{ArgValues: map[string][]string{"x": {"y"}}}
		}, ""},
		{"urlArgs it lacks", func(c *policy.Capability) {
			c.Constraints = constraint.Set{AllowedDomains: []string{"example.com"}, URLArgs: []string{"link"}}
		}, `approval settings refused: gh/fetch: constraints: urlArgs names the argument "link", which gh/fetch does not take (it takes owner, url); name one of its arguments`},
		{"pathGlobs on no path", func(c *policy.Capability) { c.Constraints = constraint.Set{PathGlobs: []string{"/srv/**"}} },
			"approval settings refused: gh/fetch: constraints: pathGlobs would restrict nothing: it checks the arguments path, paths, source, destination, file, directory, which gh/fetch does not take (it takes owner, url); name the argument to check with pathArgs"},
		{"never on destructive", func(c *policy.Capability) {
			c.RiskLevel = capability.RiskDestructive
			c.Approval = capability.CallApprovalNever
		}, "approval settings refused: gh/fetch: approval never cannot waive the grant of a destructive capability: every destructive call needs a human's grant; use by-risk or always"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.mod(&c)
			err := policy.CheckApproval(c)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, policy.ErrApprovalSettings)) {
				t.Errorf("CheckApproval = %v, want %q", err, tc.want)
			}
		})
	}
}
