package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// PolicyDecider is the [Decider] backed by the policy engine: scopes come
// from [policy.Engine.Scope], decisions from [policy.Engine.Evaluate].
// It keeps no scope cache of its own: the engine caches each principal's
// scope per policy snapshot, so new policies, capabilities or delegations
// take effect without anyone telling the decider.
type PolicyDecider struct {
	Engine *policy.Engine
	// Logger receives capability sets the engine refuses; nil discards.
	Logger *slog.Logger
	// Reload, when set, is called before answering require_approval, and
	// the call is decided again: a grant a human just added from another
	// process (the CLI) takes effect at once. It runs only on that path.
	Reload func(context.Context) error

	parents sync.Map   // child principal ID → parent principal ID
	mu      sync.Mutex // serialises SetCapabilities
	index   atomic.Pointer[capIndex]
}

// capIndex finds the capabilities of the last set given to
// SetCapabilities; it is replaced, never modified.
type capIndex struct {
	byID map[string]*Capability // "skill:ext/cap" → the capability
	// byName holds the capabilities offered under each tool name: one,
	// unless names collide after namespacing (then the last in scope wins).
	byName map[string][]*Capability
}

var _ Decider = (*PolicyDecider)(nil)

// NewPolicyDecider returns a decider over e.
func NewPolicyDecider(e *policy.Engine) *PolicyDecider {
	d := &PolicyDecider{Engine: e}
	d.index.Store(&capIndex{})
	return d
}

// SetCapabilities implements [Decider]: every capability the broker offers
// becomes a policy.Capability of an enabled skill, with the trust it is
// served at and the trust its manifest was approved for, named with its
// skill ("notes:fs/write_file"): two skills that both declare a server "fs"
// with a tool write_file offer two capabilities, each with its own
// metadata, scope, policies and grants.
func (d *PolicyDecider) SetCapabilities(caps []*Capability) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ix := &capIndex{byID: make(map[string]*Capability, len(caps)), byName: make(map[string][]*Capability, len(caps))}
	for _, c := range caps {
		ix.byID[c.ID()] = c
		ix.byName[c.Name] = append(ix.byName[c.Name], c)
	}
	pcs := policyRecords(caps)
	if err := d.Engine.SetCapabilities(pcs); err != nil {
		// A capability the engine refuses must not become callable.
		if d.Logger != nil {
			d.Logger.Error("policy refused the installed capabilities; none is callable until this is fixed", "err", err)
		}
		_ = d.Engine.SetCapabilities(nil)
	}
	d.index.Store(ix)
}

// PolicyCapabilities returns the policy records of the skills' offered
// capabilities (approved, not blocked), exactly as the gateway hands them
// to the policy engine: what `skillgate policy test` decides against.
func PolicyCapabilities(skills []Skill) []policy.Capability {
	snap, _ := build(skills)
	return policyRecords(snap.caps)
}

// policyRecords converts capabilities to policy records, one per
// skill:extension/capability (should a skill declare one twice, policy sees
// it once with the most severe metadata of the two).
func policyRecords(caps []*Capability) []policy.Capability {
	merged := map[string]int{}
	var pcs []policy.Capability
	for _, c := range caps {
		pc := toPolicy(c)
		if i, ok := merged[c.ID()]; ok {
			pcs[i] = moreSevere(pcs[i], pc)
			continue
		}
		merged[c.ID()] = len(pcs)
		pcs = append(pcs, pc)
	}
	return pcs
}

