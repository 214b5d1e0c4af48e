package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cedar "github.com/cedar-policy/cedar-go"
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
	for _, t := range c.InvokableBy {
		if tierLevel(t) < 0 {
			return fmt.Errorf("%w: invokableBy %q: use T0 to T4", ErrInvalidCapability, t)
		}
	}
	return nil
}

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

// limiterKey identifies a token bucket.
type limiterKey struct {
	principal string
	ref       string
	rate      constraint.Rate
}

// Evaluate decides whether principal may invoke the capability ref (which
// names its skill) with args. The checks run in the documented order and
// the first failure decides; a passing call that needs approval consumes
// one use of a matching grant (named in a [ReasonGrant] reason; give it
// back with [Engine.ReleaseGrant] when the call is not relayed after all),
// and every passing call takes a rate-limit token.
func (e *Engine) Evaluate(ctx context.Context, p capability.Principal, ref capability.Ref, args map[string]any) Decision {
	return e.evaluate(ctx, p, ref, args, false)
}

// Test is Evaluate without side effects: it takes no rate-limit token and
// consumes no grant use (a usable grant is named in the reasons). It is
// what `skillgate policy test` and POST /v1/policy/test run.
func (e *Engine) Test(ctx context.Context, p capability.Principal, ref capability.Ref, args map[string]any) Decision {
	return e.evaluate(ctx, p, ref, args, true)
}

func deny(kind ReasonKind, msg string) Decision {
	return Decision{Effect: capability.Deny, Reasons: []Reason{{Kind: kind, Message: msg}}}
}

