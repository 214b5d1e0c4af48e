package install

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Recheck introspects an install's servers again. Before approval it is a
// new analysis (the proposer runs again). After approval it compares the
// live tools with the approved pins: added, removed or changed tools block
// the affected capabilities, and the new definitions wait for re-approval.
// The proposer is never called for an approved version.
func (s *Service) Recheck(ctx context.Context, name, actor string) (*Review, error) {
	return s.RecheckWith(ctx, name, actor, Introspection{})
}

// RecheckWith is [Service.Recheck] with what the operator allows the servers
// (see [Introspection]). An approved skill's servers run exactly as calls
// run them: their credentials, the run-time sandbox (Options.Runtime) with
// their state directory, grants and limits, and the network only where the
// approved manifest declares network egress.
func (s *Service) RecheckWith(ctx context.Context, name, actor string, intro Introspection) (*Review, error) {
	in, unlock, err := s.lockVersion(ctx, name, actionFrom[ActionRecheck]...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if slices.Contains(preApproval, in.State) {
		return s.analyzeLocked(ctx, in, actor, "recheck requested", intro)
	}
	old, err := manifest.ParseReport(in.Report)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	m, err := manifest.Parse(in.Manifest)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	rep, err := s.analyze(ctx, in, &old.Proposal, intro, m)
	if err != nil {
		return nil, err
	}
	rep.Overrides = old.Overrides
	finish(rep)
	var records []manifest.DriftRecord
	blocked := map[string]string{}
	for k, v := range in.Blocked {
		blocked[k] = v
	}
	for _, sr := range rep.Servers {
		approved, ok := old.Pins[sr.ServerID]
		publishes := slices.ContainsFunc(m.PublishedSkills, func(p manifest.PublishedSkill) bool { return p.ServerID == sr.ServerID })
		if !ok && !publishes {
			continue
		}
		if sr.Error != nil {
			return nil, fmt.Errorf("%w: recheck of %s: server %s failed (%s): %s; nothing changed", ErrBlocked, in.Key, sr.ServerID, sr.Error.Phase, sr.Error.Message)
		}
		var d capability.Drift
		if ok {
			d = dropKnown(capability.Diff(approved, *sr.Pins), old, sr.ServerID)
		}
		sd := skillDrift(sr.ServerID, m.PublishedSkills, rep.PublishedSkills, sr.SkillsError)
		if d.Empty() && len(sd) == 0 {
			continue
		}
		rec := manifest.DriftRecord{ServerID: sr.ServerID, At: s.now().UTC(), By: actor, Drift: d, Blocked: []string{}}
		if !d.Empty() {
			rec = s.driftRecord(sr.ServerID, d, m, actor)
			for _, c := range rec.Blocked {
				blocked[c] = "drift: " + driftReason(d, c)
			}
		}
		for _, x := range sd {
			rec.Blocked = append(rec.Blocked, x.Skill)
			blocked[x.Skill] = "drift: " + x.Reason
		}
		rec.Skills = sd
		records = append(records, rec)
	}
	if len(records) == 0 {
		if len(in.Blocked) == 0 {
			return s.review(ctx, in)
		}
		// Blocked earlier (by the gateway, or an earlier recheck): keep the
		// fresh definitions for the operator to re-approve.
		pj, err := manifest.Marshal(rep)
		if err != nil {
			return nil, err
		}
		praw := json.RawMessage(pj)
		out, err := s.transition(ctx, "recheck", transition{Digest: in.Digest, From: []store.InstallState{in.State}, To: in.State,
			Actor: actor, Reason: "recheck found no new drift; the current definitions await re-approval", Action: "install.recheck",
			Change: store.InstallChange{Pending: &praw}})
		if err != nil {
			return nil, err
		}
		return s.review(ctx, out[0])
	}
	old.Drift = append(old.Drift, records...)
	rep.Drift = old.Drift
	oj, err := manifest.Marshal(old)
	if err != nil {
		return nil, err
	}
	pj, err := manifest.Marshal(rep)
	if err != nil {
		return nil, err
	}
	oraw, praw := json.RawMessage(oj), json.RawMessage(pj)
	return s.commit(ctx, "drift", transition{Digest: in.Digest, From: []store.InstallState{in.State}, To: in.State,
		Actor: actor, Reason: fmt.Sprintf("recheck found drift; %d capabilities blocked until re-approved", len(blocked)), Action: "install.drift",
		Change: store.InstallChange{Report: &oraw, Pending: &praw, Blocked: &blocked}, Data: map[string]any{"blocked": keys(blocked)}})
}

// dropKnown removes from d's added tools those introspected at analysis and
// deliberately left out of the approval: they are not new.
func dropKnown(d capability.Drift, rep *manifest.Report, serverID string) capability.Drift {
	return d.Omit(leftOut(rep, serverID))
}

// leftOut lists the tools of serverID that the analysis behind rep
// introspected and the approval (rep.Pins) did not pin, sorted.
func leftOut(rep *manifest.Report, serverID string) []string {
	approved := rep.Pins[serverID]
	var out []string
	for _, sr := range rep.Servers {
		if sr.ServerID != serverID || sr.Pins == nil {
			continue
		}
		for _, n := range sr.Pins.Names() {
			if _, ok := approved.Lookup(n); !ok {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (s *Service) driftRecord(serverID string, d capability.Drift, m *manifest.Manifest, actor string) manifest.DriftRecord {
	affected := map[string]bool{}
	for _, n := range d.Affected() {
		affected[n] = true
	}
	rec := manifest.DriftRecord{ServerID: serverID, At: s.now().UTC(), By: actor, Drift: d, Blocked: []string{}}
	for _, c := range m.Capabilities {
		if c.ExtensionID == serverID && (affected[c.CapabilityID] || d.Server != nil) {
			rec.Blocked = append(rec.Blocked, c.Name())
		}
	}
	return rec
}

func driftReason(d capability.Drift, capability string) string {
	tool := capability[strings.IndexByte(capability, '/')+1:]
	for _, c := range d.Changed {
		if c.Name == tool {
			fields := make([]string, len(c.Fields))
			for i, f := range c.Fields {
				fields[i] = f.Field
			}
			return "definition changed (" + strings.Join(fields, ", ") + ")"
		}
	}
	if slices.Contains(d.Removed, tool) {
		return "no longer offered by the server"
	}
	if d.Server != nil {
		return fmt.Sprintf("server %s changed from %s to %s", d.Server.Field, d.Server.Before, d.Server.After)
	}
	return "tool list changed"
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// RecordDrift records drift the gateway saw on a live connection (at
// reconnect or on tools/list_changed) to server serverID of the enabled (or
// installed, or disabled) version of skill key: the affected approved
// capabilities are blocked until re-approved, in one transaction with its
// audit record. Drift that touches no approved capability is recorded too.
func (s *Service) RecordDrift(ctx context.Context, key, serverID string, d capability.Drift, actor string) error {
	if d.Empty() {
		return nil
	}
	unlock, err := s.storage.lock()
	if err != nil {
		return err
	}
	defer unlock()
	in, err := s.served(ctx, key)
	if err != nil {
		return err
	}
	rep, err := manifest.ParseReport(in.Report)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	m, err := manifest.Parse(in.Manifest)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	d = dropKnown(d, rep, serverID)
	if d.Empty() {
		return nil
	}
	rec := s.driftRecord(serverID, d, m, actor)
	rep.Drift = append(rep.Drift, rec)
	blocked := map[string]string{}
	for k, v := range in.Blocked {
		blocked[k] = v
	}
	for _, c := range rec.Blocked {
		blocked[c] = "drift: " + driftReason(d, c)
	}
	rj, err := manifest.Marshal(rep)
	if err != nil {
		return err
	}
	raw := json.RawMessage(rj)
	_, err = s.transition(ctx, "drift", transition{Digest: in.Digest, From: []store.InstallState{in.State}, To: in.State,
		Actor: actor, Reason: fmt.Sprintf("drift on %s: %d capabilities blocked until re-approved", serverID, len(rec.Blocked)), Action: "install.drift",
		Change: store.InstallChange{Report: &raw, Blocked: &blocked}, Data: map[string]any{"server": serverID, "blocked": rec.Blocked}})
	return err
}
