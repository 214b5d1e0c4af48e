package policy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	cedar "github.com/cedar-policy/cedar-go"

	"github.com/skillgate/skillgate/skill"
)

// TestMemoMatchesCedar is the differential test of the decision memo: over
// random policy sets (context-free and context-reading policies, forbids,
// permits, policies that fail to evaluate) and requests that repeat, so
// that most are answered from the memo, the memoised evaluation gives
// exactly what cedar.Authorize gives over the same candidates: the
// decision, and the deciding policies and the errors in the same order.
func TestMemoMatchesCedar(t *testing.T) {
	t.Parallel()
	requests, hits := 0, 0
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 43))
		set, snap := randomSnapshot(t, r)
		for range 1500 {
			mr := randomMemoRequest(t, r, snap, set)
			p, view, idx, ce, req := mr.p, mr.view, mr.idx, mr.ce, mr.req
			var cand candidates
			snap.ix.candidates(&cand, req.Principal, &ce.uids)
			wantDec, wantDiag := cedar.Authorize(&cand, view, req)
			key := memoKey{p: p, cap: idx}
			part := snap.memo.lookup(key)
			hit := part != nil
			if hit && (part.cand.n != cand.n || part.usesCtx != cand.usesContext() || func() bool {
				for i := range cand.n {
					if len(part.cand.lists[i]) != len(cand.lists[i]) || &part.cand.lists[i][0] != &cand.lists[i][0] {
						return true
					}
				}
				return false
			}()) {
				t.Fatalf("seed %d, %s on %s: the kept candidates differ from the index's", seed, p, ce.ref)
			}
			gotDec, gotDiag := snap.memo.authorize(&cand, view, req, key, part)
			if got, want := ordered(gotDec, gotDiag), ordered(wantDec, wantDiag); got != want {
				t.Fatalf("seed %d, %s on %s (memo hit %v):\n got %s\nwant %s", seed, p, ce.ref, hit, got, want)
			}
			if cand.onlyContext {
				t.Fatal("the candidates were left filtered")
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

// memoRequest is one random request of the memo tests: an agent a0–a5 of
// any tier without a delegation chain, a capability of snap, and an
// argument n half of the time.
type memoRequest struct {
	p    Principal
	view *entityView
	idx  int32
	ce   *capEntry
	req  cedar.Request
}

func randomMemoRequest(t *testing.T, r *rand.Rand, snap *snapshot, set *PolicySet) memoRequest {
	p := Principal{Tenant: "t", Agent: fmt.Sprintf("a%d", r.IntN(6)), Tier: skill.AllAgentTiers[r.IntN(5)]}
	ents := []cedar.Entity{agentEntity(p)}
	idx := int32(r.IntN(len(snap.caps)))
	ce := &snap.caps[idx]
	args := map[string]any{}
	if r.IntN(2) == 0 {
		args["n"] = float64(r.IntN(3))
	}
	req := cedar.Request{Principal: ents[0].UID, Action: ActionInvoke, Resource: ce.uids[0],
		Context: requestContext(t.Context(), args, false, set)}
	return memoRequest{p: p, view: &entityView{snap: snap, chain: ents}, idx: idx, ce: ce, req: req}
}

// TestMemoBounded checks that a full memo stops growing and still answers.
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
	ce := &snap.caps[0]
	for i := range maxMemoEntries + 10 {
		p := Principal{Tenant: "t", Agent: fmt.Sprintf("a%d", i), Tier: skill.AllAgentTiers[0]}
		ents := []cedar.Entity{agentEntity(p)}
		var cand candidates
		snap.ix.candidates(&cand, ents[0].UID, &ce.uids)
		req := cedar.Request{Principal: ents[0].UID, Action: ActionInvoke, Resource: ce.uids[0], Context: requestContext(t.Context(), nil, false, set)}
		key := memoKey{p: p, cap: 0}
		dec, diag := snap.memo.authorize(&cand, &entityView{snap: snap, chain: ents}, req, key, snap.memo.lookup(key))
		if dec != cedar.Allow || len(diag.Reasons) != 1 || diag.Reasons[0].PolicyID != "all" {
			t.Fatalf("request %d: %s", i, ordered(dec, diag))
		}
	}
	if n := len(snap.memo.m); n != maxMemoEntries {
		t.Fatalf("memo holds %d entries, want the bound %d", n, maxMemoEntries)
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
			for range 2000 {
				mr := randomMemoRequest(t, r, snap, set)
				snap.ix.candidates(&cand, mr.req.Principal, &mr.ce.uids)
				want := ordered(cedar.Authorize(&cand, mr.view, mr.req))
				key := memoKey{p: mr.p, cap: mr.idx}
				if got := ordered(snap.memo.authorize(&cand, mr.view, mr.req, key, snap.memo.lookup(key))); got != want {
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
