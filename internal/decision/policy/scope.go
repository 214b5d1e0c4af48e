package policy

import (
	"fmt"
	"slices"
	"strings"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
)

// principalEntity returns the principal's Cedar entity, cached.
func (e *Engine) principalEntity(p capability.Principal) types.Entity {
	e.pmu.RLock()
	ent, ok := e.principals[p]
	e.pmu.RUnlock()
	if ok {
		return ent
	}
	ent = agentEntity(p)
	e.pmu.Lock()
	if len(e.principals) < maxCachedPrincipals {
		e.principals[p] = ent
	}
	e.pmu.Unlock()
	return ent
}

// chain resolves a principal and its ancestors (for a sub-agent), and the
// delegation of each delegated member (nil for the root). ok is false with
// a message when a sub-agent has no matching delegation.
func (e *Engine) chain(p capability.Principal, out *[MaxDelegationDepth + 1]capability.Principal, dels *[MaxDelegationDepth + 1]*delegation) (n int, problem string) {
	ds := *e.deleg.Load()
	cur := p
	for n = 0; ; n++ {
		if n > MaxDelegationDepth {
			return 0, "the delegation chain of " + p.ID() + " is deeper than the limit"
		}
		out[n] = cur
		dels[n] = nil
		if cur.Parent == "" {
			return n + 1, ""
		}
		d := ds[cur.ID()]
		if d == nil || d.child != cur {
			return 0, fmt.Sprintf("sub-agent %s has no delegation from %s as %s; its parent must delegate capabilities to it first", cur.ID(), cur.Parent, cur.Tier)
		}
		dels[n] = d
		cur = d.parent
	}
}

// inScope reports whether capability ce is in the scope of every member
// of the chain: registered, invokable by its tier, forwarded to it.
func inScope(ce *capEntry, chain []capability.Principal, dels []*delegation) bool {
	if !ce.registered {
		return false
	}
	for i, p := range chain {
		if ce.tiers&(1<<tierLevel(p.Tier)) == 0 {
			return false
		}
		if d := dels[i]; d != nil {
			if _, ok := d.forwarded[ce.Ref()]; !ok {
				return false
			}
		}
	}
	return true
}

// ScopeEntry is one capability in a principal's scope.
type ScopeEntry struct {
	capability.Ref
	RiskLevel   capability.RiskLevel   `json:"riskLevel"`
	SideEffects capability.SideEffects `json:"sideEffects"`
	DataEgress  capability.DataEgress  `json:"dataEgress"`
	// NeedsApproval: calls need a grant.
	NeedsApproval bool `json:"needsApproval"`
	// Constraints are the manifest's; permits may add theirs per call.
	Constraints constraint.Set `json:"constraints,omitzero"`
}

// Scope is a principal's capability scope: the registry projection (enabled
// capabilities of enabled skills invokable by its tier, and for a sub-agent
// only those delegated along its chain) intersected with policy (leaving out
// capabilities the policies deny whatever the arguments).
type Scope struct {
	Principal string `json:"principal"`
	// Entries are sorted by capability id ([CapabilityRef.String]).
	Entries []ScopeEntry `json:"capabilities"`
}

// Allowed returns the scope as allowed capability ids per extension, the
// extension named "skill:extensionId" (the Cedar Extension entity id).
func (s Scope) Allowed() map[string][]string {
	out := map[string][]string{}
	for _, e := range s.Entries {
		ext := e.Skill + ":" + e.ExtensionID
		out[ext] = append(out[ext], e.CapabilityID)
	}
	return out
}

// Contains reports whether ref is in the scope. It is a binary search:
// the entries must be in the order [Engine.Scope] gives them, sorted by
// capability id.
func (s Scope) Contains(ref capability.Ref) bool {
	_, found := slices.BinarySearchFunc(s.Entries, ref, func(e ScopeEntry, r capability.Ref) int { return compareRefs(e.Ref, r) })
	return found
}

// compareRefs orders a and b as strings.Compare(a.String(), b.String())
// does, without building the strings: the broker asks Contains on every
// call.
func compareRefs(a, b capability.Ref) int {
	pa := [...]string{a.Skill, ":", a.ExtensionID, "/", a.CapabilityID}
	pb := [...]string{b.Skill, ":", b.ExtensionID, "/", b.CapabilityID}
	i, j := 0, 0 // the pieces being read
	x, y := pa[0], pb[0]
	for {
		for x == "" && i < len(pa)-1 {
			i++
			x = pa[i]
		}
		for y == "" && j < len(pb)-1 {
			j++
			y = pb[j]
		}
		switch {
		case x == "" && y == "":
			return 0
		case x == "":
			return -1
		case y == "":
			return 1
		}
		n := min(len(x), len(y))
		if c := strings.Compare(x[:n], y[:n]); c != 0 {
			return c
		}
		x, y = x[n:], y[n:]
	}
}

