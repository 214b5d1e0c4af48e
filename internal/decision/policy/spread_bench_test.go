package policy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// The spread-traffic scenario (bench/policy.sh runs it; issue 12): the
// registry of benchCapabilities (10,000 capabilities, each with manifest
// constraints), some of them write or destructive; a seeded policy set of
// 1,000 statements mixing shared policies, resource-scoped ones (naming a
// capability, skill or extension), principal-scoped ones (naming one of
// 500 agents), context-free and context-reading, some with @constraints;
// and a seeded random sequence of requests over 500 agents × 100
// capabilities (50,000 pairs) whose argument values are new on every call.
// Nothing repeats the way a single hot request does, so the per-pair memo,
// the context cache and the CPU's caches are exercised as under load.

const (
	spreadAgents = 500
	spreadCaps   = 100
	// spreadSeed fixes the policy set and the request sequence.
	spreadSeed = 12
)

// spreadAgent is the i-th agent of the scenario; tiers cycle T0–T4.
func spreadAgent(i int) capability.Principal {
	return capability.Principal{Tenant: "acme", Agent: "agent" + strconv.Itoa(i), Tier: skill.AllAgentTiers[i%len(skill.AllAgentTiers)]}
}

// spreadRef is the k-th capability the traffic calls: 50 extensions with
// two each.
func spreadRef(k int) capability.Ref {
	e := strconv.Itoa(k % 50)
	return capability.Ref{Skill: "skills/s" + e, ExtensionID: "ext" + e, CapabilityID: "cap" + strconv.Itoa(k)}
}

// spreadCapabilities is benchCapabilities with varied risk: one in ten is
// a write, one in 23 destructive (a call needs a grant).
func spreadCapabilities() []Capability {
	caps := benchCapabilities()
	for i := range caps {
		switch {
		case i%23 == 0 && i != 0:
			caps[i].RiskLevel = capability.RiskDestructive
		case i%10 == 9:
			caps[i].RiskLevel = capability.RiskWrite
		}
	}
	return caps
}

// spreadPolicies returns n policies drawn from a generator seeded with
// seed.
func spreadPolicies(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 1))
	agentUID := func() string { return fmt.Sprintf(`Agent::"acme/agent%d"`, r.IntN(spreadAgents)) }
	// Mostly extensions and capabilities the traffic calls, some others.
	ext := func() string {
		e := r.IntN(50)
		if r.IntN(5) == 0 {
			e += 50
		}
		return fmt.Sprintf(`Extension::"skills/s%d:ext%d"`, e, e)
	}
	capUID := func() string {
		if r.IntN(5) == 0 {
			e := 50 + r.IntN(50)
			return fmt.Sprintf(`Capability::"skills/s%d:ext%d/cap%d"`, e, e, r.IntN(benchToolsPer))
		}
		ref := spreadRef(r.IntN(spreadCaps))
		return fmt.Sprintf(`Capability::"%s"`, ref)
	}
	skillUID := func() string { return fmt.Sprintf(`Skill::"skills/s%d"`, r.IntN(50)) }
	shared := []string{
		`@id("shared-no-destructive-t4") forbid (principal, action, resource) when { principal.tierLevel > 3 && resource.riskLevel == "destructive" };`,
		`@id("shared-admins") permit (principal, action == Action::"invoke", resource) when { principal.tierLevel <= 1 };`,
		`@id("shared-limit") forbid (principal, action, resource) when { context.args has limit && context.args.limit > 1000 };`,
		`@id("shared-no-etc") forbid (principal, action, resource) when { context.args has path && context.args.path like "/etc/*" };`,
		`@id("shared-no-imported") forbid (principal, action == Action::"invoke", resource) when { resource.trust == "imported" && principal.tierLevel >= 3 };`,
		`@id("shared-readers") @constraints("{\"pathGlobs\":[\"/srv/**\"]}") permit (principal is Agent, action == Action::"invoke", resource) when { context.args has mode && context.args.mode == "read" && principal.tierLevel <= 3 };`,
	}
	var b strings.Builder
	for i, s := range shared {
		if i == n {
			break
		}
		b.WriteString(s + "\n")
	}
	for i := len(shared); i < n; i++ {
		id := fmt.Sprintf(`@id("p%d") `, i)
		if r.IntN(100) < 15 { // resource-scoped
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, "%spermit (principal, action == Action::\"invoke\", resource in %s) when { principal.tierLevel <= %d };\n", id, ext(), 1+r.IntN(3))
			case 1:
				fmt.Fprintf(&b, "%sforbid (principal, action, resource == %s) when { context.args has mode && context.args.mode == \"delete\" };\n", id, capUID())
			case 2:
				fmt.Fprintf(&b, "%s@constraints(\"{\\\"argValues\\\":{\\\"mode\\\":[\\\"read\\\",\\\"write\\\"]}}\") permit (principal is Agent, action == Action::\"invoke\", resource in %s) when { context.args has q && principal.tierLevel <= 3 };\n", id, skillUID())
			default:
				fmt.Fprintf(&b, "%sforbid (principal, action, resource in %s) unless { principal.tierLevel <= 2 || context.args has client };\n", id, ext())
			}
			continue
		}
		switch k := r.IntN(100); { // principal-scoped
		case k < 50:
			fmt.Fprintf(&b, "%spermit (principal == %s, action == Action::\"invoke\", resource in %s);\n", id, agentUID(), ext())
		case k < 65:
			fmt.Fprintf(&b, "%spermit (principal == %s, action == Action::\"invoke\", resource in %s) when { context.args has q };\n", id, agentUID(), ext())
		case k < 75:
			fmt.Fprintf(&b, "%s@constraints(\"{\\\"pathGlobs\\\":[\\\"/srv/data/**\\\"]}\") permit (principal == %s, action == Action::\"invoke\", resource == %s);\n", id, agentUID(), capUID())
		case k < 90:
			fmt.Fprintf(&b, "%sforbid (principal == %s, action, resource == %s) when { context.args has danger };\n", id, agentUID(), capUID())
		default:
			fmt.Fprintf(&b, "%sforbid (principal == %s, action, resource in %s) when { context.args has limit && context.args.limit > %d };\n", id, agentUID(), ext(), 200+r.IntN(800))
		}
	}
	return b.String()
}

