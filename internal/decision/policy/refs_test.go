package policy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
)

func TestParseCapabilityRef(t *testing.T) {
	t.Parallel()
	const help = "write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file"
	tests := []struct {
		in      string
		want    capability.Ref
		wantErr string
	}{
		{in: "notes:fs/write_file", want: capability.Ref{Skill: "notes", ExtensionID: "fs", CapabilityID: "write_file"}},
		{in: "acme/notes:fs/write_file", want: capability.Ref{Skill: "acme/notes", ExtensionID: "fs", CapabilityID: "write_file"}},
		// The tool is everything after the server's '/'.
		{in: "a:b/c/d", want: capability.Ref{Skill: "a", ExtensionID: "b", CapabilityID: "c/d"}},
		{in: "fs/write_file", wantErr: `invalid capability: capability "fs/write_file" does not name its skill (several skills may name a server "fs"): ` + help},
		{in: "write_file", wantErr: `invalid capability: capability "write_file": ` + help},
		{in: "", wantErr: `invalid capability: capability "": ` + help},
		{in: ":fs/x", wantErr: `invalid capability: capability ":fs/x": ` + help},
		{in: "notes:fs", wantErr: `invalid capability: capability "notes:fs": ` + help},
		{in: "notes:fs/", wantErr: `invalid capability: capability "notes:fs/": ` + help},
		{in: "notes:a:b/c", wantErr: `invalid capability: capability "notes:a:b/c": ` + help},
		{in: "no\"tes:fs/x", wantErr: `invalid capability: skill key "no\"tes": 1 to 256 characters without ':', '"' or control characters`},
	}
	for _, tt := range tests {
		got, err := capability.ParseRef(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr || !errors.Is(err, policy.ErrInvalidCapability) {
				t.Errorf("ParseCapabilityRef(%q)\n got %v\nwant %s", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want || got.String() != tt.in {
			t.Errorf("ParseCapabilityRef(%q) = %+v, %v (String %q)", tt.in, got, err, got.String())
		}
	}
}

// twoSkillEngine has skills alpha and beta that both name a server "fs"
// with a destructive write_file, and gamma with a server "web".
func twoSkillEngine(t *testing.T) *policy.Engine {
	t.Helper()
	e := policy.New(nil)
	destructive := func(sk string) func(*policy.Capability) {
		return func(c *policy.Capability) { c.SkillKey, c.RiskLevel = sk, capability.RiskDestructive }
	}
	caps := []policy.Capability{
		capRecord("fs", "write_file", destructive("alpha")),
		capRecord("fs", "write_file", destructive("beta")),
		capRecord("fs", "read_file", func(c *policy.Capability) { c.SkillKey = "alpha" }),
		capRecord("web", "fetch", func(c *policy.Capability) { c.SkillKey = "gamma" }),
	}
	if err := e.SetCapabilities(caps); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestResolveCapability(t *testing.T) {
	t.Parallel()
	e := twoSkillEngine(t)
	tests := []struct{ in, want, wantErr string }{
		{in: "fs/read_file", want: "alpha:fs/read_file"},
		{in: "web/fetch", want: "gamma:web/fetch"},
		{in: "beta:fs/write_file", want: "beta:fs/write_file"},
		// The full form is parsed, not looked up: out of scope is decided later.
		{in: "nobody:fs/write_file", want: "nobody:fs/write_file"},
		{in: "fs/write_file", wantErr: "invalid capability: fs/write_file is offered by 2 skills (alpha:fs/write_file, beta:fs/write_file); name one of them"},
		{in: "fs/nope", wantErr: "invalid capability: fs/nope: no installed skill offers it; name the skill: write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file"},
		{in: "fs", wantErr: `invalid capability: capability "fs": write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file`},
	}
	for _, tt := range tests {
		got, err := e.ResolveCapability(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr || !errors.Is(err, policy.ErrInvalidCapability) {
				t.Errorf("ResolveCapability(%q)\n got %v\nwant %s", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("ResolveCapability(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestResolveGrantCapability(t *testing.T) {
	t.Parallel()
	e := twoSkillEngine(t)
	tests := []struct{ in, want, wantErr string }{
		{in: "*", want: "*"},
		{in: "fs/read_file", want: "alpha:fs/read_file"},
		{in: "web/*", want: "gamma:web/*"},
		{in: "alpha:*", want: "alpha:*"},
		{in: "*:fs/write_file", want: "*:fs/write_file"},
		{in: "fs/write_file", wantErr: "invalid grant: fs/write_file matches capabilities of 2 skills (alpha:fs/write_file, beta:fs/write_file); name one of them, or write *:fs/write_file to grant it for every skill"},
		{in: "fs/*", wantErr: "invalid grant: fs/* matches capabilities of 2 skills (alpha:fs/*, beta:fs/*); name one of them, or write *:fs/* to grant it for every skill"},
		{in: "mail/send", wantErr: "invalid grant: no installed skill offers a capability matching mail/send; name the skill: write skill:extensionId/capabilityId (acme/notes:fs/write_file), a pattern naming the skill (acme/notes:fs/*, acme/notes:*), or * for everything"},
		{in: "alpha:fs", wantErr: `invalid grant: capability "alpha:fs": write skill:extensionId/capabilityId (acme/notes:fs/write_file), a pattern naming the skill (acme/notes:fs/*, acme/notes:*), or * for everything`},
	}
	for _, tt := range tests {
		got, err := e.ResolveGrantCapability(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr || !errors.Is(err, policy.ErrInvalidGrant) {
				t.Errorf("ResolveGrantCapability(%q)\n got %v\nwant %s", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ResolveGrantCapability(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestGrantAndPolicyScopedBySkill: with two skills that both name a server
// "fs", a grant, a forbid on the capability and a forbid on the extension
// each apply to the skill they name only.
func TestGrantAndPolicyScopedBySkill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := twoSkillEngine(t)
	alpha := capability.Ref{Skill: "alpha", ExtensionID: "fs", CapabilityID: "write_file"}
	beta := capability.Ref{Skill: "beta", ExtensionID: "fs", CapabilityID: "write_file"}
	p := agent("a", "T3")
	if _, err := e.AddGrant(ctx, policy.Grant{Principal: "acme/a", Capability: alpha.String(), Level: capability.RiskDestructive}); err != nil {
		t.Fatal(err)
	}
	if d := e.Evaluate(ctx, p, alpha, nil); d.Effect != capability.Allow {
		t.Fatalf("alpha: %+v", d)
	}
	if d := e.Evaluate(ctx, p, beta, nil); d.Effect != capability.RequireApproval {
		t.Fatalf("beta was covered by alpha's grant: %+v", d)
	}
	for _, text := range []string{
		"permit (principal, action, resource);\nforbid (principal, action, resource == Capability::\"beta:fs/write_file\");",
		"permit (principal, action, resource);\nforbid (principal, action, resource in Extension::\"beta:fs\");",
	} {
		set, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(text)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SetPolicies(set); err != nil {
			t.Fatal(err)
		}
		if d := e.Evaluate(ctx, p, alpha, nil); d.Effect != capability.Allow {
			t.Errorf("%s: alpha %+v", text, d)
		}
		if d := e.Evaluate(ctx, p, beta, nil); d.Effect != capability.Deny {
			t.Errorf("%s: beta %+v", text, d)
		}
	}
}

// TestPolicyOldCapabilityForm: an entity literal without the skill would
// match nothing (a forbid would silently stop applying), so it is an error
// that names the fix.
func TestPolicyOldCapabilityForm(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, want string }{
		{`forbid (principal, action, resource == Capability::"fs/write_file");`,
			`invalid policy: p.cedar:1: Capability::"fs/write_file": capability ids name their skill since skills may share server names; write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file`},
		{`forbid (principal, action, resource) when { resource in Extension::"fs" };`,
			`invalid policy: p.cedar:1: Extension::"fs": extension ids name their skill since skills may share server names; write it as skill:extensionId, like acme/notes:fs`},
		{`permit (principal, action, resource) when { resource in [Capability::"a:b/c", Capability::"b/c"] };`,
			`invalid policy: p.cedar:1: Capability::"b/c": capability ids name their skill since skills may share server names; write it as skill:extensionId/capabilityId, like acme/notes:fs/write_file`},
	}
	for _, tt := range tests {
		_, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(tt.text)}})
		if err == nil || err.Error() != tt.want || !errors.Is(err, policy.ErrInvalidPolicy) {
			t.Errorf("%s\n got %v\nwant %s", tt.text, err, tt.want)
		}
	}
	// Text that only looks like an entity, inside a string, and other
	// entity types whose names end alike, are left alone.
	ok := `permit (principal, action, resource) when { resource.skill == "Capability::\"x\"" && resource.extension != "Extension::" };`
	if _, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(ok)}}); err != nil {
		t.Errorf("%s: %v", ok, err)
	}
}

// TestReleaseGrant: a use given back makes a used-up one-use grant usable
// again, once; releasing more than was used changes nothing.
func TestReleaseGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := twoSkillEngine(t)
	alpha := capability.Ref{Skill: "alpha", ExtensionID: "fs", CapabilityID: "write_file"}
	p := agent("a", "T3")
	g, err := e.AddGrant(ctx, policy.Grant{Principal: "acme/a", Capability: alpha.String(), Level: capability.RiskDestructive, Uses: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := e.Evaluate(ctx, p, alpha, nil)
	if d.Effect != capability.Allow || d.Reasons[len(d.Reasons)-1].Grant != g.ID {
		t.Fatalf("%+v", d)
	}
	if d := e.Evaluate(ctx, p, alpha, nil); d.Effect != capability.RequireApproval {
		t.Fatalf("used-up grant: %+v", d)
	}
	for range 2 {
		if err := e.ReleaseGrant(ctx, g.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.Grants()[0].Used; got != 0 {
		t.Fatalf("used %d after release", got)
	}
	if d := e.Evaluate(ctx, p, alpha, nil); d.Effect != capability.Allow {
		t.Fatalf("after release: %+v", d)
	}
	if d := e.Evaluate(ctx, p, alpha, nil); d.Effect != capability.RequireApproval {
		t.Fatalf("two releases gave back two uses: %+v", d)
	}
	if err := e.ReleaseGrant(ctx, "g_unknown"); err != nil {
		t.Fatal(err)
	}
}

func TestGrantCommand(t *testing.T) {
	t.Parallel()
	e := twoSkillEngine(t)
	p := capability.Principal{Tenant: "acme", Agent: "it's me", Tier: "T3"}
	got, ok := e.GrantCommand(p, capability.Ref{Skill: "beta", ExtensionID: "fs", CapabilityID: "write_file"})
	if want := `skillgate grant add 'acme/it'\''s me' beta:fs/write_file --level destructive --uses 1 --reason '…'`; !ok || got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if _, ok := e.GrantCommand(p, capability.Ref{Skill: "x", ExtensionID: "y", CapabilityID: "z"}); ok {
		t.Fatal("command for an unknown capability")
	}
}