// Scope computes principal's capability scope. Results are cached per
// snapshot (and recomputed after any change).
func (e *Engine) Scope(p capability.Principal) (Scope, error) {
	if err := p.Validate(); err != nil {
		return Scope{}, err
	}
	s := e.snap.Load()
	dels := *e.deleg.Load()
	type cacheKey struct {
		p capability.Principal
		d *delegation
	}
	key := cacheKey{p, dels[p.ID()]}
	if v, ok := s.scopes.Load(key); ok {
		return v.(Scope), nil
	}
	var chainArr [MaxDelegationDepth + 1]capability.Principal
	var delArr [MaxDelegationDepth + 1]*delegation
	n, problem := e.chain(p, &chainArr, &delArr)
	out := Scope{Principal: p.ID(), Entries: []ScopeEntry{}}
	if problem != "" {
		return out, nil
	}
	chain, ds := chainArr[:n], delArr[:n]
	ents := make([]types.Entity, n)
	for i := range chain {
		ents[i] = e.principalEntity(chain[i])
	}
	view := &entityView{snap: s, chain: ents}
	var cand candidates
	cand.noContext = true
	for i := range s.caps {
		ce := &s.caps[i]
		if !inScope(ce, chain, ds) || !mayAllow(s, &cand, view, ce) {
			continue
		}
		out.Entries = append(out.Entries, ScopeEntry{
			Ref: ce.Ref(), RiskLevel: ce.RiskLevel, SideEffects: ce.SideEffects,
			DataEgress: ce.DataEgress, NeedsApproval: ce.needsApproval(), Constraints: ce.manifest.Set(),
		})
	}
	slices.SortFunc(out.Entries, func(a, b ScopeEntry) int { return strings.Compare(a.Ref.String(), b.Ref.String()) })
	s.scopes.Store(key, out)
	return out, nil
}

// mayAllow reports whether the policies could allow some call of ce for
// every member of the view's chain: evaluated over the policies that do
// not read the context, a forbid excludes it, a permit includes it, and
// with neither it is included only if a permit that reads the context
// might match.
func mayAllow(s *snapshot, cand *candidates, view *entityView, ce *capEntry) bool {
	for _, ent := range view.chain {
		s.ix.candidates(cand, ent.UID, &ce.uids)
		dec, diag := cedar.Authorize(cand, view, cedar.Request{Principal: ent.UID, Action: ActionInvoke, Resource: ce.uids[0]})
		if dec == cedar.Allow {
			continue
		}
		if len(diag.Reasons) > 0 || !cand.permitUsesContext() {
			return false
		}
	}
	return true
}

// Delegate registers child as a sub-agent of parent with the forwarded
// capabilities, replacing an earlier delegation of child. The child's scope
// is then forwarded ∩ the parent's scope ∩ the registry for the child's
// tier ∩ policy, checked again at every call; forwarded entries outside the
// parent's scope are dropped (a forward is untrusted input). The child's
// tier may not be above its parent's ([ErrTierAboveParent]); a parent that
// is itself a sub-agent must have been delegated to ([ErrUnknownParent]).
// It returns the child's resulting scope.
func (e *Engine) Delegate(parent, child capability.Principal, forwarded []capability.Ref) (Scope, error) {
	if err := parent.Validate(); err != nil {
		return Scope{}, fmt.Errorf("parent: %w", err)
	}
	if child.Parent == "" {
		child.Parent = parent.ID()
	}
	if err := child.Validate(); err != nil {
		return Scope{}, fmt.Errorf("child: %w", err)
	}
	if child.Parent != parent.ID() {
		return Scope{}, fmt.Errorf("%w: child %s names %s as its parent, not %s", ErrUnknownParent, child.ID(), child.Parent, parent.ID())
	}
	if tierLevel(child.Tier) < tierLevel(parent.Tier) {
		return Scope{}, fmt.Errorf("%w: %s cannot delegate to %s at %s, above its own %s; give the sub-agent %s or lower", ErrTierAboveParent, parent.ID(), child.ID(), child.Tier, parent.Tier, parent.Tier)
	}
	e.mu.Lock()
	old := *e.deleg.Load()
	var chainArr [MaxDelegationDepth + 1]capability.Principal
	var delArr [MaxDelegationDepth + 1]*delegation
	n, problem := e.chain(parent, &chainArr, &delArr)
	if problem != "" {
		e.mu.Unlock()
		return Scope{}, fmt.Errorf("%w: %s", ErrUnknownParent, problem)
	}
	if n > MaxDelegationDepth {
		e.mu.Unlock()
		return Scope{}, fmt.Errorf("%w: the chain above %s is already %d deep, limit %d", ErrUnknownParent, child.ID(), n, MaxDelegationDepth)
	}
	for _, a := range chainArr[:n] {
		if a.ID() == child.ID() {
			e.mu.Unlock()
			return Scope{}, fmt.Errorf("%w: %s is an ancestor of %s; delegation cannot form a cycle", ErrUnknownParent, child.ID(), parent.ID())
		}
	}
	e.mu.Unlock()
	parentScope, err := e.Scope(parent)
	if err != nil {
		return Scope{}, err
	}
	d := &delegation{child: child, parent: parent, forwarded: map[capability.Ref]struct{}{}}
	for _, r := range forwarded {
		if parentScope.Contains(r) {
			d.forwarded[r] = struct{}{}
		}
	}
	e.mu.Lock()
	next := make(map[string]*delegation, len(old)+1)
	for k, v := range *e.deleg.Load() {
		next[k] = v
	}
	next[child.ID()] = d
	e.deleg.Store(&next)
	e.mu.Unlock()
	e.log.Info("delegation", "parent", parent.String(), "child", child.String(), "forwarded", len(forwarded), "kept", len(d.forwarded))
	return e.Scope(child)
}

// Undelegate forgets child's delegation; its calls are then denied.
func (e *Engine) Undelegate(child capability.Principal) {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := map[string]*delegation{}
	for k, v := range *e.deleg.Load() {
		if k != child.ID() {
			next[k] = v
		}
	}
	e.deleg.Store(&next)
}
