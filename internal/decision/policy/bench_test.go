package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// The benchmark scenario (bench/policy.sh runs it): 10,000 capabilities
// (100 extensions × 100 tools), and a policy set of 1,000 (or 10)
// statements: per-agent permits and forbids naming an agent and an
// extension or capability, and shared policies on tiers and risk. The
// request is agent0 invoking ext0/cap0 with four arguments, allowed, with
// the manifest's typed constraints (domains, paths, argument values)
// checked.

const (
	benchExtensions = 100
	benchToolsPer   = 100
)

// benchRef names tool c of server e, declared by skill skills/s<e>.
func benchRef(e, c int) capability.Ref {
	return capability.Ref{Skill: fmt.Sprintf("skills/s%d", e), ExtensionID: fmt.Sprintf("ext%d", e), CapabilityID: fmt.Sprintf("cap%d", c)}
}

func benchCapabilities() []Capability {
	caps := make([]Capability, 0, benchExtensions*benchToolsPer)
	for e := range benchExtensions {
		for c := range benchToolsPer {
			caps = append(caps, Capability{
				SkillKey: fmt.Sprintf("skills/s%d", e), SkillTrust: TrustFirstParty, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
				SkillState: SkillEnabled, ExtensionID: fmt.Sprintf("ext%d", e), CapabilityID: fmt.Sprintf("cap%d", c), Enabled: true,
				RiskLevel: capability.RiskRead, SideEffects: capability.SideEffectsNone, DataEgress: capability.EgressNone,
				Constraints: constraint.Set{
					AllowedDomains: []string{"api.github.com", fmt.Sprintf("*.ext%d.example.com", e)},
					PathGlobs:      []string{"/srv/data/**", "/tmp/*.txt"},
					ArgValues:      map[string][]string{"client": {"github", "gitlab"}},
				},
			})
		}
	}
	return caps
}

// benchPolicies returns n policies: a few shared ones (evaluated for every
// request, as their principal scope is open) and per-agent ones.
func benchPolicies(n int) string {
	shared := []string{
		`@id("shared-no-destructive-for-small") forbid (principal, action, resource) when { principal.tierLevel > 3 && resource.riskLevel == "destructive" };`,
		`@id("shared-t3-ext0") permit (principal is Agent, action == Action::"invoke", resource in Extension::"skills/s0:ext0") when { principal.tier == "T3" };`,
		`@id("shared-no-imported") forbid (principal, action == Action::"invoke", resource) when { resource.trust == "imported" && principal.tierLevel >= 3 };`,
		`@id("shared-query") forbid (principal, action, resource) when { context.args has limit && context.args.limit > 1000 };`,
	}
	var b strings.Builder
	for i, s := range shared {
		if i == n {
			break
		}
		b.WriteString(s + "\n")
	}
	for i := len(shared); i < n; i++ {
		agent, ext := i%500, i%benchExtensions
		if i%10 == 0 {
			fmt.Fprintf(&b, "@id(\"p%d\") forbid (principal == Agent::\"acme/agent%d\", action, resource == Capability::\"skills/s%d:ext%d/cap%d\") when { context.args has danger };\n", i, agent, ext, ext, i%benchToolsPer)
			continue
		}
		fmt.Fprintf(&b, "@id(\"p%d\") permit (principal == Agent::\"acme/agent%d\", action == Action::\"invoke\", resource in Extension::\"skills/s%d:ext%d\") when { context.args has q };\n", i, agent, ext, ext)
	}
	return b.String()
}

var benchArgsJSON = `{"url":"https://api.github.com/repos/acme/x","path":"/srv/data/2026/report.csv","client":"github","q":"is:open"}`

type benchEnv struct {
	engine *Engine
	set    *PolicySet
	cset   *cedar.PolicySet
	ents   cedar.EntityMap
	req    cedar.Request
	p      capability.Principal
	args   map[string]any
}

// benchEngine returns an engine over the policies in text (as file name)
// and caps, and the parsed policy set.
func benchEngine(tb testing.TB, name, text string, caps []Capability) (*Engine, *PolicySet) {
	tb.Helper()
	set, err := ParsePolicies([]Source{{Name: name, Text: []byte(text)}})
	if err != nil {
		tb.Fatal(err)
	}
	e := New(nil)
	if err := e.SetPolicies(set); err != nil {
		tb.Fatal(err)
	}
	if err := e.SetCapabilities(caps); err != nil {
		tb.Fatal(err)
	}
	return e, set
}

func newBenchEnv(tb testing.TB, policies int) *benchEnv {
	tb.Helper()
	caps := benchCapabilities()
	e, set := benchEngine(tb, "bench.cedar", benchPolicies(policies), caps)
	env := &benchEnv{engine: e, set: set, cset: cedar.NewPolicySet(), ents: cedar.EntityMap{},
		p: capability.Principal{Tenant: "acme", Agent: "agent0", Tier: "T3"}}
	for id, p := range set.All() {
		env.cset.Add(id, p)
	}
	for i := range caps {
		c, s, x := capabilityEntities(&caps[i])
		env.ents[c.UID], env.ents[s.UID], env.ents[x.UID] = c, s, x
	}
	pe := agentEntity(env.p)
	env.ents[pe.UID] = pe
	if err := json.Unmarshal([]byte(benchArgsJSON), &env.args); err != nil {
		tb.Fatal(err)
	}
	env.req = cedar.Request{Principal: pe.UID, Action: ActionInvoke, Resource: types.NewEntityUID(TypeCapability, types.String(benchRef(0, 0).String())),
		Context: requestContext(context.Background(), env.args, false, set)}
	return env
}

