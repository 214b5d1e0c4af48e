package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	cedar "github.com/cedar-policy/cedar-go"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// plainTwin returns an engine with e's policies and capabilities that
// decides every call with cedar.Authorize over the candidates and a built
// context (no plans, no native conditions): the reference of the
// differential tests below.
func plainTwin(t *testing.T, set *PolicySet, caps []Capability) *Engine {
	t.Helper()
	e := New(nil)
	e.plainCedar = true
	if err := e.SetPolicies(set); err != nil {
		t.Fatal(err)
	}
	if err := e.SetCapabilities(caps); err != nil {
		t.Fatal(err)
	}
	return e
}

func sameDecision(t *testing.T, what string, got, want Decision) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("%s:\nfast  %s\nplain %s", what, g, w)
	}
}

// TestSpreadMatchesPlainCedar is the differential test of the decision
// fast path under the spread benchmark's traffic: 1,000 policies, 500
// agents × 100 capabilities, fresh arguments (a third of the calls with a
// session). Every decision, reasons and messages included, equals the one
// made with plain cedar.Authorize, for pairs seen for the first time and
// for pairs replayed from their kept plan; and the Cedar stage agrees with
// a bare cedar.Authorize over the whole policy set.
func TestSpreadMatchesPlainCedar(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,000 capabilities twice")
	}
	t.Parallel()
	env := newSpreadEnv(t, 1000)
	plain := plainTwin(t, env.set, spreadCapabilities())
	tr := newSpreadTraffic(spreadSeed)
	r := rand.New(rand.NewPCG(3, 4))
	var calls []spreadCall
	for range 6_000 {
		calls = append(calls, tr.next())
	}
	// The same pairs again with new arguments: answered from kept plans.
	for i := range 3_000 {
		c := tr.next()
		c.p, c.ref = calls[i].p, calls[i].ref
		calls = append(calls, c)
	}
	effects := map[capability.Effect]int{}
	for i, c := range calls {
		ctx := context.Background()
		if r.IntN(3) == 0 {
			ctx = WithSession(ctx, fmt.Sprintf("sess-%d", r.IntN(4)))
		}
		got := env.engine.Test(ctx, c.p, c.ref, c.args)
		want := plain.Test(ctx, c.p, c.ref, c.args)
		sameDecision(t, fmt.Sprintf("call %d: %s on %s with %v", i, c.p, c.ref, c.args), got, want)
		effects[got.Effect]++
		checkAgainstBareCedar(t, env, c, got)
	}
	if effects[capability.Allow] < len(calls)/3 || effects[capability.Deny] < len(calls)/10 || effects[capability.RequireApproval] == 0 {
		t.Fatalf("the traffic does not exercise every outcome: %v", effects)
	}
	t.Logf("%d calls agree: %v", len(calls), effects)
}

// checkAgainstBareCedar checks the policy stage of d against a bare
// cedar.Authorize over every policy: a Cedar deny is a deny naming exactly
// Cedar's forbids (or no permit); a Cedar allow is never a policy deny,
// except for skillgate's rule that a forbid that failed to evaluate
// denies; an allow names exactly Cedar's permits.
func checkAgainstBareCedar(t *testing.T, env *spreadEnv, c spreadCall, d Decision) {
	t.Helper()
	dec, diag := cedar.Authorize(env.cset, env.ents, env.cedarRequest(c))
	var policyReasons, cedarReasons []string
	for _, r := range d.Reasons {
		if r.Kind == ReasonPolicy && r.Policy != "" {
			policyReasons = append(policyReasons, r.Policy)
		}
	}
	for _, r := range diag.Reasons {
		cedarReasons = append(cedarReasons, string(r.PolicyID))
	}
	slices.Sort(policyReasons)
	slices.Sort(cedarReasons)
	forbidFailed := false
	for _, e := range diag.Errors {
		if env.set.byID[e.PolicyID].Effect == "forbid" {
			forbidFailed = true
		}
	}
	switch {
	case dec == cedar.Deny:
		if d.Effect != capability.Deny || len(d.Reasons) == 0 || d.Reasons[0].Kind != ReasonPolicy {
			t.Fatalf("%s on %s: Cedar denies, skillgate %+v", c.p, c.ref, d)
		}
		if len(cedarReasons) > 0 && !slices.Equal(policyReasons[:len(cedarReasons)], cedarReasons) {
			t.Fatalf("%s on %s: Cedar's forbids %v, skillgate's reasons %v", c.p, c.ref, cedarReasons, policyReasons)
		}
	case forbidFailed:
		if d.Effect != capability.Deny {
			t.Fatalf("%s on %s: a forbid failed, skillgate %+v", c.p, c.ref, d)
		}
	case d.Effect == capability.Deny:
		if d.Reasons[0].Kind == ReasonPolicy {
			t.Fatalf("%s on %s: Cedar allows, skillgate denies by policy: %+v", c.p, c.ref, d)
		}
	default:
		permitted := policyReasons[:0:0]
		for _, r := range d.Reasons {
			if r.Kind == ReasonPolicy && r.Message == "permitted by "+r.Policy {
				permitted = append(permitted, r.Policy)
			}
		}
		slices.Sort(permitted)
		if !slices.Equal(permitted, cedarReasons) {
			t.Fatalf("%s on %s: Cedar's permits %v, skillgate's %v", c.p, c.ref, cedarReasons, permitted)
		}
	}
}