// spreadCall is one request of the sequence.
type spreadCall struct {
	p    capability.Principal
	ref  capability.Ref
	args map[string]any
}

// spreadTraffic draws the request sequence: a uniform (agent, capability)
// pair out of 50,000 and arguments as JSON decoding gives them, whose
// values include the call's number, so that no two calls carry the same
// ones.
type spreadTraffic struct {
	r      *rand.Rand
	n      int
	agents []capability.Principal
	refs   []capability.Ref
}

func newSpreadTraffic(seed uint64) *spreadTraffic {
	t := &spreadTraffic{r: rand.New(rand.NewPCG(seed, 2))}
	for i := range spreadAgents {
		t.agents = append(t.agents, spreadAgent(i))
	}
	for k := range spreadCaps {
		t.refs = append(t.refs, spreadRef(k))
	}
	return t
}

func (t *spreadTraffic) next() spreadCall {
	r := t.r
	t.n++
	n := strconv.Itoa(t.n)
	path := "/srv/data/" + n + "/report.csv"
	if r.IntN(50) == 0 {
		path = "/etc/x" + n
	}
	client := "github"
	switch r.IntN(100) {
	case 0:
		client = "bitbucket" // not in the manifest's values: a constraint violation
	case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10:
		client = "gitlab"
	}
	mode := "read"
	switch r.IntN(20) {
	case 0:
		mode = "delete"
	case 1, 2, 3, 4, 5:
		mode = "write"
	}
	args := map[string]any{
		"url":    "https://api.github.com/repos/acme/r" + n,
		"path":   path,
		"client": client,
		"q":      "is:open label:" + n,
		"limit":  float64(1 + r.IntN(1100)),
		"mode":   mode,
	}
	if r.IntN(4) == 0 {
		delete(args, "q")
	}
	if r.IntN(200) == 0 {
		args["danger"] = true
	}
	return spreadCall{p: t.agents[r.IntN(spreadAgents)], ref: t.refs[r.IntN(spreadCaps)], args: args}
}

type spreadEnv struct {
	engine *Engine
	set    *PolicySet
	cset   *cedar.PolicySet
	ents   cedar.EntityMap
}

func newSpreadEnv(tb testing.TB, policies int) *spreadEnv {
	tb.Helper()
	caps := spreadCapabilities()
	e, set := benchEngine(tb, "spread.cedar", spreadPolicies(policies, spreadSeed), caps)
	env := &spreadEnv{engine: e, set: set, cset: cedar.NewPolicySet(), ents: cedar.EntityMap{}}
	for id, p := range set.All() {
		env.cset.Add(id, p)
	}
	for i := range caps {
		c, s, x := capabilityEntities(&caps[i])
		env.ents[c.UID], env.ents[s.UID], env.ents[x.UID] = c, s, x
	}
	for i := range spreadAgents {
		pe := agentEntity(spreadAgent(i))
		env.ents[pe.UID] = pe
	}
	return env
}

// cedarRequest is the bare Cedar request of a call, with every argument in
// the context.
func (env *spreadEnv) cedarRequest(c spreadCall) cedar.Request {
	return cedar.Request{
		Principal: types.NewEntityUID(TypeAgent, types.String(c.p.ID())),
		Action:    ActionInvoke,
		Resource:  types.NewEntityUID(TypeCapability, types.String(c.ref.String())),
		Context:   types.NewRecord(types.RecordMap{"args": argsValue(c.args, 0)}),
	}
}

// effects counts the decisions of a run by effect, reported as shares so
// that the mix the figures stand for is visible.
type effects struct{ allow, deny, approval, n int }

