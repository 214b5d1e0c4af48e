package install

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Promotions is what finding and checking promote_provider changes reads
// of the installs: the executor catalog with the registered executors, the
// provider skills with their tools, and who serves what already.
type Promotions struct {
	Catalog *executor.Catalog
	Skills  []promote.Skill
	Serving promote.Serving
	// States holds each skill's state (its newest version's).
	States map[string]store.InstallState
}

// PromotionInputs reads what [promote.Detect] and [promote.Validate] need:
// every approved skill with its approved, unblocked tools, and skill
// trigger (when not "") with every tool its analysis found, whatever its
// state. reg are the registrations of applied changes.
func (s *Service) PromotionInputs(ctx context.Context, trigger string, reg []store.Registration) (*Promotions, error) {
	cat, err := promote.Catalog(executor.Builtin(), reg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	all, err := s.st.Installs(ctx, store.InstallFilter{})
	if err != nil {
		return nil, err
	}
	p := &Promotions{Catalog: cat, Serving: promote.Serving{Providers: map[string][]string{}, Mapped: map[string]bool{}}, States: map[string]store.InstallState{}}
	seen := map[string]bool{}
	for _, in := range all { // newest first
		if seen[in.Key] {
			continue
		}
		approved := in.State.Approved()
		if !approved && in.Key != trigger {
			continue
		}
		if in.Key == trigger && !approved && in.State != store.StateAwaitingApproval && in.State != store.StateBlocked {
			continue
		}
		seen[in.Key] = true
		p.States[in.Key] = in.State
		if len(in.Report) == 0 {
			continue
		}
		rep, err := manifest.ParseReport(in.Report)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
		}
		sk := promote.Skill{Key: in.Key, Servers: map[string]capability.RedactedServer{}}
		for _, sv := range rep.Servers {
			sk.Servers[sv.ServerID] = sv.Declaration
		}
		for _, c := range rep.Capabilities {
			if approved {
				pins, ok := rep.Pins[c.ExtensionID]
				if _, pinned := pins.Lookup(c.CapabilityID); !ok || !pinned {
					continue
				}
				if _, blocked := in.Blocked[c.ExtensionID+"/"+c.CapabilityID]; blocked {
					continue
				}
			}
			sk.Tools = append(sk.Tools, c.Tool)
		}
		if data, err := os.ReadFile(filepath.Join(in.Dir, SkillDir, executor.BackendsFileName)); err == nil {
			if bf, err := executor.ParseBackends(in.Key+"/"+executor.BackendsFileName, data, cat); err == nil {
				sk.Provider = bf.Provider
				for _, d := range bf.Backends {
					p.Serving.Providers[d.Executor] = append(p.Serving.Providers[d.Executor], bf.Provider)
					p.Serving.Mapped[in.Key+":"+d.Server+"/"+d.Tool] = true
				}
			}
		}
		p.Skills = append(p.Skills, sk)
	}
	for _, r := range reg {
		for _, b := range r.Backends {
			if !slices.Contains(p.Serving.Providers[r.Executor], b.Provider) {
				p.Serving.Providers[r.Executor] = append(p.Serving.Providers[r.Executor], b.Provider)
			}
			p.Serving.Mapped[b.Skill+":"+b.Server+"/"+b.Tool] = true
		}
	}
	for k := range p.Serving.Providers {
		slices.Sort(p.Serving.Providers[k])
	}
	return p, nil
}

// queuePromotions queues the promote_provider changes that key's tools
// make (see package promote) in the changes queue, if the service has one.
// Finding none, or one already queued or decided, queues nothing. A
// failure is logged: it never fails the install or enable that found it.
func (s *Service) queuePromotions(ctx context.Context, key, actor string) {
	if s.changes == nil {
		return
	}
	if err := s.queuePromotionsErr(ctx, key, actor); err != nil {
		s.log.WarnContext(ctx, "install: promote_provider detection failed", "key", key, "err", err)
	}
}

func (s *Service) queuePromotionsErr(ctx context.Context, key, actor string) error {
	reg, err := s.changes.Registrations(ctx)
	if err != nil {
		return err
	}
	in, err := s.PromotionInputs(ctx, key, reg)
	if err != nil {
		return err
	}
	props, groups := promote.DetectAll(in.Catalog, in.Skills, key, in.Serving)
	if s.drafter != nil && len(groups) > 0 {
		asked, err := s.draftedBefore(ctx)
		if err != nil {
			return err
		}
		for _, g := range groups {
			if asked[groupKey(g.Executor, g.Offers)] {
				continue // a change of these tools was queued already: do not ask again
			}
			p, err := s.drafter.Draft(ctx, g)
			if err != nil {
				s.log.WarnContext(ctx, "install: promote_provider draft failed", "executor", g.Executor, "trigger", key, "err", err)
				continue
			}
			v, err := promote.Validate(in.Catalog, p, in.Skills, in.Serving)
			if err != nil {
				s.log.InfoContext(ctx, "install: promote_provider draft refused", "executor", g.Executor, "drafter", p.Drafter, "err", err)
				continue
			}
			props = append(props, v)
		}
	}
	for _, p := range props {
		doc, err := json.Marshal(p)
		if err != nil {
			return err
		}
		why := fmt.Sprintf("found when %s was %s", key, in.States[key])
		data, _ := json.Marshal(map[string]any{"kind": store.ChangePromoteProvider, "executor": p.Executor.Name, "drafter": p.Drafter, "evidence": p.Evidence})
		c, created, err := s.changes.QueueChange(ctx, store.Change{Kind: store.ChangePromoteProvider, Key: p.Key(), Subject: p.Executor.Name,
			Summary: p.Summary(), Proposal: doc, QueuedBy: actor, Why: why},
			store.AuditRecord{Actor: actor, Action: "change.queue", Reasons: append([]string{why}, p.Evidence...), Data: data}, audit.SealStored)
		if err != nil {
			return err
		}
		if created {
			s.log.InfoContext(ctx, "install: promote_provider change queued", "change", c.ID, "executor", p.Executor.Name, "drafter", p.Drafter, "trigger", key)
		}
	}
	return nil
}

// draftedBefore returns the keys (groupKey) of the tool groups that
// promote_provider changes already propose, whatever became of them.
func (s *Service) draftedBefore(ctx context.Context) (map[string]bool, error) {
	cs, err := s.changes.Changes(ctx, store.ChangeFilter{Kind: store.ChangePromoteProvider})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, c := range cs {
		var p promote.Proposal
		if json.Unmarshal(c.Proposal, &p) != nil {
			continue
		}
		var offers []promote.Offer
		for _, b := range p.Backends {
			offers = append(offers, promote.Offer{Provider: b.Provider, Skill: b.Skill, Server: b.Server, Tool: capability.Tool{CapabilityID: b.Tool}})
		}
		out[groupKey(p.Executor.Name, offers)] = true
	}
	return out, nil
}

// groupKey names an executor and the tools offered for it.
func groupKey(executor string, offers []promote.Offer) string {
	parts := make([]string, 0, len(offers))
	for _, o := range offers {
		parts = append(parts, o.Provider+"="+o.Skill+":"+o.Server+"/"+o.Tool.CapabilityID)
	}
	slices.Sort(parts)
	return executor + " " + strings.Join(parts, " ")
}
