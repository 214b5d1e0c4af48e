package policy

import (
	"iter"
	"strconv"
	"sync"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// maxMemoBytes bounds the memory a snapshot's memo holds, as estimated by
// principalBytes, pairBytes and planBytes; once reached, further pairs are
// decided without it (their plan is built and used once) until the next
// snapshot. The 50,000 pairs of the spread benchmark (1,033 distinct
// plans) take 3.6 MiB of heap (estimated 3.9 MiB), so 32 MiB holds about
// 400,000 such pairs.
const maxMemoBytes = 32 << 20

// decisionMemo keeps, per snapshot and (principal, capability) pair, the
// plan of its Cedar evaluation. Of the pair's candidate policies, those
// that never read the context see only the principal's entity (a function
// of the Principal when there is no delegation chain), the capability's
// entities and the action, all fixed for the snapshot, so their outcome
// never changes: the plan keeps the ones that count (satisfied, or failed
// to evaluate). Those that read the context stay in the plan to be
// evaluated on every call, unless their scope (which reads no context)
// never holds for the pair. The combined decision is exactly Cedar's:
// Authorize's result depends only on which policies were satisfied or
// failed, in candidate order, and the plan keeps exactly that order.
//
// Plans are shared between pairs that have the same one (most agents
// without policies of their own on a capability do), so the memo costs a
// map entry per pair and a plan per distinct outcome. Principals are found
// by agent name (one string hashed per lookup), then capabilities by
// index.
type decisionMemo struct {
	mu      sync.RWMutex
	byAgent map[string]*principalMemo
	plans   map[string]*plan
	bytes   int
	pairs   int
	// limit replaces maxMemoBytes when set (tests).
	limit int
}

// principalMemo is what is kept for one principal without a delegation
// chain: its attributes and its pairs' plans by capability index. next
// chains principals that share an agent name (other tenant or tier).
type principalMemo struct {
	p     capability.Principal
	attrs types.Record
	plans map[int32]*plan
	next  *principalMemo
}

// memoVal is what is kept for a pair: its plan and the principal's
// attributes (read by the native conditions).
type memoVal struct {
	plan  *plan
	attrs types.Record
}

// stepKind is what a plan step does.
type stepKind uint8

const (
	// stepPermit, stepForbid: a context-free policy that is satisfied.
	stepPermit stepKind = iota
	stepForbid
	// stepFailed: a context-free policy that failed to evaluate.
	stepFailed
	// stepNative: a policy that reads the context, whose scope holds, with
	// conditions nativeCond evaluates (Cedar when it gives up).
	stepNative
	// stepCedar: a policy that reads the context, evaluated by Cedar.
	stepCedar
	// stepNone is an outcome: not satisfied.
	stepNone
)

// step is one policy of a plan that counts or may count, with what a run
// reads of it at hand.
type step struct {
	pol    *Policy
	code   []ninstr // stepNative: pol.native's program, in the plan's code
	kind   stepKind
	forbid bool  // pol is a forbid
	err    int32 // stepFailed: its error in plan.errs
}

// plan is the evaluation of one pair's candidates: the steps in candidate
// order. Shared and read-only.
type plan struct {
	steps []step
	errs  []cedar.DiagnosticError
	// code holds the programs of the stepNative steps one after another.
	code []ninstr
	// perCall is set when a step must be evaluated on each call. Otherwise
	// fixed is set and dec and diag are the decision (the diagnostic's
	// slices have capacity equal to length, so that an append copies).
	perCall bool
	fixed   bool
	dec     cedar.Decision
	diag    cedar.Diagnostic
	pols    []*Policy // the policies of diag.Reasons
}

// policyEvaluator evaluates one policy with Cedar, for the steps the plan
// cannot decide alone: cedar.Authorize over that policy with the call's
// entities and context.
type policyEvaluator interface {
	authorizeOne(p *Policy) (cedar.Decision, cedar.Diagnostic)
}

// outcomes holds the diagnostic of one run, reused between calls.
type outcomes struct {
	forbids, permits       []cedar.DiagnosticReason
	forbidPols, permitPols []*Policy
	errs                   []cedar.DiagnosticError
}

// lookup returns what is kept for p invoking capability cap.
func (m *decisionMemo) lookup(p capability.Principal, cap int32) (v memoVal, ok bool) {
	m.mu.RLock()
	for pm := m.byAgent[p.Agent]; pm != nil; pm = pm.next {
		if pm.p == p {
			v.plan, ok = pm.plans[cap]
			v.attrs = pm.attrs
			break
		}
	}
	m.mu.RUnlock()
	return v, ok
}

// add builds the plan of p invoking capability cap, keeps it when the memo
// has room, and returns it. c holds the request's candidates, view its
// entities, req the request without context (the plan reads none), attrs
// the principal's attributes.
func (m *decisionMemo) add(c *candidates, view types.EntityGetter, req cedar.Request, p capability.Principal, cap int32, attrs types.Record) memoVal {
	pl := newPlan(c, view, req)
	id := pl.key()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byAgent == nil {
		m.byAgent, m.plans = map[string]*principalMemo{}, map[string]*plan{}
	}
	limit := maxMemoBytes
	if m.limit > 0 {
		limit = m.limit
	}
	if shared, ok := m.plans[id]; ok {
		pl = shared
	} else if m.bytes+planBytes(pl, len(id)) <= limit {
		m.plans[id] = pl
		m.bytes += planBytes(pl, len(id))
	} else {
		return memoVal{plan: pl, attrs: attrs}
	}
	var pm *principalMemo
	for pm = m.byAgent[p.Agent]; pm != nil && pm.p != p; pm = pm.next {
	}
	if pm == nil {
		size := principalBytes(p)
		if m.bytes+size > limit {
			return memoVal{plan: pl, attrs: attrs}
		}
		pm = &principalMemo{p: p, attrs: attrs, plans: map[int32]*plan{}, next: m.byAgent[p.Agent]}
		m.byAgent[p.Agent] = pm
		m.bytes += size
	}
	if _, dup := pm.plans[cap]; !dup && m.bytes+pairBytes <= limit {
		pm.plans[cap] = pl
		m.bytes += pairBytes
		m.pairs++
	}
	return memoVal{plan: pl, attrs: pm.attrs}
}

// Estimated sizes for the memory bound: a principal's entry (its record,
// strings and map), a pair's map entry, a plan and its key.
const pairBytes = 32

func principalBytes(p capability.Principal) int {
	return 256 + len(p.Tenant) + len(p.Agent) + len(p.Tier) + len(p.Parent)
}

func planBytes(pl *plan, keyLen int) int {
	return 200 + keyLen + 48*len(pl.steps) + 48*len(pl.code) + 96*len(pl.errs) + 64*(len(pl.diag.Reasons)+len(pl.diag.Errors))
}

// newPlan evaluates the context-free candidates together, and the scopes
// of the others together, and lays the outcomes out in candidate order.
// Of the context-free candidates, Authorize reports every error and the
// satisfied forbids, or the satisfied permits when no forbid is: the
// permits it leaves out then can never count, as that forbid denies every
// call of the pair.
func newPlan(c *candidates, view types.EntityGetter, req cedar.Request) *plan {
	c.noContext = true
	dec, diag := cedar.Authorize(c, view, req)
	c.noContext = false
	_, scopes := cedar.Authorize(scopeIterator{c}, view, req)
	satisfied := stepForbid
	if dec == cedar.Allow {
		satisfied = stepPermit
	}
	pl := &plan{}
	reasons, errs, held, scopeErrs := diag.Reasons, diag.Errors, scopes.Reasons, scopes.Errors
	for _, p := range c.each() {
		id := cedar.PolicyID(p.ID)
		if p.usesContext {
			kind := stepCedar
			if p.native != nil {
				switch {
				case len(scopeErrs) > 0 && scopeErrs[0].PolicyID == id:
					scopeErrs = scopeErrs[1:] // a scope cannot fail; if one did, Cedar decides
				case len(held) > 0 && held[0].PolicyID == id:
					held = held[1:]
					kind = stepNative
				default:
					continue // the scope never holds for this pair
				}
			}
			pl.steps = append(pl.steps, step{pol: p, kind: kind, forbid: p.Effect == "forbid"})
			pl.perCall = true
			continue
		}
		switch {
		case len(errs) > 0 && errs[0].PolicyID == id:
			pl.steps = append(pl.steps, step{pol: p, kind: stepFailed, forbid: p.Effect == "forbid", err: int32(len(pl.errs))})
			pl.errs = append(pl.errs, errs[0])
			errs = errs[1:]
		case len(reasons) > 0 && reasons[0].PolicyID == id:
			pl.steps = append(pl.steps, step{pol: p, kind: satisfied, forbid: p.Effect == "forbid"})
			reasons = reasons[1:]
		}
	}
	pl.steps = pl.steps[:len(pl.steps):len(pl.steps)]
	n := 0
	for _, s := range pl.steps {
		if s.kind == stepNative {
			n += len(s.pol.native.code)
		}
	}
	pl.code = make([]ninstr, 0, n)
	for i := range pl.steps {
		if s := &pl.steps[i]; s.kind == stepNative {
			at := len(pl.code)
			pl.code = append(pl.code, s.pol.native.code...)
			s.code = pl.code[at:len(pl.code):len(pl.code)]
		}
	}
	if !pl.perCall {
		var out outcomes
		pl.dec, pl.diag, pl.pols = pl.run(nil, nil, &out)
		pl.pols = pl.pols[:len(pl.pols):len(pl.pols)]
		pl.diag.Reasons = pl.diag.Reasons[:len(pl.diag.Reasons):len(pl.diag.Reasons)]
		pl.diag.Errors = pl.diag.Errors[:len(pl.diag.Errors):len(pl.diag.Errors)]
		pl.fixed = true
	}
	return pl
}

// scopeIterator yields the scope-only form (native.go) of the candidates
// that read the context and have native conditions.
type scopeIterator struct{ c *candidates }

// All implements cedar.PolicyIterator.
func (s scopeIterator) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, p := range s.c.each() {
			if p.usesContext && p.native != nil && !yield(cedar.PolicyID(p.ID), p.scope) {
				return
			}
		}
	}
}