func (m *effects) add(e capability.Effect) {
	m.n++
	switch e {
	case capability.Allow:
		m.allow++
	case capability.Deny:
		m.deny++
	default:
		m.approval++
	}
}

func (m *effects) report(b *testing.B) {
	if m.n == 0 {
		return
	}
	b.ReportMetric(100*float64(m.allow)/float64(m.n), "allow-%")
	b.ReportMetric(100*float64(m.deny)/float64(m.n), "deny-%")
}

// warmSpread decides every one of the 50,000 pairs once, in a seeded
// random order, as on a server that has run for a while since the last
// change of policies or capabilities: the steady state. The arguments
// come from another seed, so the measured calls still carry values never
// seen before. What the first call of a pair costs is measured apart
// (BenchmarkDecisionSpreadCold1000).
func warmSpread(e *Engine) {
	tr := newSpreadTraffic(spreadSeed + 1)
	for _, i := range tr.r.Perm(spreadAgents * spreadCaps) {
		c := tr.next()
		c.p, c.ref = tr.agents[i/spreadCaps], tr.refs[i%spreadCaps]
		e.Evaluate(context.Background(), c.p, c.ref, c.args)
	}
}

func benchmarkEvaluateSpread(b *testing.B, policies int, cold bool) {
	env := newSpreadEnv(b, policies)
	ctx := context.Background()
	if !cold {
		warmSpread(env.engine)
	}
	tr := newSpreadTraffic(spreadSeed)
	lat := newLatencies()
	var mix effects
	calls := make([]spreadCall, spreadChunk)
	next, refills := len(calls), 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if next == len(calls) {
			// The next calls' arguments are made with the timer stopped,
			// so that allocs/op counts Evaluate's alone.
			b.StopTimer()
			for i := range calls {
				calls[i] = tr.next()
			}
			if cold && refills%spreadColdChunks == 0 {
				// A new snapshot, as after any change of policies or
				// capabilities: everything kept per snapshot starts empty.
				if err := env.engine.SetPolicies(env.set); err != nil {
					b.Fatal(err)
				}
			}
			next, refills = 0, refills+1
			b.StartTimer()
		}
		c := &calls[next]
		next++
		t0 := time.Now()
		d := env.engine.Evaluate(ctx, c.p, c.ref, c.args)
		lat.add(time.Since(t0))
		mix.add(d.Effect)
	}
	b.StopTimer()
	lat.report(b)
	mix.report(b)
}

// spreadChunk is how many calls are made ahead, with the timer stopped.
const spreadChunk = 256

func benchmarkBareCedarSpread(b *testing.B, policies int) {
	env := newSpreadEnv(b, policies)
	tr := newSpreadTraffic(spreadSeed)
	lat := newLatencies()
	allow, n := 0, 0
	reqs := make([]cedar.Request, spreadChunk)
	next := len(reqs)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if next == len(reqs) {
			b.StopTimer()
			for i := range reqs {
				reqs[i] = env.cedarRequest(tr.next())
			}
			next = 0
			b.StartTimer()
		}
		req := reqs[next]
		next++
		t0 := time.Now()
		d, _ := cedar.Authorize(env.cset, env.ents, req)
		lat.add(time.Since(t0))
		n++
		if d == cedar.Allow {
			allow++
		}
	}
	b.StopTimer()
	lat.report(b)
	b.ReportMetric(100*float64(allow)/float64(n), "allow-%")
}

// BenchmarkDecisionSpread1000 is Evaluate under spread traffic: 1,000
// policies, 500 agents × 100 capabilities in a seeded random order, fresh
// argument values on every call, in the steady state (warmSpread). Only
// the Evaluate call is timed (the arguments are made before it).
func BenchmarkDecisionSpread1000(b *testing.B) { benchmarkEvaluateSpread(b, 1000, false) }

// spreadColdChunks is how often (in chunks of spreadChunk calls)
// BenchmarkDecisionSpreadCold1000 publishes a new snapshot.
const spreadColdChunks = 32

// BenchmarkDecisionSpreadCold1000 is BenchmarkDecisionSpread1000 without
// the warm-up and with a new snapshot every 8,192 calls (the same
// policies published again), so that most (agent, capability) pairs (92%)
// are decided for the first time on their snapshot: the cost right after
// a change of policies or capabilities.
func BenchmarkDecisionSpreadCold1000(b *testing.B) { benchmarkEvaluateSpread(b, 1000, true) }

// BenchmarkBareCedarSpread1000 is the anchor of BenchmarkDecisionSpread1000:
// a bare cedar.Authorize over the same 1,000 policies and entities (an
// EntityMap of every capability, skill, extension and agent) for the same
// request sequence. Only Authorize is timed; its context (every argument)
// is built before.
func BenchmarkBareCedarSpread1000(b *testing.B) { benchmarkBareCedarSpread(b, 1000) }
