package install

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Completion is an operator's risk metadata for one capability.
type Completion struct {
	// Capability is "serverId/tool".
	Capability string `json:"capability"`
	// RiskLevel, SideEffects and DataEgress set the fields given (empty
	// leaves a field as it is).
	RiskLevel   string `json:"riskLevel,omitempty"`
	SideEffects string `json:"sideEffects,omitempty"`
	DataEgress  string `json:"dataEgress,omitempty"`
	// Why is the operator's explanation, at least MinWhyLength characters.
	Why string `json:"why"`
	// Force allows a value below what the server declared; it is flagged.
	Force bool `json:"force,omitempty"`
}

func checkWhy(flag, why string) error {
	if n := utf8.RuneCountInString(strings.TrimSpace(why)); n < MinWhyLength {
		return fmt.Errorf("%w: %s must explain the decision in at least %d characters (got %d): it is kept in the install report and the audit log for whoever reviews this later", ErrUsage, flag, MinWhyLength, n)
	}
	return nil
}

// Complete stores operator-supplied risk metadata for one capability of a
// blocked or awaiting install (or of the re-analysis of an approved one
// after drift), with its explanation, and re-evaluates the verdict.
func (s *Service) Complete(ctx context.Context, name string, c Completion, actor string) (*Review, error) {
	if err := checkWhy("--why", c.Why); err != nil {
		return nil, err
	}
	if c.RiskLevel == "" && c.SideEffects == "" && c.DataEgress == "" {
		return nil, fmt.Errorf("%w: give at least one of --risk, --side-effects, --egress", ErrUsage)
	}
	if c.RiskLevel != "" && !capability.RiskLevel(c.RiskLevel).Valid() {
		return nil, fmt.Errorf("%w: --risk %q: use read, write or destructive", ErrUsage, c.RiskLevel)
	}
	if c.SideEffects != "" && !capability.SideEffects(c.SideEffects).Valid() {
		return nil, fmt.Errorf("%w: --side-effects %q: use none, internal or external", ErrUsage, c.SideEffects)
	}
	if c.DataEgress != "" && !capability.DataEgress(c.DataEgress).Valid() {
		return nil, fmt.Errorf("%w: --egress %q: use none or network", ErrUsage, c.DataEgress)
	}
	in, unlock, err := s.lockVersion(ctx, name, actionFrom[ActionComplete]...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rep, post, err := decidedReport(in, ActionComplete)
	if err != nil {
		return nil, err
	}
	var cr *manifest.CapabilityReport
	for i := range rep.Capabilities {
		if rep.Capabilities[i].Name() == c.Capability {
			cr = &rep.Capabilities[i]
		}
	}
	if cr == nil {
		names := make([]string, 0, len(rep.Capabilities))
		for _, x := range rep.Capabilities {
			names = append(names, x.Name())
		}
		return nil, fmt.Errorf("%w: %s has no capability %q (write it as serverId/tool); it has: %s", ErrUsage, in.Key, c.Capability, strings.Join(names, ", "))
	}
	now := s.now().UTC()
	for _, f := range []struct {
		field, value, server string
		src                  capability.Source
		cmp                  func() int
	}{
		{"riskLevel", c.RiskLevel, string(cr.ServerRisk.RiskLevel.Value), cr.ServerRisk.RiskLevel.Source,
			func() int { return capability.RiskLevel(c.RiskLevel).Compare(cr.ServerRisk.RiskLevel.Value) }},
		{"sideEffects", c.SideEffects, string(cr.ServerRisk.SideEffects.Value), cr.ServerRisk.SideEffects.Source,
			func() int { return capability.SideEffects(c.SideEffects).Compare(cr.ServerRisk.SideEffects.Value) }},
		{"dataEgress", c.DataEgress, string(cr.ServerRisk.DataEgress.Value), cr.ServerRisk.DataEgress.Source,
			func() int { return capability.DataEgress(c.DataEgress).Compare(cr.ServerRisk.DataEgress.Value) }},
	} {
		if f.value == "" {
			continue
		}
		o := manifest.Override{Capability: c.Capability, Field: f.field, Value: f.value, ServerValue: f.server, ServerSource: f.src,
			Why: strings.TrimSpace(c.Why), By: actor, At: now}
		if f.server != "" && f.cmp() < 0 {
			if !c.Force {
				return nil, fmt.Errorf("%w: %s %s=%s is below what the server declared (%s, from %s); pass --force if you are sure, and the report will flag it", ErrUsage, c.Capability, f.field, f.value, f.server, f.src)
			}
			o.Forced = true
		}
		rep.Overrides = append(rep.Overrides, o)
	}
	finish(rep)
	if post {
		return s.commitPending(ctx, in, rep, actor, "complete", "operator completed "+c.Capability+": "+strings.TrimSpace(c.Why),
			map[string]any{"capability": c.Capability})
	}
	proposed, err := proposedManifest(in, rep)
	if err != nil {
		return nil, err
	}
	return s.commitVerdict(ctx, in, rep, proposed, actor, "complete")
}

// Approve approves an install: the proposed capabilities, or only those
// named, each of which must have complete risk metadata and no problem.
// Their tools are pinned (definition digest plus server name and version)
// and manifest.json is written. For an approved install blocked by drift,
// Approve accepts the re-analysis made by Recheck instead.
func (s *Service) Approve(ctx context.Context, name string, only []string, actor string) (*Review, error) {
	return s.ApproveWith(ctx, name, ApproveOptions{Only: only}, actor)
}

// ApproveWith is [Service.Approve] with what else the operator approves:
// the skills the install's servers publish through the MCP Skills
// extension are approved with the capabilities (every verified one, bound
// to its resource set), and o names the dynamic ones to allow and the ones
// whose allowed-tools to honour; both are recorded in the manifest and the
// approval's audit record.
func (s *Service) ApproveWith(ctx context.Context, name string, o ApproveOptions, actor string) (*Review, error) {
	only := o.Only
	in, unlock, err := s.lockVersion(ctx, name, actionFrom[ActionApprove]...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if in.State.Approved() {
		return s.reapprove(ctx, in, o, actor)
	}
	rep, err := manifest.ParseReport(in.Report)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	names := rep.Proposal.Capabilities
	if len(only) > 0 {
		names = only
	} else if rep.Validation.Blocked {
		return nil, fmt.Errorf("%w: %s: %s", ErrBlocked, in.Key, strings.Join(rep.Validation.Reasons, "; "))
	}
	if err := checkBackends(s.executorCatalog(), in.Key, filepath.Join(in.Dir, SkillDir), rep); err != nil {
		return nil, err
	}
	m, mraw, rraw, err := s.approvedArtefacts(ctx, in, rep, names, o, actor)
	if err != nil {
		return nil, err
	}
	why := fmt.Sprintf("approved %d %s", len(m.Capabilities), plural.Noun(len(m.Capabilities), "capability", "capabilities"))
	if len(only) > 0 {
		why += " (only " + strings.Join(m.Approval.Only, ", ") + ")"
	}
	if n := len(m.PublishedSkills); n > 0 {
		why += fmt.Sprintf(" and %d published %s", n, plural.Noun(n, "skill", "skills"))
	}
	if n := len(rep.Settings); n > 0 {
		why += fmt.Sprintf(", with the operator's settings for %d", n)
	}
	data := map[string]any{"capabilities": names}
	addSkillData(data, m)
	if len(rep.Settings) > 0 {
		data["settings"] = rep.Settings
	}
	// Approving a new version of a skill already approved is consent to
	// what changed: the record names the comparison the operator saw.
	prev, err := s.previous(ctx, in, rep)
	if err != nil {
		return nil, err
	}
	if prev != nil {
		data["consent"] = map[string]any{"previous": prev.Digest, "diffDigest": prev.DiffDigest, "filesOnly": prev.FilesOnly}
		why += ", consenting to the changes since " + prev.Digest
	}
	rev, err := s.commit(ctx, "approve", transition{Digest: in.Digest, From: []store.InstallState{in.State}, To: store.StateInstalled,
		Actor: actor, Reason: why, Change: store.InstallChange{Manifest: &mraw, Report: &rraw}, Data: data})
	if err == nil {
		s.addReference(ctx, in)
	}
	return rev, err
}

// selectReady checks that every named capability exists and is ready, and
// returns the pins of their tools per server.
func (s *Service) selectReady(in store.Install, rep *manifest.Report, names []string) (map[string]capability.PinSet, error) {
	byName := map[string]manifest.CapabilityReport{}
	for _, c := range rep.Capabilities {
		byName[c.Name()] = c
	}
	tools := map[string][]string{}
	var notReady []string
	for _, n := range names {
		c, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("%w: %s has no capability %q (write it as serverId/tool; see skillgate review %s)", ErrUsage, in.Key, n, in.Key)
		}
		if c.Status != manifest.StatusReady {
			notReady = append(notReady, fmt.Sprintf("%s (%s)", n, strings.Join(c.Blockers, "; ")))
			continue
		}
		tools[c.ExtensionID] = append(tools[c.ExtensionID], c.CapabilityID)
	}
	if len(notReady) > 0 {
		return nil, fmt.Errorf("%w: %s: %d %s cannot be approved: %s; run skillgate complete %s CAPABILITY … for missing metadata, or leave them out with --only",
			ErrBlocked, in.Key, len(notReady), plural.Noun(len(notReady), "capability", "capabilities"), strings.Join(notReady, "; "), in.Key)
	}
	pins := map[string]capability.PinSet{}
	for _, sr := range rep.Servers {
		if t, ok := tools[sr.ServerID]; ok {
			if sr.Pins == nil {
				return nil, fmt.Errorf("%w: %s: server %s has no pins", ErrBlocked, in.Key, sr.ServerID)
			}
			sel := sr.Pins.Select(t...)
			if len(sel.Tools) != len(t) {
				return nil, fmt.Errorf("%w: %s: some tools of %s could not be pinned; see their problems in skillgate review %s", ErrBlocked, in.Key, sr.ServerID, in.Key)
			}
			pins[sr.ServerID] = sel
		}
	}
	return pins, nil
}

// reapprove accepts the re-analysis of an approved install blocked by drift.
func (s *Service) reapprove(ctx context.Context, in store.Install, o ApproveOptions, actor string) (*Review, error) {
	only := o.Only
	if len(in.Blocked) == 0 && len(o.Settings) > 0 {
		return s.resettle(ctx, in, o, actor)
	}
	if err := ActionApprove.check(in); err != nil {
		return nil, err
	}
	old, err := manifest.Parse(in.Manifest)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	oldRep, err := manifest.ParseReport(in.Report)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	rep, err := manifest.ParseReport(in.Pending)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	live := map[string]bool{}
	for _, c := range rep.Capabilities {
		live[c.Name()] = true
	}
	var names []string
	if len(only) > 0 {
		names = only
	} else {
		for _, c := range old.Capabilities {
			if live[c.Name()] {
				names = append(names, c.Name())
			}
		}
	}
	rep.Drift = oldRep.Drift
	m, mraw, rraw, err := s.approvedArtefacts(ctx, in, rep, names, o, actor)
	if err != nil {
		return nil, err
	}
	none := json.RawMessage(nil)
	empty := map[string]string{}
	data := map[string]any{"capabilities": names}
	addSkillData(data, m)
	if len(rep.Settings) > 0 {
		data["settings"] = rep.Settings
	}
	return s.commit(ctx, "approve", transition{Digest: in.Digest, From: []store.InstallState{in.State}, To: in.State,
		Actor: actor, Reason: fmt.Sprintf("re-approved %d capabilities and %d published skills after drift", len(m.Capabilities), len(m.PublishedSkills)), Action: "install.approve",
		Change: store.InstallChange{Manifest: &mraw, Report: &rraw, Pending: &none, Blocked: &empty}, Data: data})
}

// resettle changes the operator's settings ([ApproveOptions.Settings]) of
// an approved version that drift does not block: the same capabilities,
// pins and tool names, approved again with the new constraints and call
// approval defaults, in the state it was in (an enabled skill's calls are
// decided by them from the next reload).
func (s *Service) resettle(ctx context.Context, in store.Install, o ApproveOptions, actor string) (*Review, error) {
	if len(o.Only) > 0 || len(o.AllowDynamic) > 0 || len(o.AllowTools) > 0 {
		return nil, fmt.Errorf("%w: %s is already approved: only its settings (--constraints, --approval) can change; install it again to approve other capabilities or skills", ErrUsage, in.Key)
	}
	old, err := manifest.Parse(in.Manifest)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	rep, err := manifest.ParseReport(in.Report)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	names := make([]string, 0, len(old.Capabilities))
	for _, c := range old.Capabilities {
		names = append(names, c.Name())
	}
	o.Only = old.Approval.Only
	for _, p := range old.PublishedSkills {
		if p.DynamicAllowed {
			o.AllowDynamic = append(o.AllowDynamic, p.Ref())
		}
		if p.ToolsApproved {
			o.AllowTools = append(o.AllowTools, p.Ref())
		}
	}
	m, mraw, rraw, err := s.approvedArtefacts(ctx, in, rep, names, o, actor)
	if err != nil {
		return nil, err
	}
	data := map[string]any{"capabilities": names, "settings": rep.Settings}
	addSkillData(data, m)
	return s.commit(ctx, "approve", transition{Digest: in.Digest, From: []store.InstallState{in.State}, To: in.State,
		Actor: actor, Reason: fmt.Sprintf("settings of %d %s changed", len(o.Settings), plural.Noun(len(o.Settings), "capability", "capabilities")), Action: "install.approve",
		Change: store.InstallChange{Manifest: &mraw, Report: &rraw}, Data: data})
}

// Reject rejects an install that is not approved, with the operator's
// explanation. Its files stay until it is removed or installed again.
func (s *Service) Reject(ctx context.Context, name, why, actor string) (*Review, error) {
	if err := checkWhy("--why", why); err != nil {
		return nil, err
	}
	in, unlock, err := s.lockVersion(ctx, name, actionFrom[ActionReject]...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.commit(ctx, "reject", transition{Digest: in.Digest, From: actionFrom[ActionReject], To: store.StateRejected,
		Actor: actor, Reason: strings.TrimSpace(why)})
}

// Enable enables an installed or disabled version; the version of the same
// skill enabled before, if any, is disabled in the same transaction.
func (s *Service) Enable(ctx context.Context, name, actor string) (*Review, error) {
	// Enabling the enabled version changes nothing.
	in, unlock, err := s.lockVersion(ctx, name, append(slices.Clone(actionFrom[ActionEnable]), store.StateEnabled)...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if in.State == store.StateEnabled {
		return s.review(ctx, in)
	}
	ts := []transition{}
	others, err := s.st.Installs(ctx, store.InstallFilter{Key: in.Key, States: []store.InstallState{store.StateEnabled}})
	if err != nil {
		return nil, err
	}
	for _, o := range others {
		ts = append(ts, transition{Digest: o.Digest, From: []store.InstallState{store.StateEnabled}, To: store.StateDisabled,
			Actor: actor, Reason: "replaced by version " + in.Digest})
	}
	ts = append(ts, transition{Digest: in.Digest, From: actionFrom[ActionEnable],
		To: store.StateEnabled, Actor: actor, Reason: "enabled by the operator"})
	out, err := s.transition(ctx, "enable", ts...)
	if err != nil {
		return nil, err
	}
	s.queuePromotions(ctx, in.Key, actor)
	return s.review(ctx, out[len(out)-1])
}

// Disable disables an enabled version.
func (s *Service) Disable(ctx context.Context, name, actor string) (*Review, error) {
	// Disabling a disabled version changes nothing.
	in, unlock, err := s.lockVersion(ctx, name, append(slices.Clone(actionFrom[ActionDisable]), store.StateDisabled)...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if in.State == store.StateDisabled {
		return s.review(ctx, in)
	}
	return s.commit(ctx, "disable", transition{Digest: in.Digest, From: actionFrom[ActionDisable],
		To: store.StateDisabled, Actor: actor, Reason: "disabled by the operator"})
}

// Remove removes a version in any state but removed, and deletes its files.
func (s *Service) Remove(ctx context.Context, name, actor string) (*Review, error) {
	unlock, err := s.storage.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	all := []store.InstallState{}
	for _, st := range store.InstallStates {
		if st != store.StateRemoved {
			all = append(all, st)
		}
	}
	in, err := s.resolve(ctx, name, all...)
	if err != nil {
		return nil, err
	}
	out, err := s.transition(ctx, "remove", transition{Digest: in.Digest, From: all, To: store.StateRemoved,
		Actor: actor, Reason: "removed by the operator"})
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(in.Dir); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return s.review(ctx, out[0])
}

// approvedArtefacts pins the approved capabilities names of in (rep is its
// install report, updated with the pins) and renders the approved manifest
// and the report: what an approval commits.
func (s *Service) approvedArtefacts(ctx context.Context, in store.Install, rep *manifest.Report, names []string, o ApproveOptions, actor string) (*manifest.Manifest, json.RawMessage, json.RawMessage, error) {
	only := o.Only
	if r := contentReason(in.Key, blockingFindings(rep)); r != "" {
		// The content blocks the whole skill, in a first approval and in a
		// re-approval after drift alike: --only cannot leave it out.
		return nil, nil, nil, fmt.Errorf("%w: %s: %s", ErrBlocked, in.Key, r)
	}
	pins, err := s.selectReady(in, rep, names)
	if err != nil {
		return nil, nil, nil, err
	}
	published, err := selectPublished(in.Key, rep, o)
	if err != nil {
		return nil, nil, nil, err
	}
	rep.Pins = pins
	rep.Layers = layers(rep, true)
	m := buildManifest(in, rep, names, pins)
	m.PublishedSkills = published
	addSkillProviders(m, rep)
	if err := s.applySettings(ctx, in, rep, m, o.Settings, actor); err != nil {
		return nil, nil, nil, err
	}
	if h := rep.Proposal.PolicyHints; len(h) > 0 && string(h) != "[]" && string(h) != "null" {
		m.DefaultPolicyHints = h
	}
	if err := s.nameTools(ctx, in, m); err != nil {
		return nil, nil, nil, err
	}
	m.Approval = &manifest.Approval{By: actor, At: s.now().UTC(), Trust: capability.TrustImported}
	if len(only) > 0 {
		m.Approval.Only = append([]string{}, names...)
		sort.Strings(m.Approval.Only)
	}
	if err := m.Validate(true); err != nil {
		return nil, nil, nil, err
	}
	mj, err := manifest.Marshal(m)
	if err != nil {
		return nil, nil, nil, err
	}
	rj, err := manifest.Marshal(rep)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, json.RawMessage(mj), json.RawMessage(rj), nil
}

// nameTools fixes the tool names agents will see m's capabilities under
// (capability.AssignToolNames): a name an earlier approved version of the
// same skill had is kept; a name another approved skill (enabled or not)
// or the gateway holds is not taken. The caller holds the storage lock,
// so two approvals never pick the same name.
func (s *Service) nameTools(ctx context.Context, in store.Install, m *manifest.Manifest) error {
	rows, err := s.st.Installs(ctx, store.InstallFilter{States: store.ApprovedStates})
	if err != nil {
		return err
	}
	holders := map[string]string{}
	if s.held != nil {
		held, err := s.held(ctx)
		if err != nil {
			return fmt.Errorf("install: the tool names first_party skills hold: %w", err)
		}
		for n, h := range held {
			holders[n] = h
		}
	}
	keep := map[string]string{}
	for _, r := range rows { // newest first
		old, err := manifest.Parse(r.Manifest)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrStorage, r.Key, err)
		}
		for _, c := range old.Capabilities {
			n := c.ToolName
			if r.Key == in.Key {
				if _, ok := keep[c.Name()]; !ok && n != "" {
					keep[c.Name()] = n
				}
				continue
			}
			if n == "" {
				n = c.CapabilityID // approved before names were fixed
			}
			if _, ok := holders[n]; !ok {
				holders[n] = r.Key
			}
		}
	}
	refs := make([]capability.Ref, 0, len(m.Capabilities))
	for _, c := range m.Capabilities {
		refs = append(refs, capability.Ref{Skill: in.Key, ExtensionID: c.ExtensionID, CapabilityID: c.CapabilityID})
	}
	got := capability.AssignToolNames(in.Key, refs, keep, func(n string) string { return holders[n] })
	for i := range m.Capabilities {
		a := got[m.Capabilities[i].Name()]
		if a.Name == "" {
			return fmt.Errorf("%w: %s: no free tool name for %s", ErrState, in.Key, m.Capabilities[i].Name())
		}
		m.Capabilities[i].ToolName, m.Capabilities[i].ToolNameReason = a.Name, a.Reason
	}
	return nil
}

// decidedReport is the report an operator's decision about in changes:
// its own before approval, and after it the re-analysis that drift
// brought, which waits for re-approval (post). a is the decision; its
// check refuses it when there is no such re-analysis.
func decidedReport(in store.Install, a Action) (rep *manifest.Report, post bool, err error) {
	post = in.State.Approved()
	if err := a.check(in); err != nil {
		return nil, post, err
	}
	src := in.Report
	if post {
		src = in.Pending
	}
	if rep, err = manifest.ParseReport(src); err != nil {
		return nil, post, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	return rep, post, nil
}

// commitPending records rep as in's pending re-analysis, changed by an
// operator's decision at point (complete, suppress), audited as
// install.POINT with why and data.
func (s *Service) commitPending(ctx context.Context, in store.Install, rep *manifest.Report, actor, point, why string, data map[string]any) (*Review, error) {
	b, err := manifest.Marshal(rep)
	if err != nil {
		return nil, err
	}
	pj := json.RawMessage(b)
	return s.commit(ctx, point, transition{Digest: in.Digest, From: []store.InstallState{in.State}, To: in.State,
		Actor: actor, Reason: why, Action: "install." + point, Change: store.InstallChange{Pending: &pj}, Data: data})
}