func (e *Engine) evaluate(ctx context.Context, p capability.Principal, ref capability.Ref, args map[string]any, dry bool) Decision {
	if err := p.Validate(); err != nil {
		return deny(ReasonEmptyScope, err.Error())
	}
	s := e.snap.Load()
	var chainArr [MaxDelegationDepth + 1]capability.Principal
	var delArr [MaxDelegationDepth + 1]*delegation
	n, problem := e.chain(p, &chainArr, &delArr)
	idx, known := s.byRef[ref]
	var ce *capEntry
	if known {
		ce = &s.caps[idx]
		// 1. trust mismatch, 2. blocked skill.
		if ce.trustProblem != "" {
			return deny(ReasonTrust, ce.trustProblem)
		}
		if ce.blockedProblem != "" {
			return deny(ReasonBlocked, ce.blockedProblem)
		}
	}
	// 3. empty scope.
	if problem != "" {
		return deny(ReasonEmptyScope, problem)
	}
	chain, dels := chainArr[:n], delArr[:n]
	if s.tierCount[tierLevel(p.Tier)] == 0 || dels[0] != nil && len(dels[0].forwarded) == 0 {
		return deny(ReasonEmptyScope, fmt.Sprintf("%s has an empty capability scope: no enabled capability is invokable by %s", p.ID(), scopeWho(p, dels[0])))
	}
	// 4. capability out of scope.
	if !known || !inScope(ce, chain, dels) {
		return deny(ReasonOutOfScope, fmt.Sprintf("%s is not in the capability scope of %s", ref, p.String()))
	}
	// 5. Cedar, for the principal and every ancestor.
	var reasons, evalErrs []Reason
	var permits [MaxDelegationDepth + 1][]cedar.DiagnosticReason
	var permitPols [MaxDelegationDepth + 1][]*Policy // when known, the policies of permits
	sc := e.scratch.Get().(*scratch)
	defer func() {
		sc.fb = cedarFallback{}
		sc.env = callEnv{}
		e.scratch.Put(sc)
	}()
	var ctxRecord types.Record
	ctxBuilt := false
	for i := range chain {
		var dec cedar.Decision
		var diag cedar.Diagnostic
		var pols []*Policy
		if n == 1 && !e.plainCedar {
			// Without a delegation chain, the pair's plan is kept per
			// snapshot (memo.go).
			dec, diag, pols = e.authorizeMemo(ctx, s, sc, p, idx, ce, args)
		} else {
			if i == 0 {
				for j := range chain {
					sc.ents[j] = e.principalEntity(chain[j])
				}
				sc.view = entityView{snap: s, chain: sc.ents[:n]}
			}
			s.ix.candidates(&sc.cand, sc.ents[i].UID, &ce.uids)
			if !ctxBuilt && sc.cand.usesContext() {
				ctxRecord = requestContext(ctx, args, dels[0] != nil, s.policies)
				ctxBuilt = true
			}
			dec, diag = cedar.Authorize(&sc.cand, &sc.view, cedar.Request{Principal: sc.ents[i].UID, Action: ActionInvoke, Resource: ce.uids[0], Context: ctxRecord})
		}
		if dec != cedar.Allow {
			return e.cedarDeny(s, chain[i], p, ref, diag)
		}
		if len(diag.Errors) > 0 {
			// skillgate's rule on top of Cedar: a forbid that could not be
			// evaluated denies (Cedar skips it and would allow); the other
			// failures are listed with the allow.
			failed, forbidFailed := e.evalErrors(s, chain[i], p, diag.Errors)
			if forbidFailed {
				return Decision{Effect: capability.Deny, Reasons: failed}
			}
			evalErrs = append(evalErrs, failed...)
		}
		permits[i], permitPols[i] = diag.Reasons, pols
	}
	policyOf := func(i, j int) *Policy {
		if permitPols[i] != nil {
			return permitPols[i][j]
		}
		return s.policies.byID[permits[i][j].PolicyID]
	}
	// 6. typed constraints: the manifest's and the deciding permits'.
	var violations []Reason
	for _, v := range ce.manifest.Check(args) {
		violations = append(violations, Reason{Kind: ReasonConstraint, Policy: "manifest", Constraint: v.Constraint, Arg: v.Arg, Message: v.Message})
	}
	lim := ce.manifest.Rate()
	for i := range chain {
		for j := range permits[i] {
			pol := policyOf(i, j)
			if pol == nil || pol.compiled == nil {
				continue
			}
			for _, v := range pol.compiled.Check(args) {
				violations = append(violations, Reason{Kind: ReasonConstraint, Policy: pol.ID, Position: pol.Position, Constraint: v.Constraint, Arg: v.Arg, Message: v.Message})
			}
			lim = stricter(lim, pol.compiled.Rate())
		}
	}
	if len(violations) > 0 {
		return Decision{Effect: capability.Deny, Reasons: violations}
	}
	// 7. rate limit, for the principal and every ancestor.
	if !lim.IsZero() {
		for i := range chain {
			ok, err := e.allowRate(ctx, limiterKey{chain[i].ID(), ce.ref, lim}, dry)
			if err != nil {
				e.log.Warn("policy: rate-limit store failed; call denied", "principal", chain[i].ID(), "capability", ref.String(), "err", err)
				return deny(ReasonRateLimit, fmt.Sprintf("the rate limit of %s on %s could not be checked; retry later", lim, ref))
			}
			if !ok {
				return deny(ReasonRateLimit, fmt.Sprintf("%s exceeded the rate limit of %s on %s; retry later", chain[i].ID(), lim, ref))
			}
		}
	}
	// One allocation for the reasons: the permits, the failures, and the
	// approval or grant.
	nr := len(evalErrs)
	if ce.approval {
		nr++
	}
	for i := range chain {
		nr += len(permits[i])
	}
	reasons = make([]Reason, 0, nr)
	for i := range chain {
		for j := range permits[i] {
			pol := policyOf(i, j)
			msg := pol.permitMsg
			if i > 0 {
				msg += " for ancestor " + chain[i].ID()
			}
			reasons = append(reasons, Reason{Kind: ReasonPolicy, Policy: pol.ID, Position: pol.Position, Message: msg})
		}
	}
	reasons = append(reasons, evalErrs...)
	// 8. approval.
	if ce.approval {
		g, err := e.useGrant(ctx, p, ce, args, dry)
		if err != nil || g == nil {
			// The message reaches the agent: it says a human must approve,
			// never the command that approves (an agent with a shell on
			// the host could run it). GrantCommand gives it to operators.
			msg := fmt.Sprintf("%s is %s: a human must approve it", ref, riskWords(&ce.Capability))
			if err != nil {
				msg += "; the grant store failed: " + err.Error()
			}
			return Decision{Effect: capability.RequireApproval, Reasons: append(reasons, Reason{Kind: ReasonApproval, Message: msg})}
		}
		verb := "used"
		if dry {
			verb = "would use"
		}
		reasons = append(reasons, Reason{Kind: ReasonGrant, Grant: g.ID, Message: fmt.Sprintf("%s grant %s (%s)", verb, g.ID, g.usesText())})
	}
	return Decision{Effect: capability.Allow, Reasons: reasons}
}

func scopeWho(p capability.Principal, d *delegation) string {
	if d != nil {
		return "it: nothing in scope was delegated to it"
	}
	return string(p.Tier)
}

// scratch is the per-decision state that Cedar's interfaces would
// otherwise make escape to the heap, reused through a pool.
type scratch struct {
	cand candidates
	view entityView
	ents [MaxDelegationDepth + 1]types.Entity
	env  callEnv
	fb   cedarFallback
	out  outcomes
}

