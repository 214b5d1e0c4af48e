package policy_test

import (
	"context"
	"fmt"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

func ExampleEngine_Evaluate() {
	e := policy.New(nil)
	set, _ := policy.ParsePolicies([]policy.Source{{Name: "policies/base.cedar", Text: []byte(`
@id("permit-invoke")
permit (principal, action == Action::"invoke", resource);

@id("no-deletes-for-small-models")
forbid (principal, action, resource) when { principal.tierLevel >= 4 && resource.riskLevel == "destructive" };
`)}})
	_ = e.SetPolicies(set)
	_ = e.SetCapabilities([]policy.Capability{{
		SkillKey: "tools/fs", SkillTrust: policy.TrustCore, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
		SkillState: policy.SkillEnabled, ExtensionID: "fs", CapabilityID: "delete_file", Enabled: true,
		RiskLevel: capability.RiskDestructive, SideEffects: capability.SideEffectsInternal, DataEgress: capability.EgressNone,
	}})
	ctx := context.Background()
	// The skill is part of the capability's identity; an operator may type
	// the short form when only one skill offers it.
	ref, _ := e.ResolveCapability("fs/delete_file")
	for _, tier := range []skill.AgentTier{"T4", "T3"} {
		p := capability.Principal{Tenant: "acme", Agent: "bot", Tier: tier}
		d := e.Evaluate(ctx, p, ref, map[string]any{"path": "/tmp/x"})
		fmt.Println(tier, d.Effect, d.Reasons[len(d.Reasons)-1].Message)
		if d.Effect == capability.RequireApproval {
			cmd, _ := e.GrantCommand(p, ref) // for the operator, never the agent
			fmt.Println("operator:", cmd)
		}
	}
	// Output:
	// T4 deny forbidden by no-deletes-for-small-models
	// T3 require_approval tools/fs:fs/delete_file is destructive: a human must approve it
	// operator: skillgate grant add acme/bot tools/fs:fs/delete_file --level destructive --uses 1 --reason '…'
}
