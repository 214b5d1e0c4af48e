package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	cedar "github.com/cedar-policy/cedar-go"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// randomArgs draws call arguments as JSON decoding and Go callers give
// them, over the names the random policies read (n, s, flag, xs) and one
// they do not (other): integral and fractional numbers, json.Number,
// strings, booleans, arrays, objects and null, so that the native
// conditions meet every kind, and each read argument is absent half of the
// time.
func randomArgs(r *rand.Rand) map[string]any {
	pick := func(xs ...any) any { return xs[r.IntN(len(xs))] }
	args := map[string]any{}
	if r.IntN(2) == 0 {
		args["n"] = pick(float64(r.IntN(3)), float64(r.IntN(3)), 1.5, json.Number("2"), json.Number("1.25"), "1", int64(1), 0, nil, []any{1.0}, true, 1e300)
	}
	if r.IntN(2) == 0 {
		args["s"] = pick("a", "abc", "b", "xbz", "", 3.0, nil, map[string]any{"a": "b"}, []string{"a"}, false)
	}
	if r.IntN(3) == 0 {
		args["flag"] = pick(true, false, "yes", nil)
	}
	if r.IntN(4) == 0 {
		args["xs"] = pick([]any{1.0, 2.0}, []any{"a"}, "1")
	}
	if r.IntN(2) == 0 {
		args["other"] = "x" // read by no policy
	}
	return args
}

// randomCallContext carries a session a third of the time, and an
// executor a third of the time.
func randomCallContext(r *rand.Rand) context.Context {
	ctx := context.Background()
	if r.IntN(3) == 0 {
		ctx = WithSession(ctx, []string{"s1", "s2", "other"}[r.IntN(3)])
	}
	if r.IntN(3) == 0 {
		ctx = WithExecutor(ctx, []string{"create_issue", "read_file_contents", "find_x"}[r.IntN(3)])
	}
	return ctx
}

// testEvaluator is the policyEvaluator of the memo tests: Cedar over one
// policy with the request's entities and context.
type testEvaluator struct {
	view *entityView
	req  cedar.Request
}

func (t testEvaluator) authorizeOne(p *Policy) (cedar.Decision, cedar.Diagnostic) {
	return cedar.Authorize(single{p.ID, p.cedar}, t.view, t.req)
}

// memoRequest is one random request of the memo tests: an agent a0–a5 of
// any tier without a delegation chain, a capability of snap, random
// arguments and sometimes a session.
type memoRequest struct {
	p    capability.Principal
	view *entityView
	idx  int32
	ce   *capEntry
	req  cedar.Request
	env  callEnv
}

func randomMemoRequest(r *rand.Rand, snap *snapshot, set *PolicySet) memoRequest {
	p := capability.Principal{Tenant: "t", Agent: fmt.Sprintf("a%d", r.IntN(6)), Tier: skill.AllAgentTiers[r.IntN(5)]}
	ents := []cedar.Entity{agentEntity(p)}
	idx := int32(r.IntN(len(snap.caps)))
	ce := &snap.caps[idx]
	args := randomArgs(r)
	ctx := randomCallContext(r)
	sid, hasSID := ctx.Value(sessionKey{}).(string)
	exec, hasExec := ctx.Value(executorKey{}).(string)
	req := cedar.Request{Principal: ents[0].UID, Action: ActionInvoke, Resource: ce.uids[0],
		Context: requestContext(ctx, args, false, set)}
	return memoRequest{p: p, view: &entityView{snap: snap, chain: ents}, idx: idx, ce: ce, req: req,
		env: callEnv{args: args, principal: ents[0].Attributes, resource: ce.attrs, sid: sid, hasSID: hasSID, exec: exec, hasExec: hasExec}}
}