// authorizeMemo is cedar.Authorize over the candidate policies of p (who
// has no delegation chain) invoking ce, from the pair's plan (memo.go),
// built on its first call on the snapshot; with the policies of the
// diagnostic's reasons.
func (e *Engine) authorizeMemo(ctx context.Context, s *snapshot, sc *scratch, p capability.Principal, idx int32, ce *capEntry, args map[string]any) (cedar.Decision, cedar.Diagnostic, []*Policy) {
	sc.fb = cedarFallback{e: e, ctx: ctx, s: s, sc: sc, p: p, ce: ce, args: args}
	mv, ok := s.memo.lookup(p, idx)
	if !ok {
		sc.fb.entities()
		s.ix.candidates(&sc.cand, sc.ents[0].UID, &ce.uids)
		mv = s.memo.add(&sc.cand, &sc.view, cedar.Request{Principal: sc.ents[0].UID, Action: ActionInvoke, Resource: ce.uids[0]}, p, idx, sc.ents[0].Attributes)
	}
	if mv.plan.fixed {
		return mv.plan.dec, mv.plan.diag, mv.plan.pols
	}
	sid, hasSID := ctx.Value(sessionKey{}).(string)
	exec, hasExec := ctx.Value(executorKey{}).(string)
	sc.env = callEnv{args: args, principal: mv.attrs, resource: ce.attrs, sid: sid, hasSID: hasSID, exec: exec, hasExec: hasExec}
	return mv.plan.run(&sc.env, &sc.fb, &sc.out)
}

// cedarFallback evaluates single policies with Cedar for a plan's run,
// building the principal's entity and the Cedar context on first use.
type cedarFallback struct {
	e    *Engine
	ctx  context.Context
	s    *snapshot
	sc   *scratch
	p    capability.Principal
	ce   *capEntry
	args map[string]any

	haveEnts, haveReq bool
	req               cedar.Request
}

// entities puts the principal's entity and the view in the scratch.
func (f *cedarFallback) entities() {
	if f.haveEnts {
		return
	}
	f.sc.ents[0] = f.e.principalEntity(f.p)
	f.sc.view = entityView{snap: f.s, chain: f.sc.ents[:1]}
	f.haveEnts = true
}

func (f *cedarFallback) authorizeOne(pol *Policy) (cedar.Decision, cedar.Diagnostic) {
	f.entities()
	if !f.haveReq {
		f.req = cedar.Request{Principal: f.sc.ents[0].UID, Action: ActionInvoke, Resource: f.ce.uids[0],
			Context: requestContext(f.ctx, f.args, false, f.s.policies)}
		f.haveReq = true
	}
	return cedar.Authorize(single{pol.ID, pol.cedar}, &f.sc.view, f.req)
}

// cedarDeny turns a Cedar deny into a decision naming the forbids, or the
// absence of a permit.
func (e *Engine) cedarDeny(s *snapshot, who, p capability.Principal, ref capability.Ref, diag cedar.Diagnostic) Decision {
	var reasons []Reason
	suffix := ""
	if who != p {
		suffix = " for ancestor " + who.ID()
	}
	for _, r := range diag.Reasons {
		msg := "forbidden by " + string(r.PolicyID)
		pos := posString(r.Position)
		if pol := s.policies.byID[r.PolicyID]; pol != nil {
			msg, pos = pol.forbidMsg, pol.Position
		}
		reasons = append(reasons, Reason{Kind: ReasonPolicy, Policy: string(r.PolicyID), Position: pos, Message: msg + suffix})
	}
	if len(reasons) == 0 {
		msg := "no policy permits " + who.ID() + " to invoke " + ref.String() + " (Cedar denies by default)"
		if s.policies.Len() == 0 {
			msg += "; the policy set is empty"
		}
		reasons = append(reasons, Reason{Kind: ReasonPolicy, Message: msg})
	}
	for _, er := range diag.Errors {
		reasons = append(reasons, Reason{Kind: ReasonPolicy, Policy: string(er.PolicyID), Position: posString(er.Position),
			Message: "policy " + string(er.PolicyID) + " failed to evaluate and was skipped: " + er.Message})
	}
	slices.SortStableFunc(reasons, func(a, b Reason) int { return strings.Compare(a.Policy, b.Policy) })
	return Decision{Effect: capability.Deny, Reasons: reasons}
}