// latencies records per-call durations in a fixed ring (no allocation in
// the loop) and reports p50 and p99 as custom metrics.
type latencies struct {
	samples []time.Duration
	n       int
}

func newLatencies() *latencies { return &latencies{samples: make([]time.Duration, 1<<20)} }

func (l *latencies) add(d time.Duration) {
	l.samples[l.n%len(l.samples)] = d
	l.n++
}

func (l *latencies) report(b *testing.B) {
	s := slices.Clone(l.samples[:min(l.n, len(l.samples))])
	if len(s) == 0 {
		return
	}
	slices.Sort(s)
	b.ReportMetric(float64(s[len(s)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(s[len(s)*99/100].Nanoseconds()), "p99-ns")
}

func benchmarkEvaluate(b *testing.B, policies int) {
	env := newBenchEnv(b, policies)
	ctx := context.Background()
	ref := benchRef(0, 0)
	if d := env.engine.Evaluate(ctx, env.p, ref, env.args); d.Effect != capability.Allow {
		b.Fatalf("%+v", d)
	}
	lat := newLatencies()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		d := env.engine.Evaluate(ctx, env.p, ref, env.args)
		lat.add(time.Since(t0))
		if d.Effect != capability.Allow {
			b.Fatal(d)
		}
	}
	b.StopTimer()
	lat.report(b)
}

// benchmarkEvaluateUncached is benchmarkEvaluate with a different value of
// the argument the policies read on every call (65,536 values cycled, the
// context cache holds 4,096), so the Cedar context is built on nearly
// every call: the cost for free-text arguments.
func benchmarkEvaluateUncached(b *testing.B, policies int) {
	env := newBenchEnv(b, policies)
	ctx := context.Background()
	ref := benchRef(0, 0)
	argSets := make([]map[string]any, 1<<16)
	for i := range argSets {
		a := maps.Clone(env.args)
		a["q"] = "is:open label:" + strconv.Itoa(i)
		argSets[i] = a
	}
	lat := newLatencies()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		a := argSets[i%len(argSets)]
		i++
		t0 := time.Now()
		d := env.engine.Evaluate(ctx, env.p, ref, a)
		lat.add(time.Since(t0))
		if d.Effect != capability.Allow {
			b.Fatal(d)
		}
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkDecision1000Uncached is BenchmarkDecision1000 with a distinct
// argument value on (nearly) every call.
func BenchmarkDecision1000Uncached(b *testing.B) { benchmarkEvaluateUncached(b, 1000) }

func benchmarkBareCedar(b *testing.B, policies int) {
	env := newBenchEnv(b, policies)
	if d, _ := cedar.Authorize(env.cset, env.ents, env.req); d != cedar.Allow {
		b.Fatal("bare cedar denies")
	}
	lat := newLatencies()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		d, _ := cedar.Authorize(env.cset, env.ents, env.req)
		lat.add(time.Since(t0))
		if d != cedar.Allow {
			b.Fatal(d)
		}
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkDecision1000 is Evaluate with 1,000 policies and 10,000
// capabilities, typed constraints included.
func BenchmarkDecision1000(b *testing.B) { benchmarkEvaluate(b, 1000) }

// BenchmarkDecision10 is Evaluate with 10 policies.
func BenchmarkDecision10(b *testing.B) { benchmarkEvaluate(b, 10) }

// BenchmarkBareCedar1000 is a bare cedar.Authorize over the same 1,000
// policies, entities and request (context prebuilt).
func BenchmarkBareCedar1000(b *testing.B) { benchmarkBareCedar(b, 1000) }

// BenchmarkBareCedar10 is a bare cedar.Authorize over the 10 policies.
func BenchmarkBareCedar10(b *testing.B) { benchmarkBareCedar(b, 10) }

// TestBenchDecisionsAgree checks that the benchmark's Evaluate and bare
// Cedar decide the same, for both set sizes, across many principals and
// capabilities.
func TestBenchDecisionsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,000 capabilities")
	}
	t.Parallel()
	for _, n := range []int{10, 1000} {
		env := newBenchEnv(t, n)
		for i := 0; i < 2000; i += 7 {
			p := capability.Principal{Tenant: "acme", Agent: fmt.Sprintf("agent%d", i%600), Tier: skill.AllAgentTiers[i%5]}
			ref := benchRef(i%benchExtensions, (i/3)%benchToolsPer)
			pe := agentEntity(p)
			env.ents[pe.UID] = pe
			req := cedar.Request{Principal: pe.UID, Action: ActionInvoke, Resource: types.NewEntityUID(TypeCapability, types.String(ref.String())), Context: env.req.Context}
			want, _ := cedar.Authorize(env.cset, env.ents, req)
			got := env.engine.Test(context.Background(), p, ref, env.args)
			if (got.Effect == capability.Allow) != (want == cedar.Allow) {
				t.Fatalf("%d policies, %s on %s: skillgate %+v, cedar %v", n, p, ref, got, want)
			}
		}
	}
}
