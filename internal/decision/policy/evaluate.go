package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
)

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
	acct, hasAcct := ctx.Value(accountKey{}).(string)
	sc.env = callEnv{args: args, principal: mv.attrs, resource: ce.attrs, sid: sid, hasSID: hasSID, exec: exec, hasExec: hasExec, acct: acct, hasAcct: hasAcct}
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
	acct, hasAcct := ctx.Value(accountKey{}).(string)
	var keyBuf [maxContextKey]byte
	key, cacheable := set.contexts.key(keyBuf[:0], set, args, delegated, sid, hasSID, exec, hasExec, acct, hasAcct)
	if cacheable {
		if r, ok := set.contexts.get(key); ok {
			return r
		}
	}
	r := buildContext(args, delegated, sid, hasSID, exec, hasExec, acct, hasAcct, set)
	if cacheable {
		set.contexts.put(string(key), r)
	}
	return r
}

func buildContext(args map[string]any, delegated bool, sid string, hasSID bool, exec string, hasExec bool, acct string, hasAcct bool, set *PolicySet) types.Record {
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
	if hasAcct {
		m["account"] = types.String(acct)
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
	if c.Approval == capability.CallApprovalAlways {
		w = append(w, "approved to need a grant for every call")
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
