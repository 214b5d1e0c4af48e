package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	cedar "github.com/cedar-policy/cedar-go"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// randomPolicyText writes one random policy over a small universe of
// agents a0–a5, extensions e0–e2, skills s0–s2 and capabilities e?/c0–c3,
// using every scope form (==, in, is, is … in, action sets) and conditions
// on principal attributes, resource attributes and the context.
func randomPolicyText(r *rand.Rand, i int) string {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	agentUID := func() string { return fmt.Sprintf(`Agent::"t/a%d"`, r.IntN(6)) }
	// Mostly the skill that declares e/c ((e+c)%3, or s3 for e0), sometimes
	// another skill, whose capability of that name does not exist.
	capUID := func() string {
		e, c := r.IntN(3), r.IntN(4)
		sk := (e + c) % 3
		if r.IntN(4) == 0 {
			sk = r.IntN(4)
		}
		return fmt.Sprintf(`Capability::"s%d:e%d/c%d"`, sk, e, c)
	}
	extUID := func() string { return fmt.Sprintf(`Extension::"s%d:e%d"`, r.IntN(4), r.IntN(3)) }
	principal := pick("principal", "principal == "+agentUID(), "principal == "+agentUID(), "principal == "+agentUID(),
		"principal in "+agentUID(), "principal is Agent", "principal is Other", "principal is Agent in "+agentUID(), `principal == Other::"x"`)
	action := pick("action", `action == Action::"invoke"`, `action == Action::"invoke"`, `action == Action::"read"`,
		`action in [Action::"invoke", Action::"read"]`, `action in [Action::"read"]`, `action in Action::"invoke"`)
	resource := pick("resource", "resource == "+capUID(), "resource == "+capUID(), fmt.Sprintf(`resource == Skill::"s%d"`, r.IntN(3)),
		fmt.Sprintf(`resource in Skill::"s%d"`, r.IntN(3)), "resource in "+extUID(), "resource in "+capUID(),
		"resource is Capability", "resource is Skill", "resource is Capability in "+extUID())
	cond := pick("", "", fmt.Sprintf(" when { principal.tierLevel >= %d }", r.IntN(5)),
		fmt.Sprintf(` when { context.args has n && context.args.n == %d }`, r.IntN(3)),
		` unless { resource.riskLevel == "destructive" }`, " when { principal has parent }",
		` when { principal in Agent::"t/a0" }`, ` when { context.args.n > 1 }`, // errors when n is absent
		fmt.Sprintf(` when { resource.skill == "s%d" }`, r.IntN(3)),
		// The shapes the native conditions evaluate (native.go), and some
		// they leave to Cedar, each erroring on some arguments.
		pick(` when { context.args has s && context.args.s like "a*" }`, ` when { context.args.s like "*b*" }`,
			fmt.Sprintf(` when { context.args.s == "%s" }`, pick("a", "abc", "b")), ` unless { context.args.s != "b" }`,
			fmt.Sprintf(` when { context.args has n && context.args.n >= %d || principal.tierLevel < 2 }`, r.IntN(3)),
			` when { !(context.args has flag) || context.args.flag }`, ` unless { context.args has flag && context.args.flag }`,
			` when { context has session && context.session == "s1" }`, ` when { context.session like "s*" }`,
			` unless { context has session }`, ` when { context has args && context has other }`,
			` when { context has executor && context.executor == "create_issue" }`, ` when { context.executor like "read_*" }`,
			` unless { context has executor }`,
			` when { context.args has n && context.args.n < resource.skillTier }`, ` when { 1 <= context.args.n }`,
			` when { principal.tier == "T1" && context.args has s }`, ` when { context.args["n"] > 0 }`,
			` when { context.args has n && context.args.n like "1*" }`, ` when { context.delegated == true }`,
			` when { context has delegated }`, ` when { context.args.n == resource.riskLevel }`,
			` when { context.args has n } when { context.args.n != 1 } unless { principal.tierLevel > 3 }`,
			` when { context.args.s == principal.tier || context.args has other }`, ` when { context.args.xs.contains(1) }`,
			` when { context.args has s && (context.args.s == "a" || context.args.s == "abc") && !(principal.tierLevel == 0) }`,
			` when { principal.parent == Agent::"t/a1" || context.args has n }`, ` when { context.args has n && true }`))
	effect := "permit"
	if r.IntN(10) < 3 {
		effect = "forbid"
	}
	return fmt.Sprintf("@id(\"p%d\")\n%s (%s, %s, %s)%s;\n", i, effect, principal, action, resource, cond)
}