// key identifies the plan by its content, to share it: each step's policy
// and kind, and the failed steps' messages.
func (pl *plan) key() string {
	b := make([]byte, 0, 8*len(pl.steps))
	for _, s := range pl.steps {
		b = strconv.AppendInt(b, int64(s.pol.seq), 36)
		b = append(b, byte('a'+s.kind))
		if s.kind == stepFailed {
			e := pl.errs[s.err]
			b = strconv.AppendInt(b, int64(len(e.Message)), 10)
			b = append(b, ':')
			b = append(b, e.Message...)
		}
	}
	return string(b)
}

// run is cedar.Authorize over the pair's candidates for one call: the kept
// outcomes, and those of the per-call steps, natively (env) or by Cedar
// (ev). It also returns the policies of the diagnostic's reasons, in
// order. The diagnostic's slices and the policies live in out until its
// next run.
func (pl *plan) run(env *callEnv, ev policyEvaluator, out *outcomes) (cedar.Decision, cedar.Diagnostic, []*Policy) {
	if pl.fixed {
		return pl.dec, pl.diag, pl.pols
	}
	forbids, permits, errs := out.forbids[:0], out.permits[:0], out.errs[:0]
	forbidPols, permitPols := out.forbidPols[:0], out.permitPols[:0]
	for i := range pl.steps {
		s := &pl.steps[i]
		kind := s.kind
		var failed cedar.DiagnosticError
		switch kind {
		case stepFailed:
			failed = pl.errs[s.err]
		case stepNative, stepCedar:
			kind, failed = s.decide(env, ev)
		}
		switch kind {
		case stepPermit:
			permits = append(permits, s.pol.reason)
			permitPols = append(permitPols, s.pol)
		case stepForbid:
			forbids = append(forbids, s.pol.reason)
			forbidPols = append(forbidPols, s.pol)
		case stepFailed:
			errs = append(errs, failed)
		}
	}
	out.forbids, out.permits, out.errs, out.forbidPols, out.permitPols = forbids, permits, errs, forbidPols, permitPols
	var diag cedar.Diagnostic
	if len(errs) > 0 {
		diag.Errors = errs
	}
	switch {
	case len(forbids) > 0:
		diag.Reasons = forbids
		return cedar.Deny, diag, forbidPols
	case len(permits) > 0:
		diag.Reasons = permits
		return cedar.Allow, diag, permitPols
	}
	return cedar.Deny, diag, nil
}