// decideMemo decides mr from snap's memo as Evaluate does: the pair's
// plan, built on a miss, run over the call.
func decideMemo(snap *snapshot, mr memoRequest, out *outcomes) (cedar.Decision, cedar.Diagnostic, bool) {
	mv, hit := snap.memo.lookup(mr.p, mr.idx)
	if !hit {
		var cand candidates
		snap.ix.candidates(&cand, mr.req.Principal, &mr.ce.uids)
		noCtx := mr.req
		noCtx.Context = cedar.Record{}
		mv = snap.memo.add(&cand, mr.view, noCtx, mr.p, mr.idx, mr.view.chain[0].Attributes)
	}
	env := mr.env
	env.principal = mv.attrs
	dec, diag, pols := mv.plan.run(&env, testEvaluator{mr.view, mr.req}, out)
	if len(pols) != len(diag.Reasons) {
		panic("the policies do not match the reasons")
	}
	for i, p := range pols {
		if p.reason != diag.Reasons[i] {
			panic(fmt.Sprintf("policy %s does not match reason %s", p.ID, diag.Reasons[i].PolicyID))
		}
	}
	return dec, diag, hit
}

// TestMemoMatchesCedar is the differential test of the decision memo and
// the native conditions: over random policy sets (context-free and
// context-reading policies of many shapes, forbids, permits, policies that
// fail to evaluate) and requests that repeat, so that most are answered
// from a kept plan, with random arguments of every kind, the plan's run
// gives exactly what cedar.Authorize gives over the same candidates: the
// decision, and the deciding policies and the errors in the same order.
func TestMemoMatchesCedar(t *testing.T) {
	t.Parallel()
	requests, hits := 0, 0
	var out outcomes
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 43))
		set, snap := randomSnapshot(t, r)
		for range 2000 {
			mr := randomMemoRequest(r, snap, set)
			var cand candidates
			snap.ix.candidates(&cand, mr.req.Principal, &mr.ce.uids)
			want := ordered(cedar.Authorize(&cand, mr.view, mr.req))
			dec, diag, hit := decideMemo(snap, mr, &out)
			if got := ordered(dec, diag); got != want {
				t.Fatalf("seed %d, %s on %s (memo hit %v), args %v:\n got %s\nwant %s", seed, mr.p, mr.ce.ref, hit, mr.env.args, got, want)
			}
			requests++
			if hit {
				hits++
			}
		}
	}
	if hits < requests/2 {
		t.Fatalf("only %d of %d requests were answered from the memo", hits, requests)
	}
	t.Logf("%d requests agree, %d answered from the memo", requests, hits)
}

// TestNativeMatchesCedar holds each compiled condition to Cedar on its
// own: over the random policies and arguments, whenever the native
// evaluation gives a value, Cedar evaluates the policy without error to
// the same value (for a policy whose scope holds). It also checks that
// most policies that read the context are compiled and that most of their
// evaluations are native, so that the fast path is the one tested.
func TestNativeMatchesCedar(t *testing.T) {
	t.Parallel()
	compiled, ctxPolicies, native, evals := 0, 0, 0, 0
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 44))
		set, snap := randomSnapshot(t, r)
		for _, p := range set.policies {
			if p.usesContext {
				ctxPolicies++
				if p.native != nil {
					compiled++
				}
			}
		}
		for range 1000 {
			mr := randomMemoRequest(r, snap, set)
			for _, p := range set.policies {
				if p.native == nil {
					continue
				}
				if _, sd := cedar.Authorize(single{p.ID, p.scope}, mr.view, mr.req); len(sd.Reasons) == 0 {
					continue // the scope does not hold: conditions are not evaluated
				}
				evals++
				sat, ok := p.native.eval(&mr.env)
				if !ok {
					continue
				}
				native++
				dec, diag := cedar.Authorize(single{p.ID, p.cedar}, mr.view, mr.req)
				cedarSat := len(diag.Reasons) > 0
				if len(diag.Errors) > 0 || cedarSat != sat {
					t.Fatalf("seed %d, policy %s on %s, args %v, session %q: native %v, cedar %s",
						seed, p.cedar.MarshalCedar(), mr.ce.ref, mr.env.args, mr.env.sid, sat, ordered(dec, diag))
				}
			}
		}
	}
	if compiled < ctxPolicies*3/4 || native < evals/2 {
		t.Fatalf("%d of %d context-reading policies compiled, %d of %d evaluations native", compiled, ctxPolicies, native, evals)
	}
	t.Logf("%d of %d context-reading policies compiled; %d of %d evaluations native, all equal to Cedar's", compiled, ctxPolicies, native, evals)
}

