package policy

import (
	"testing"

	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/decision/policy/internal/cedarinspect"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// TestSchemaDescribesEntities checks skillgate's Cedar schema against the
// entities and context the engine builds for a decision (agentEntity,
// capabilityEntities, buildContext): when these change, the schema
// (policy/skillgate.cedarschema, copied to docs/schemas/) must change with
// them. The call arguments are left out: context.args is open.
func TestSchemaDescribesEntities(t *testing.T) {
	rs, err := resolvedSchema()
	if err != nil {
		t.Fatal(err)
	}
	v := cedarinspect.NewValidator(rs)
	c := &Capability{SkillKey: "tools/github", SkillTrust: TrustImported, SkillTier: 2, SkillState: SkillEnabled,
		ExtensionID: "github", CapabilityID: "search_issues", Enabled: true,
		RiskLevel: capability.RiskRead, SideEffects: capability.SideEffectsNone, DataEgress: capability.EgressNetwork}
	capE, skillE, extE := capabilityEntities(c)
	lead := agentEntity(capability.Principal{Tenant: "acme", Agent: "lead", Tier: "T1"})
	kid := agentEntity(capability.Principal{Tenant: "acme", Agent: "kid", Tier: "T3", Parent: "acme/lead"})
	for _, e := range []types.Entity{capE, skillE, extE, lead, kid} {
		if err := v.Entity(e); err != nil {
			t.Errorf("%s does not conform to the schema: %v", e.UID, err)
		}
	}
	set := DefaultPolicies()
	for _, ctx := range []types.Record{
		buildContext(nil, false, "", false, "", false, "", false, set),
		buildContext(nil, true, "s1", true, "create_issue", true, "work", true, set),
	} {
		req := types.Request{Principal: kid.UID, Action: ActionInvoke, Resource: capE.UID, Context: ctx}
		if err := v.Request(req); err != nil {
			t.Errorf("request with context %v does not conform to the schema: %v", ctx, err)
		}
	}
	// The check has teeth: an attribute the schema does not declare fails.
	extra := capE
	m := types.RecordMap{}
	for k, val := range capE.Attributes.All() {
		m[k] = val
	}
	m["skillId"] = types.String("x")
	extra.Attributes = types.NewRecord(m)
	if err := v.Entity(extra); err == nil {
		t.Error("an undeclared attribute passed the schema")
	}
}
