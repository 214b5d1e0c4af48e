package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cedar-policy/cedar-go/types"
	"golang.org/x/time/rate"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
)

// MaxDelegationDepth bounds a chain of sub-agents below a root principal.
const MaxDelegationDepth = 8

// maxCachedPrincipals bounds the cache of principal entities.
const maxCachedPrincipals = 10_000

// Options configures an [Engine]. The zero value works: no store (grants in
// memory only), no policy directory, the system clock, no logging.
type Options struct {
	// Store persists stored policies and grants; nil keeps grants in
	// memory only.
	Store Store
	// PolicyDir holds the *.cedar policy files (DATA/policies).
	PolicyDir string
	// Logger receives decisions at debug level and grant changes at info
	// level; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Buckets keeps rate-limit buckets shared with other processes; nil
	// keeps them in this engine's memory.
	Buckets Buckets
}

// Engine makes policy decisions. It is safe for concurrent use: readers
// work on an immutable snapshot that writers replace atomically.
type Engine struct {
	opts Options
	log  *slog.Logger
	now  func() time.Time

	mu     sync.Mutex // serializes writers
	snap   atomic.Pointer[snapshot]
	deleg  atomic.Pointer[map[string]*delegation]
	grants atomic.Pointer[[]*grantEntry]

	// Maps behind read locks rather than sync.Map: a sync.Map key is an
	// interface, and boxing a struct key allocates on every lookup.
	pmu        sync.RWMutex
	principals map[capability.Principal]types.Entity
	lmu        sync.RWMutex
	limiters   map[limiterKey]*rate.Limiter
	shared     map[limiterKey]*sharedBucket
	scratch    sync.Pool
	// plainCedar makes every decision with cedar.Authorize over the
	// candidate policies and a built context, without the memo's plans and
	// native conditions: the reference the differential tests compare the
	// fast path with.
	plainCedar bool
}

// capEntry is a capability with what decisions precompute about it.
type capEntry struct {
	// What every decision reads comes first, in two cache lines; the
	// record and what only some decisions read follow.
	//
	// trustProblem and blockedProblem are the deny messages of the first
	// two checks, empty when they pass.
	trustProblem, blockedProblem string
	manifest                     *constraint.Compiled
	attrs                        types.Record // the capability entity's attributes
	tiers                        uint8        // bit i: tier Ti may invoke
	// registered: enabled capability of an enabled, unblocked skill.
	registered bool
	// approval: a call needs a grant (needsApproval).
	approval bool
	ref      string
	uids     [3]types.EntityUID // capability, skill, extension
	Capability
}

// snapshot is everything a decision reads. It is never modified after
// it is published.
type snapshot struct {
	caps      []capEntry
	byRef     map[capability.Ref]int32
	entities  map[types.EntityUID]types.Entity
	policies  *PolicySet
	ix        *index
	tierCount [5]int // registered capabilities each tier may invoke
	scopes    sync.Map
	memo      decisionMemo
}

// delegation is a registered sub-agent.
type delegation struct {
	child     capability.Principal
	parent    capability.Principal
	forwarded map[capability.Ref]struct{}
}

// New returns an engine with no capabilities and the default policies.
// Call [Engine.Reload] to load policies and grants.
func New(opts *Options) *Engine {
	e := &Engine{}
	if opts != nil {
		e.opts = *opts
	}
	e.scratch.New = func() any { return new(scratch) }
	e.principals = map[capability.Principal]types.Entity{}
	e.limiters = map[limiterKey]*rate.Limiter{}
	e.shared = map[limiterKey]*sharedBucket{}
	e.log = e.opts.Logger
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.now = e.opts.Now
	if e.now == nil {
		e.now = time.Now
	}
	s, _ := buildSnapshot(nil, DefaultPolicies())
	e.snap.Store(s)
	e.deleg.Store(&map[string]*delegation{})
	e.grants.Store(&[]*grantEntry{})
	return e
}

// Reload reads the policy files and stored policies and the stored grants,
// then publishes a new snapshot. On error nothing changes.
func (e *Engine) Reload(ctx context.Context) error {
	var ps PolicyStore
	if e.opts.Store != nil {
		ps = e.opts.Store
	}
	set, err := LoadPolicies(ctx, e.opts.PolicyDir, ps)
	if err != nil {
		return err
	}
	if err := e.SetPolicies(set); err != nil {
		return err
	}
	return e.reloadGrants(ctx)
}

// LoadCapabilities replaces the capability records with src's.
func (e *Engine) LoadCapabilities(ctx context.Context, src CapabilitySource) error {
	caps, err := src.Capabilities(ctx)
	if err != nil {
		return fmt.Errorf("load capabilities: %w", err)
	}
	return e.SetCapabilities(caps)
}

// SetCapabilities replaces the capability records and publishes a new
// snapshot. Records are validated; a malformed or duplicate one is an
// error wrapping [ErrInvalidCapability] and nothing changes.
func (e *Engine) SetCapabilities(caps []Capability) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, err := buildSnapshot(caps, e.snap.Load().policies)
	if err != nil {
		return err
	}
	e.snap.Store(s)
	return nil
}

