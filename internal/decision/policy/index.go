package policy

import (
	"iter"
	"slices"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/decision/policy/internal/cedarinspect"
)

// buckets holds the policies of one principal side of the index, by the
// resource their scope names: Capability == X and resource in X (X a
// capability, skill or extension) under X, everything else in any.
type buckets struct {
	any   []*Policy
	byRes map[types.EntityUID][]*Policy
}

// index slices a policy set by the principal and resource its scopes name,
// so a request evaluates only the policies that can apply to it. It relies
// on facts of skillgate's entity model that Cedar cannot know: principals
// are always Agent entities, resources always Capability entities whose
// only ancestors are their Skill and Extension, the action is always
// Action::"invoke" with no ancestors. A policy whose scope can never match
// under those facts is dropped; one whose scope depends on the entity graph
// in a way the index does not model (principal in …, principal is …) goes
// to the any-principal side, where it is always evaluated.
type index struct {
	anyP buckets
	byP  map[types.EntityUID]*buckets
	// dropped counts policies that can never apply to an invoke.
	dropped int
}

func newIndex(set *PolicySet) *index {
	ix := &index{anyP: buckets{byRes: map[types.EntityUID][]*Policy{}}, byP: map[types.EntityUID]*buckets{}}
	for _, p := range set.policies {
		principal, action, resource := cedarinspect.Scopes(p.cedar)
		if !actionMayBeInvoke(action) {
			ix.dropped++
			continue
		}
		pk, pok := principalKey(principal)
		rk, rok := resourceKey(resource)
		if !pok || !rok {
			ix.dropped++
			continue
		}
		b := &ix.anyP
		if pk != (types.EntityUID{}) {
			b = ix.byP[pk]
			if b == nil {
				b = &buckets{byRes: map[types.EntityUID][]*Policy{}}
				ix.byP[pk] = b
			}
		}
		if rk == (types.EntityUID{}) {
			b.any = append(b.any, p)
		} else {
			b.byRes[rk] = append(b.byRes[rk], p)
		}
	}
	return ix
}

// actionMayBeInvoke reports whether an action scope can hold for
// Action::"invoke".
func actionMayBeInvoke(s cedarinspect.Scope) bool {
	switch s.Kind {
	case cedarinspect.ScopeEq:
		return s.Entity == ActionInvoke
	case cedarinspect.ScopeIn:
		return s.Entity == ActionInvoke
	case cedarinspect.ScopeInSet:
		return slices.Contains(s.Entities, ActionInvoke)
	default:
		return true
	}
}

// principalKey returns the Agent a principal scope pins (zero for any),
// and false when the scope can never hold.
func principalKey(s cedarinspect.Scope) (types.EntityUID, bool) {
	switch s.Kind {
	case cedarinspect.ScopeEq:
		return s.Entity, s.Entity.Type == TypeAgent
	case cedarinspect.ScopeIs:
		return types.EntityUID{}, s.Type == TypeAgent
	case cedarinspect.ScopeIsIn:
		return types.EntityUID{}, s.Type == TypeAgent
	default:
		return types.EntityUID{}, true // all, in
	}
}

// resourceKey returns the entity a resource scope pins (zero for any), and
// false when the scope can never hold.
func resourceKey(s cedarinspect.Scope) (types.EntityUID, bool) {
	switch s.Kind {
	case cedarinspect.ScopeEq:
		return s.Entity, s.Entity.Type == TypeCapability
	case cedarinspect.ScopeIn:
		return s.Entity, s.Entity.Type == TypeCapability || s.Entity.Type == TypeSkill || s.Entity.Type == TypeExtension
	case cedarinspect.ScopeIs:
		return types.EntityUID{}, s.Type == TypeCapability
	case cedarinspect.ScopeIsIn:
		ok := s.Type == TypeCapability && (s.Entity.Type == TypeCapability || s.Entity.Type == TypeSkill || s.Entity.Type == TypeExtension)
		return s.Entity, ok
	default:
		return types.EntityUID{}, true
	}
}

// candidates is the slice of policies one request evaluates: up to eight
// lists (any/by-resource for the any-principal side and the principal's
// side). It implements cedar.PolicyIterator.
type candidates struct {
	lists [8][]*Policy
	n     int
	// noContext skips policies that read the context (scope projection).
	noContext bool
}

func (ix *index) candidates(c *candidates, principal types.EntityUID, res *[3]types.EntityUID) {
	c.n = 0
	add := func(b *buckets) {
		if len(b.any) > 0 {
			c.lists[c.n] = b.any
			c.n++
		}
		if len(b.byRes) == 0 {
			return
		}
		for _, r := range res {
			if l := b.byRes[r]; len(l) > 0 {
				c.lists[c.n] = l
				c.n++
			}
		}
	}
	add(&ix.anyP)
	if b := ix.byP[principal]; b != nil {
		add(b)
	}
}

// All implements cedar.PolicyIterator.
func (c *candidates) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for i := 0; i < c.n; i++ {
			for _, p := range c.lists[i] {
				if c.noContext && p.usesContext {
					continue
				}
				if !yield(cedar.PolicyID(p.ID), p.cedar) {
					return
				}
			}
		}
	}
}

// usesContext reports whether some candidate reads the context.
func (c *candidates) usesContext() bool {
	for i := 0; i < c.n; i++ {
		for _, p := range c.lists[i] {
			if p.usesContext {
				return true
			}
		}
	}
	return false
}

// permitUsesContext reports whether some candidate permit reads the
// context (and so might permit with other arguments).
func (c *candidates) permitUsesContext() bool {
	for i := 0; i < c.n; i++ {
		for _, p := range c.lists[i] {
			if p.usesContext && p.Effect == "permit" {
				return true
			}
		}
	}
	return false
}

// count is the number of candidate policies.
func (c *candidates) count() int {
	n := 0
	for i := 0; i < c.n; i++ {
		n += len(c.lists[i])
	}
	return n
}