func toPolicy(c *Capability) policy.Capability {
	mc := c.Capability
	tiers := make([]skill.AgentTier, 0, len(c.InvokableBy))
	for _, t := range c.InvokableBy {
		tiers = append(tiers, skill.AgentTier(t))
	}
	pc := policy.Capability{
		SkillKey: c.Skill, SkillTrust: orImported(c.Trust), ApprovedTrust: orImported(c.ApprovedTrust),
		SkillTier: c.SkillTier, InvokableBy: tiers, SkillState: policy.SkillEnabled,
		ExtensionID: mc.ExtensionID, CapabilityID: mc.CapabilityID, Enabled: true,
		RiskLevel:   mc.Risk.RiskLevel.Value,
		SideEffects: mc.Risk.SideEffects.Value,
		DataEgress:  mc.Risk.DataEgress.Value,
		Approval:    mc.CallApproval,
	}
	if c.Tool != nil {
		// The pinned input schema the broker checks calls against.
		if raw, ok := c.Tool.InputSchema.(json.RawMessage); ok {
			pc.InputSchema = raw
		}
	}
	if len(mc.Constraints) > 0 {
		if set, err := constraint.Parse(mc.Constraints); err == nil {
			pc.Constraints = set
		} else {
			// Approved constraints that no longer parse allow nothing.
			pc.SkillState = policy.SkillBlocked
		}
	}
	return pc
}

// moreSevere merges two records of one capability, keeping the more
// severe value of each risk field by the one order of package capability
// (where a value outside its set ranks above every known one).
func moreSevere(a, b policy.Capability) policy.Capability {
	if b.RiskLevel.Compare(a.RiskLevel) > 0 {
		a.RiskLevel = b.RiskLevel
	}
	if b.SideEffects.Compare(a.SideEffects) > 0 {
		a.SideEffects = b.SideEffects
	}
	if b.DataEgress.Compare(a.DataEgress) > 0 {
		a.DataEgress = b.DataEgress
	}
	if b.SkillState != policy.SkillEnabled {
		a.SkillState = b.SkillState
	}
	a.Approval = a.Approval.Stricter(b.Approval)
	return a
}

// principal is p as policy sees it: with the parent [PolicyDecider.Delegate]
// registered when p is a sub-agent, and never a parent the caller set.
func (d *PolicyDecider) principal(p capability.Principal) capability.Principal {
	p.Parent = ""
	if parent, ok := d.parents.Load(p.ID()); ok {
		p.Parent = parent.(string)
	}
	return p
}

// Delegate makes child a sub-agent of parent that may use the forwarded
// capabilities ("skill:extension/capability", or "extension/capability"
// when only one installed skill offers it: see
// [policy.Engine.ResolveCapability]; a short form no skill offers is
// dropped, an ambiguous one is an error), within parent's scope: see
// [policy.Engine.Delegate]. A forward outside the parent's scope is
// dropped, never an error; the child's tier may not be above the
// parent's. Both principals must be well formed
// ([capability.Principal.Validate]). It returns the child's resulting scope.
func (d *PolicyDecider) Delegate(parent, child capability.Principal, forwarded []string) (policy.Scope, error) {
	if err := parent.Validate(); err != nil {
		return policy.Scope{}, fmt.Errorf("parent %s/%s: %w", parent.Tenant, parent.Agent, err)
	}
	if err := child.Validate(); err != nil {
		return policy.Scope{}, err
	}
	refs := make([]capability.Ref, 0, len(forwarded))
	for _, f := range forwarded {
		r, err := d.Engine.ResolveCapability(f)
		if errors.Is(err, policy.ErrNoSuchCapability) {
			continue // could not be in the parent's scope either
		}
		if err != nil {
			return policy.Scope{}, err
		}
		refs = append(refs, r)
	}
	pc := child
	pc.Parent = d.principal(parent).ID()
	scope, err := d.Engine.Delegate(d.principal(parent), pc, refs)
	if err != nil {
		return policy.Scope{}, err
	}
	d.parents.Store(pc.ID(), pc.Parent)
	return scope, nil
}

// Scope implements [Decider]: the capabilities of p's policy scope, in
// the engine's order.
func (d *PolicyDecider) Scope(p capability.Principal) []*Capability {
	scope, err := d.Engine.Scope(d.principal(p))
	if err != nil {
		return nil
	}
	ix := d.index.Load()
	out := make([]*Capability, 0, len(scope.Entries))
	for _, e := range scope.Entries {
		if c := ix.byID[e.Ref.String()]; c != nil {
			out = append(out, c)
		}
	}
	return out
}