// SetPolicies replaces the policy set and publishes a new snapshot.
func (e *Engine) SetPolicies(set *PolicySet) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.snap.Load()
	caps := make([]Capability, len(old.caps))
	for i := range old.caps {
		caps[i] = old.caps[i].Capability
	}
	s, err := buildSnapshot(caps, set)
	if err != nil {
		return err
	}
	e.snap.Store(s)
	return nil
}

// Policies returns the policy set in effect.
func (e *Engine) Policies() *PolicySet { return e.snap.Load().policies }

func buildSnapshot(caps []Capability, set *PolicySet) (*snapshot, error) {
	s := &snapshot{
		caps:     make([]capEntry, len(caps)),
		byRef:    make(map[capability.Ref]int32, len(caps)),
		entities: make(map[types.EntityUID]types.Entity, len(caps)*2),
		policies: set,
		ix:       newIndex(set),
	}
	compiled := compiledSets{}
	for i, c := range caps {
		if err := validateCapability(c); err != nil {
			return nil, fmt.Errorf("capability %d (%s): %w", i, c.Ref(), err)
		}
		if j, dup := s.byRef[c.Ref()]; dup {
			return nil, fmt.Errorf("%w: %s is declared twice (records %d and %d); a skill's capability references must be unique", ErrInvalidCapability, c.Ref(), j, i)
		}
		m, err := compiled.compile(c.Constraints)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: constraints: %w", ErrInvalidCapability, c.Ref(), err)
		}
		ce := &s.caps[i]
		ce.Capability = c
		ce.Capability.InvokableBy = slices.Clone(c.InvokableBy)
		ce.ref = c.Ref().String()
		ce.manifest = m
		for _, t := range c.InvokableBy {
			ce.tiers |= 1 << tierLevel(t)
		}
		if c.ApprovedTrust != "" && c.ApprovedTrust != c.SkillTrust {
			ce.trustProblem = fmt.Sprintf("skill %q is served as %s but its manifest was approved as %s; approve it again for its new trust", c.SkillKey, c.SkillTrust, c.ApprovedTrust)
		}
		switch {
		case c.SkillState == SkillBlocked:
			ce.blockedProblem = fmt.Sprintf("skill %q is blocked; complete its missing metadata and approve it", c.SkillKey)
		case c.BlockedByDrift:
			ce.blockedProblem = fmt.Sprintf("%s is blocked: the live tool no longer matches its approved definition; review the drift and approve it again", ce.ref)
		}
		ce.approval = c.needsApproval()
		ce.registered = c.Enabled && c.SkillState == SkillEnabled && ce.trustProblem == "" && ce.blockedProblem == ""
		capE, skillE, extE := capabilityEntities(&c)
		ce.uids = [3]types.EntityUID{capE.UID, skillE.UID, extE.UID}
		ce.attrs = capE.Attributes
		s.entities[capE.UID] = capE
		s.entities[skillE.UID] = skillE
		s.entities[extE.UID] = extE
		s.byRef[c.Ref()] = int32(i)
		if ce.registered {
			for t := range s.tierCount {
				if ce.tiers&(1<<t) != 0 {
					s.tierCount[t]++
				}
			}
		}
	}
	return s, nil
}

// compiledSets shares one compiled form between the capabilities of a
// snapshot whose constraints are equal (the tools of a skill often declare
// the same ones): less memory, and a decision reads a compiled form other
// calls keep in the CPU's caches. Compiled forms are immutable.
type compiledSets map[string]*constraint.Compiled

func (cs compiledSets) compile(set constraint.Set) (*constraint.Compiled, error) {
	key, err := json.Marshal(set) // struct fields in order, map keys sorted
	if err != nil {
		return set.Compile()
	}
	if c, ok := cs[string(key)]; ok {
		return c, nil
	}
	c, err := set.Compile()
	if err == nil {
		cs[string(key)] = c
	}
	return c, err
}

func validateCapability(c Capability) error {
	if err := c.Ref().Validate(); err != nil {
		return err
	}
	switch {
	case !c.SkillTrust.Valid():
		return fmt.Errorf("%w: trust %q: use core, first_party or imported", ErrInvalidCapability, c.SkillTrust)
	case c.ApprovedTrust != "" && !c.ApprovedTrust.Valid():
		return fmt.Errorf("%w: approvedTrust %q: use core, first_party or imported", ErrInvalidCapability, c.ApprovedTrust)
	case !c.RiskLevel.Valid():
		return fmt.Errorf("%w: riskLevel %q: use read, write or destructive", ErrInvalidCapability, c.RiskLevel)
	case !c.SideEffects.Valid():
		return fmt.Errorf("%w: sideEffects %q: use none, internal or external", ErrInvalidCapability, c.SideEffects)
	case !c.DataEgress.Valid():
		return fmt.Errorf("%w: dataEgress %q: use none or network", ErrInvalidCapability, c.DataEgress)
	}
	if _, err := capability.ParseCallApproval(string(c.Approval)); err != nil {
		return fmt.Errorf("%w: approval: %w", ErrInvalidCapability, err)
	}
	for _, t := range c.InvokableBy {
		if tierLevel(t) < 0 {
			return fmt.Errorf("%w: invokableBy %q: use T0 to T4", ErrInvalidCapability, t)
		}
	}
	return nil
}