// randomSnapshot returns 150 random policies drawn from r and a snapshot of
// them over diffCaps.
func randomSnapshot(t *testing.T, r *rand.Rand) (*PolicySet, *snapshot) {
	t.Helper()
	var text strings.Builder
	for i := range 150 {
		text.WriteString(randomPolicyText(r, i))
	}
	set, err := ParsePolicies([]Source{{Name: "rand.cedar", Text: []byte(text.String())}})
	if err != nil {
		t.Fatalf("%v\n%s", err, text.String())
	}
	snap, err := buildSnapshot(diffCaps(), set)
	if err != nil {
		t.Fatal(err)
	}
	return set, snap
}

func diffCaps() []Capability {
	var caps []Capability
	risks := []capability.RiskLevel{capability.RiskRead, capability.RiskWrite, capability.RiskDestructive}
	for e := range 3 {
		for c := range 4 {
			caps = append(caps, Capability{
				SkillKey: fmt.Sprintf("s%d", (e+c)%3), SkillTrust: TrustCore, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
				SkillState: SkillEnabled, ExtensionID: fmt.Sprintf("e%d", e), CapabilityID: fmt.Sprintf("c%d", c), Enabled: true,
				RiskLevel: risks[(e*4+c)%3], SideEffects: capability.SideEffectsNone, DataEgress: capability.EgressNone,
			})
		}
	}
	// Skill s3 names its server e0 too, with the same tools: different
	// capabilities, which policies tell apart.
	for c := range 4 {
		dup := caps[c]
		dup.SkillKey, dup.RiskLevel = "s3", risks[(c+1)%3]
		caps = append(caps, dup)
	}
	return caps
}

type diagSummary struct {
	decision cedar.Decision
	reasons  []string
	errors   []string
}

func summarize(d cedar.Decision, diag cedar.Diagnostic) diagSummary {
	s := diagSummary{decision: d}
	for _, r := range diag.Reasons {
		s.reasons = append(s.reasons, string(r.PolicyID))
	}
	for _, e := range diag.Errors {
		s.errors = append(s.errors, string(e.PolicyID)+": "+e.Message)
	}
	slices.Sort(s.reasons)
	slices.Sort(s.errors)
	return s
}

// TestSlicedMatchesCedar is the differential test of the index: over many
// random policy sets and requests, the sliced evaluation gives exactly the
// decision, deciding policies and errors of a bare cedar.Authorize over the
// whole set.
func TestSlicedMatchesCedar(t *testing.T) {
	t.Parallel()
	tiers := skill.AllAgentTiers
	requests, evaluated, total := 0, 0, 0
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 42))
		set, snap := randomSnapshot(t, r)
		for range 500 {
			p := capability.Principal{Tenant: "t", Agent: fmt.Sprintf("a%d", r.IntN(6)), Tier: tiers[r.IntN(5)]}
			chain := []capability.Principal{p}
			if r.IntN(3) == 0 {
				parent := capability.Principal{Tenant: "t", Agent: fmt.Sprintf("a%d", r.IntN(6)), Tier: tiers[r.IntN(5)]}
				if parent.ID() != p.ID() {
					p.Parent = parent.ID()
					chain = []capability.Principal{p, parent}
				}
			}
			ents := make([]cedar.Entity, len(chain))
			for i := range chain {
				ents[i] = agentEntity(chain[i])
			}
			view := &entityView{snap: snap, chain: ents}
			ce := &snap.caps[r.IntN(len(snap.caps))]
			args := randomArgs(r)
			// The reference gets every argument; the sliced evaluation the
			// ones the policies read, as Evaluate passes them.
			full := cedar.Request{Principal: ents[0].UID, Action: ActionInvoke, Resource: ce.uids[0], Context: requestContext(t.Context(), args, p.Parent != "", &PolicySet{fullArgs: true})}
			want := summarize(cedar.Authorize(set, view, full))
			var cand candidates
			snap.ix.candidates(&cand, ents[0].UID, &ce.uids)
			req := full
			req.Context = requestContext(t.Context(), args, p.Parent != "", set)
			got := summarize(cedar.Authorize(&cand, view, req))
			if !slices.Equal(got.reasons, want.reasons) || !slices.Equal(got.errors, want.errors) || got.decision != want.decision {
				t.Fatalf("seed %d, %s on %s: sliced %+v, cedar %+v", seed, p, ce.ref, got, want)
			}
			requests++
			evaluated += cand.count()
			total += set.Len()
		}
	}
	t.Logf("%d requests agree; the index evaluated %.1f%% of the policies", requests, 100*float64(evaluated)/float64(total))
}