// Find implements [Decider]: the capability offered as name, when it is
// in p's policy scope.
func (d *PolicyDecider) Find(p capability.Principal, name string) *Capability {
	cands := d.index.Load().byName[name]
	if len(cands) == 0 {
		return nil
	}
	scope, err := d.Engine.Scope(d.principal(p))
	if err != nil {
		return nil
	}
	for i := len(cands) - 1; i >= 0; i-- {
		if scope.Contains(cands[i].Ref()) {
			return cands[i]
		}
	}
	return nil
}

// Decide implements [Decider].
func (d *PolicyDecider) Decide(ctx context.Context, p capability.Principal, sessionID string, c *Capability, args map[string]any) Decision {
	ctx = policy.WithSession(ctx, sessionID)
	pp := d.principal(p)
	ref := c.Ref()
	pd := d.Engine.Evaluate(ctx, pp, ref, args)
	if pd.Effect == capability.RequireApproval && d.Reload != nil {
		if err := d.Reload(ctx); err == nil {
			pd = d.Engine.Evaluate(ctx, pp, ref, args)
		}
	}
	out := Decision{Reasons: make([]string, 0, len(pd.Reasons)), Told: make([]string, 0, len(pd.Reasons)), Policy: pd.Reasons}
	for _, r := range pd.Reasons {
		out.Reasons = append(out.Reasons, reasonText(r))
		out.Told = append(out.Told, reasonText(withoutHostPath(r)))
		if r.Kind == policy.ReasonGrant && r.Grant != "" && pd.Effect == capability.Allow {
			id, eng := r.Grant, d.Engine
			out.Release = func(ctx context.Context) error { return eng.ReleaseGrant(ctx, id) }
		}
	}
	switch out.Effect = pd.Effect; out.Effect {
	case capability.Allow:
	case capability.RequireApproval:
		out.Approve, _ = d.Engine.GrantCommand(pp, ref)
	default:
		out.Effect = capability.Deny // fail closed on anything else
	}
	return out
}

// reasonText renders a policy reason as one line naming what decided.
func reasonText(r policy.Reason) string {
	var who []string
	if r.Policy != "" {
		who = append(who, "policy "+r.Policy)
	}
	if r.Position != "" && r.Position != r.Policy {
		who = append(who, r.Position)
	}
	if r.Constraint != "" {
		c := "constraint " + r.Constraint
		if r.Arg != "" {
			c += " on " + r.Arg
		}
		who = append(who, c)
	}
	if r.Grant != "" {
		who = append(who, "grant "+r.Grant)
	}
	if len(who) == 0 {
		return r.Message
	}
	return r.Message + " [" + strings.Join(who, ", ") + "]"
}

// withoutHostPath returns r as an agent may see it: a policy from a file
// is named by its id and, where that id is the file position (no @id), by
// the file's name and line, never by its directory on the host; the
// position is left out. Operators get the full position from reasonText
// in the audit record.
func withoutHostPath(r policy.Reason) policy.Reason {
	file := r.Position
	if i := strings.LastIndexByte(file, ':'); i > 0 {
		file = file[:i]
	}
	if dir := filepath.Dir(file); !strings.HasPrefix(file, "store:") && dir != "." {
		dir += string(filepath.Separator)
		r.Policy = strings.ReplaceAll(r.Policy, dir, "")
		r.Message = strings.ReplaceAll(r.Message, dir, "")
	}
	r.Position = ""
	return r
}

// InScope reports whether c is in p's policy scope, without listing the
// scope: the executor resolver asks it for each backend of a call.
func (d *PolicyDecider) InScope(p capability.Principal, c *Capability) bool {
	scope, err := d.Engine.Scope(d.principal(p))
	return err == nil && scope.Contains(c.Ref())
}