// decide gives the outcome of a per-call step: stepPermit, stepForbid,
// stepNone, or stepFailed with the error.
func (s *step) decide(env *callEnv, ev policyEvaluator) (stepKind, cedar.DiagnosticError) {
	if s.kind == stepNative {
		if sat, ok := evalCode(s.code, env); ok {
			switch {
			case !sat:
				return stepNone, cedar.DiagnosticError{}
			case s.forbid:
				return stepForbid, cedar.DiagnosticError{}
			}
			return stepPermit, cedar.DiagnosticError{}
		}
	}
	dec, diag := ev.authorizeOne(s.pol)
	switch {
	case len(diag.Errors) > 0:
		return stepFailed, diag.Errors[0]
	case dec == cedar.Allow:
		return stepPermit, cedar.DiagnosticError{}
	case len(diag.Reasons) > 0:
		return stepForbid, cedar.DiagnosticError{}
	}
	return stepNone, cedar.DiagnosticError{}
}

// each yields every candidate in order, whatever the filters.
func (c *candidates) each() iter.Seq2[int, *Policy] {
	return func(yield func(int, *Policy) bool) {
		k := 0
		for i := 0; i < c.n; i++ {
			for _, p := range c.lists[i] {
				if !yield(k, p) {
					return
				}
				k++
			}
		}
	}
}

// single is a policy iterator over one policy.
type single struct {
	id string
	p  *cedar.Policy
}

// All implements cedar.PolicyIterator.
func (s single) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		yield(cedar.PolicyID(s.id), s.p)
	}
}