// TestEvaluateMatchesPlainCedar is the differential test of the fast path
// over the random policy sets of TestSlicedMatchesCedar (every scope form,
// conditions of the shapes the native conditions handle and of others,
// policies that fail to evaluate, forbids among them, which skillgate
// turns into denies) and random arguments of every kind and sessions:
// every decision equals the plain one exactly.
func TestEvaluateMatchesPlainCedar(t *testing.T) {
	t.Parallel()
	decisions := 0
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 45))
		set, _ := randomSnapshot(t, r)
		caps := diffCaps()
		fast := plainTwin(t, set, caps)
		fast.plainCedar = false
		plain := plainTwin(t, set, caps)
		for range 1000 {
			p := capability.Principal{Tenant: "t", Agent: fmt.Sprintf("a%d", r.IntN(6)), Tier: skill.AllAgentTiers[r.IntN(5)]}
			ref := caps[r.IntN(len(caps))].Ref()
			args := randomArgs(r)
			ctx := randomCallContext(r)
			sameDecision(t, fmt.Sprintf("seed %d: %s on %s with %v", seed, p, ref, args),
				fast.Test(ctx, p, ref, args), plain.Test(ctx, p, ref, args))
			decisions++
		}
	}
	t.Logf("%d decisions agree", decisions)
}

// TestCompiledConstraintsShared: capabilities with equal constraints share
// one compiled form in a snapshot; different ones, including an absent
// list against an empty one (which allows nothing), do not.
func TestCompiledConstraintsShared(t *testing.T) {
	caps := diffCaps()[:4]
	caps[0].Constraints = constraint.Set{AllowedDomains: []string{"a.example"}, ArgValues: map[string][]string{"m": {"x", "y"}}}
	caps[1].Constraints = constraint.Set{ArgValues: map[string][]string{"m": {"x", "y"}}, AllowedDomains: []string{"a.example"}}
	caps[2].Constraints = constraint.Set{AllowedDomains: []string{"a.example"}, ArgValues: map[string][]string{"m": {"x", "y"}}, PathGlobs: []string{}}
	caps[3].Constraints = constraint.Set{AllowedDomains: []string{"a.example"}, ArgValues: map[string][]string{"m": {"x"}}}
	snap, err := buildSnapshot(caps, DefaultPolicies())
	if err != nil {
		t.Fatal(err)
	}
	m := func(i int) *constraint.Compiled { return snap.caps[i].manifest }
	if m(0) != m(1) || m(0) == m(2) || m(0) == m(3) || m(2) == m(3) {
		t.Fatalf("compiled forms shared wrongly: %p %p %p %p", m(0), m(1), m(2), m(3))
	}
	if v := m(2).Check(map[string]any{"path": "/x", "m": "x"}); len(v) != 1 || v[0].Constraint != constraint.KindPath {
		t.Fatalf("the empty pathGlobs of capability 2 should refuse a path: %+v", v)
	}
}
