package policy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestDelegationNeverWidens is the sub-agent property test: with random
// registries (tiers, states), random policies and random forwards, for
// every random request a sub-agent is allowed only when its parent is, and
// the child's scope is a subset of the parent's.
func TestDelegationNeverWidens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tiers := skill.AllAgentTiers
	checked, allowed := 0, 0
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 7))
		var caps []policy.Capability
		var refs []capability.Ref
		for i := range 40 {
			c := capRecord(fmt.Sprintf("e%d", i%5), fmt.Sprintf("c%d", i), func(c *policy.Capability) {
				c.InvokableBy = nil
				for _, t := range tiers {
					if r.IntN(3) > 0 {
						c.InvokableBy = append(c.InvokableBy, t)
					}
				}
				c.Enabled = r.IntN(8) > 0
				if r.IntN(10) == 0 {
					c.SkillState = policy.SkillDisabled
				}
				if r.IntN(4) == 0 {
					c.RiskLevel = capability.RiskWrite
				}
			})
			caps = append(caps, c)
			refs = append(refs, c.Ref())
		}
		var text strings.Builder
		text.WriteString("permit (principal, action, resource);\n")
		for i := range 10 {
			fmt.Fprintf(&text, "forbid (principal == Agent::\"acme/a%d\", action, resource == Capability::\"tools/e%d:e%d/c%d\");\n", r.IntN(4), i%5, i%5, r.IntN(40))
			fmt.Fprintf(&text, "forbid (principal, action, resource in Extension::\"tools/e%d:e%d\") when { principal.tierLevel == %d && context.args has x };\n", i%5, i%5, r.IntN(5))
		}
		set, err := policy.ParsePolicies([]policy.Source{{Name: "r.cedar", Text: []byte(text.String())}})
		if err != nil {
			t.Fatal(err)
		}
		e := policy.New(nil)
		if err := e.SetPolicies(set); err != nil {
			t.Fatal(err)
		}
		if err := e.SetCapabilities(caps); err != nil {
			t.Fatal(err)
		}
		// A chain root → child → grandchild with random tiers and forwards.
		root := capability.Principal{Tenant: "acme", Agent: fmt.Sprintf("a%d", r.IntN(4)), Tier: tiers[r.IntN(3)]}
		chain := []capability.Principal{root}
		for depth := range 2 {
			parent := chain[len(chain)-1]
			child := capability.Principal{Tenant: "acme", Agent: fmt.Sprintf("sub%d", depth), Tier: tiers[min(4, int(parent.Tier[1]-'0')+r.IntN(2))], Parent: parent.ID()}
			var fwd []capability.Ref
			for _, ref := range refs {
				if r.IntN(2) == 0 {
					fwd = append(fwd, ref)
				}
			}
			fwd = append(fwd, capability.Ref{Skill: "ghost", ExtensionID: "ghost", CapabilityID: "tool"})
			cs, err := e.Delegate(parent, child, fwd)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			ps, _ := e.Scope(parent)
			for _, ent := range cs.Entries {
				if !ps.Contains(ent.Ref) {
					t.Fatalf("seed %d: %s's scope has %s, which %s's lacks", seed, child.ID(), ent.Ref, parent.ID())
				}
			}
			chain = append(chain, child)
		}
		for range 300 {
			ref := refs[r.IntN(len(refs))]
			args := map[string]any{}
			if r.IntN(2) == 0 {
				args["x"] = 1.0
			}
			for i := len(chain) - 1; i > 0; i-- {
				child, parent := chain[i], chain[i-1]
				dc := e.Test(ctx, child, ref, args)
				dp := e.Test(ctx, parent, ref, args)
				if dc.Effect == capability.Allow && dp.Effect != capability.Allow {
					t.Fatalf("seed %d: %s allowed %s %v but its parent %s is not: %+v", seed, child.ID(), ref, args, parent.ID(), dp)
				}
				checked++
				if dc.Effect == capability.Allow {
					allowed++
				}
			}
		}
	}
	if allowed == 0 {
		t.Fatal("no child request was allowed: the property was not exercised")
	}
	t.Logf("%d child/parent request pairs checked, %d child calls allowed", checked, allowed)
}