// evalErrors words the policies that failed to evaluate for who, and says
// whether one of them is a forbid: then every forbid that failed is a deny
// reason (failed holds only those), otherwise failed lists the skipped
// permits.
func (e *Engine) evalErrors(s *snapshot, who, p capability.Principal, errs []cedar.DiagnosticError) (failed []Reason, forbidFailed bool) {
	suffix := ""
	if who != p {
		suffix = " for ancestor " + who.ID()
	}
	for _, er := range errs {
		if pol := s.policies.byID[er.PolicyID]; pol != nil && pol.Effect == "forbid" {
			if !forbidFailed {
				failed, forbidFailed = failed[:0], true
			}
			failed = append(failed, Reason{Kind: ReasonPolicy, Policy: string(er.PolicyID), Position: posString(er.Position),
				Message: "forbid " + string(er.PolicyID) + " failed to evaluate (" + er.Message + "); skillgate denies a call that a forbid cannot rule on" + suffix})
			continue
		}
		if !forbidFailed {
			failed = append(failed, Reason{Kind: ReasonPolicy, Policy: string(er.PolicyID), Position: posString(er.Position),
				Message: "policy " + string(er.PolicyID) + " failed to evaluate and was skipped: " + er.Message + suffix})
		}
	}
	return failed, forbidFailed
}

func posString(p cedar.Position) string {
	if p.Line == 0 {
		return p.Filename
	}
	return fmt.Sprintf("%s:%d", p.Filename, p.Line)
}

// requestContext builds the Cedar context. Only the arguments some policy
// of set reads are converted (all of them when a policy reads
// context.args as a whole), which gives the same decisions as converting
// everything.
func requestContext(ctx context.Context, args map[string]any, delegated bool, set *PolicySet) types.Record {
	sid, hasSID := ctx.Value(sessionKey{}).(string)
	exec, hasExec := ctx.Value(executorKey{}).(string)
	var keyBuf [maxContextKey]byte
	key, cacheable := set.contexts.key(keyBuf[:0], set, args, delegated, sid, hasSID, exec, hasExec)
	if cacheable {
		if r, ok := set.contexts.get(key); ok {
			return r
		}
	}
	r := buildContext(args, delegated, sid, hasSID, exec, hasExec, set)
	if cacheable {
		set.contexts.put(string(key), r)
	}
	return r
}

func buildContext(args map[string]any, delegated bool, sid string, hasSID bool, exec string, hasExec bool, set *PolicySet) types.Record {
	var a types.Record
	if set.fullArgs {
		a = argsValue(args, 0)
	} else {
		m := make(types.RecordMap, min(len(args), len(set.argNames)))
		for k, v := range args {
			if _, read := set.argNames[k]; !read {
				continue
			}
			if cv, ok := cedarValue(v, 1); ok {
				m[types.String(k)] = cv
			}
		}
		a = types.NewRecord(m)
	}
	m := types.RecordMap{"args": a}
	if delegated {
		m["delegated"] = types.True
	}
	if hasSID {
		m["session"] = types.String(sid)
	}
	if hasExec {
		m["executor"] = types.String(exec)
	}
	return types.NewRecord(m)
}

func stricter(a, b constraint.Rate) constraint.Rate {
	switch {
	case a.IsZero():
		return b
	case b.IsZero():
		return a
	case b.PerSecond() < a.PerSecond() || b.PerSecond() == a.PerSecond() && b.N < a.N:
		return b
	}
	return a
}

func riskWords(c *Capability) string {
	var w []string
	if c.RiskLevel == capability.RiskDestructive {
		w = append(w, "destructive")
	}
	if c.SideEffects == capability.SideEffectsExternal {
		w = append(w, "externally side-effecting")
	}
	if c.DataEgress == capability.EgressNetwork {
		w = append(w, "sending data over the network")
	}
	return strings.Join(w, ", ")
}

func grantLevel(r capability.RiskLevel) capability.RiskLevel {
	if r == "" {
		return capability.RiskRead
	}
	return r
}

// GrantCommand is the command line an operator runs to approve one call
// of ref by p: a one-use grant at the capability's risk level. It is for
// operators (logs, the audit record, `skillgate pending`), never for the
// agent that asked. ok is false when ref is not a known capability.
func (e *Engine) GrantCommand(p capability.Principal, ref capability.Ref) (cmd string, ok bool) {
	s := e.snap.Load()
	i, known := s.byRef[ref]
	if !known {
		return "", false
	}
	return "skillgate grant add " + shellWord(p.ID()) + " " + shellWord(ref.String()) + " --level " + string(grantLevel(s.caps[i].RiskLevel)) + " --uses 1 --reason '…'", true
}

// shellWord quotes s for a POSIX shell unless it is made of characters
// that need no quoting.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