// ordered renders a decision with its reasons and errors in their order.
func ordered(d cedar.Decision, diag cedar.Diagnostic) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v reasons:", d)
	for _, r := range diag.Reasons {
		fmt.Fprintf(&b, " %s@%d:%d", r.PolicyID, r.Position.Line, r.Position.Column)
	}
	b.WriteString(" errors:")
	for _, e := range diag.Errors {
		fmt.Fprintf(&b, " %s@%d:%d=%s", e.PolicyID, e.Position.Line, e.Position.Column, e.Message)
	}
	return b.String()
}

// TestMemoBounded checks that a memo at its memory bound stops growing and
// still answers, from plans it builds for the call.
func TestMemoBounded(t *testing.T) {
	set, err := ParsePolicies([]Source{{Name: "p.cedar", Text: []byte(`@id("all") permit (principal, action, resource);` + "\n" +
		`@id("ctx") forbid (principal, action, resource) when { context.args has no };`)}})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := buildSnapshot(diffCaps(), set)
	if err != nil {
		t.Fatal(err)
	}
	snap.memo.limit = 20_000
	var out outcomes
	for i := range 1000 {
		p := capability.Principal{Tenant: "t", Agent: fmt.Sprintf("a%d", i), Tier: skill.AllAgentTiers[0]}
		ents := []cedar.Entity{agentEntity(p)}
		ce := &snap.caps[i%len(snap.caps)]
		mr := memoRequest{p: p, view: &entityView{snap: snap, chain: ents}, idx: int32(i % len(snap.caps)), ce: ce,
			req: cedar.Request{Principal: ents[0].UID, Action: ActionInvoke, Resource: ce.uids[0], Context: requestContext(t.Context(), nil, false, set)},
			env: callEnv{args: map[string]any{}, principal: ents[0].Attributes, resource: ce.attrs}}
		dec, diag, _ := decideMemo(snap, mr, &out)
		if dec != cedar.Allow || len(diag.Reasons) != 1 || diag.Reasons[0].PolicyID != "all" {
			t.Fatalf("request %d: %s", i, ordered(dec, diag))
		}
	}
	if snap.memo.bytes > snap.memo.limit || snap.memo.pairs >= 1000 || snap.memo.pairs < 50 {
		t.Fatalf("memo holds %d pairs, %d bytes, limit %d", snap.memo.pairs, snap.memo.bytes, snap.memo.limit)
	}
	if len(snap.memo.plans) != 1 {
		t.Fatalf("%d plans kept, want the one all pairs share", len(snap.memo.plans))
	}
}

// TestMemoConcurrent runs memoised evaluations from several goroutines on
// one snapshot (run with -race) and checks every answer against Cedar.
func TestMemoConcurrent(t *testing.T) {
	t.Parallel()
	set, snap := randomSnapshot(t, rand.New(rand.NewPCG(5, 6)))
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			var cand candidates
			var out outcomes
			for range 2000 {
				mr := randomMemoRequest(r, snap, set)
				snap.ix.candidates(&cand, mr.req.Principal, &mr.ce.uids)
				want := ordered(cedar.Authorize(&cand, mr.view, mr.req))
				dec, diag, _ := decideMemo(snap, mr, &out)
				if got := ordered(dec, diag); got != want {
					errs <- fmt.Errorf("%s on %s:\n got %s\nwant %s", mr.p, mr.ce.ref, got, want)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
