package policy

import (
	"iter"
	"sync"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

// maxMemoEntries bounds a snapshot's memo; once full, further requests are
// evaluated without it until the next snapshot.
const maxMemoEntries = 1 << 14

// memoKey names the context-free part of a Cedar evaluation: a principal
// without a delegation chain invoking one capability of the snapshot.
type memoKey struct {
	p   Principal
	cap int32
}

// memoEntry is the outcome of one context-free candidate policy that
// counted: it was satisfied (a forbid or a permit) or failed to evaluate.
type memoEntry struct {
	pos    int // the policy's position in the candidates' order
	forbid bool
	failed bool
	reason cedar.DiagnosticReason
	err    cedar.DiagnosticError
}

// decisionMemo keeps, per snapshot, the outcome of the candidate policies
// that never read the context. Such a policy sees only the principal's
// entity (a function of the Principal when there is no delegation chain),
// the capability's entities and the action, all fixed for the snapshot, so
// its outcome for a (principal, capability) pair never changes; only the
// policies that read the context (the call's arguments, the session) are
// evaluated on every call. The combined decision is exactly Cedar's:
// Authorize's result depends only on which policies were satisfied or
// failed, in candidate order, and the memo keeps exactly that.
type decisionMemo struct {
	mu sync.RWMutex
	m  map[memoKey]*memoPart
}

// memoPart is what is kept for one key: the request's candidate policies,
// the outcome of those that do not read the context, in candidate order,
// and the diagnostic those give on their own (shared, read-only: capacity
// equals length, so an append copies).
type memoPart struct {
	cand     candidates
	usesCtx  bool // some candidate reads the context
	entries  []memoEntry
	aloneDec cedar.Decision
	alone    cedar.Diagnostic
}

// lookup returns what is kept for key, or nil.
func (m *decisionMemo) lookup(key memoKey) *memoPart {
	m.mu.RLock()
	part := m.m[key]
	m.mu.RUnlock()
	return part
}

// authorize is cedar.Authorize(c, view, req) for a request whose principal
// has no delegation chain, with the outcome of the context-free candidates
// taken from part (what lookup(key) returned) or, when part is nil,
// evaluated and kept under key.
func (m *decisionMemo) authorize(c *candidates, view types.EntityGetter, req cedar.Request, key memoKey, part *memoPart) (cedar.Decision, cedar.Diagnostic) {
	if part == nil {
		part = m.fill(c, view, req, key)
	}
	var dec cedar.Decision
	var diag cedar.Diagnostic
	if part.usesCtx {
		c.onlyContext = true
		dec, diag = cedar.Authorize(c, view, req)
		c.onlyContext = false
	}
	if len(diag.Reasons) == 0 && len(diag.Errors) == 0 {
		return part.aloneDec, part.alone // only the context-free policies counted
	}
	return mergeOutcomes(c, part.entries, dec, diag)
}

// fill evaluates the context-free candidates one by one and memoises their
// outcome.
func (m *decisionMemo) fill(c *candidates, view types.EntityGetter, req cedar.Request, key memoKey) *memoPart {
	var out []memoEntry
	for pos, p := range c.each() {
		if !p.usesContext {
			dec, diag := cedar.Authorize(single{p}, view, req)
			switch {
			case len(diag.Errors) > 0:
				out = append(out, memoEntry{pos: pos, failed: true, err: diag.Errors[0]})
			case dec == cedar.Allow:
				out = append(out, memoEntry{pos: pos, reason: diag.Reasons[0]})
			case len(diag.Reasons) > 0:
				out = append(out, memoEntry{pos: pos, forbid: true, reason: diag.Reasons[0]})
			}
		}
	}
	part := &memoPart{cand: *c, usesCtx: c.usesContext(), entries: out[:len(out):len(out)]}
	part.aloneDec, part.alone = mergeOutcomes(c, part.entries, cedar.Deny, cedar.Diagnostic{})
	part.alone.Reasons = part.alone.Reasons[:len(part.alone.Reasons):len(part.alone.Reasons)]
	part.alone.Errors = part.alone.Errors[:len(part.alone.Errors):len(part.alone.Errors)]
	m.mu.Lock()
	if m.m == nil {
		m.m = map[memoKey]*memoPart{}
	}
	if len(m.m) < maxMemoEntries {
		m.m[key] = part
	}
	m.mu.Unlock()
	return part
}

// mergeOutcomes combines the memoised outcome of the context-free
// candidates with Authorize's result over the others (dec, diag; zero when
// there were none) as Authorize over all of them would: the errors of
// both, and the forbids when any was satisfied, else the permits; reasons
// and errors in candidate order.
func mergeOutcomes(c *candidates, free []memoEntry, dec cedar.Decision, diag cedar.Diagnostic) (cedar.Decision, cedar.Diagnostic) {
	// The context-reading side's forbids, or its permits when it allowed.
	var ctxForbids, ctxPermits []cedar.DiagnosticReason
	switch {
	case dec == cedar.Allow:
		ctxPermits = diag.Reasons
	case len(diag.Reasons) > 0:
		ctxForbids = diag.Reasons
	}
	forbid := len(ctxForbids) > 0
	if !forbid {
		for i := range free {
			if free[i].forbid {
				forbid = true
				break
			}
		}
	}
	var out cedar.Diagnostic
	var positions map[cedar.PolicyID]int // of the context-reading side's entries, built when needed
	posOf := func(id cedar.PolicyID) int {
		if positions == nil {
			positions = map[cedar.PolicyID]int{}
			for pos, p := range c.each() {
				if p.usesContext {
					positions[cedar.PolicyID(p.ID)] = pos
				}
			}
		}
		return positions[id]
	}
	// Reasons: the satisfied forbids, else the satisfied permits, merged by
	// position.
	ctxReasons := ctxPermits
	if forbid {
		ctxReasons = ctxForbids
	}
	i, j := 0, 0
	for {
		for i < len(free) && (free[i].failed || free[i].forbid != forbid) {
			i++
		}
		if i == len(free) && j == len(ctxReasons) {
			break
		}
		if j == len(ctxReasons) || i < len(free) && free[i].pos < posOf(ctxReasons[j].PolicyID) {
			out.Reasons = append(out.Reasons, free[i].reason)
			i++
		} else {
			out.Reasons = append(out.Reasons, ctxReasons[j])
			j++
		}
	}
	// Errors, merged by position.
	i, j = 0, 0
	for {
		for i < len(free) && !free[i].failed {
			i++
		}
		if i == len(free) && j == len(diag.Errors) {
			break
		}
		if j == len(diag.Errors) || i < len(free) && free[i].pos < posOf(diag.Errors[j].PolicyID) {
			out.Errors = append(out.Errors, free[i].err)
			i++
		} else {
			out.Errors = append(out.Errors, diag.Errors[j])
			j++
		}
	}
	if !forbid && len(out.Reasons) > 0 {
		return cedar.Allow, out
	}
	return cedar.Deny, out
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
type single struct{ p *Policy }

// All implements cedar.PolicyIterator.
func (s single) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		yield(cedar.PolicyID(s.p.ID), s.p.cedar)
	}
}
