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
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// Promotions is what finding and checking promote_provider changes reads
// of the installs and the shipped provider skills: the executor catalog
// with the registered executors, the provider skills with their tools,
// and who serves what already.
type Promotions struct {
	Catalog *executor.Catalog
	Skills  []promote.Skill
	Serving promote.Serving
	// States holds each install's state (its newest version's); a shipped
	// skill, served without an install, is StateEnabled.
	States map[string]store.InstallState
	// Shipped holds the keys of the shipped (first_party) skills.
	Shipped map[string]bool
}

// ShippedProvider is a provider skill served without an install: a
// first_party skill of a first_party root, signed and scanned, whose
// shipped manifest.json lists its tools (the app reads them as the
// gateway does, broker.ReadFirstParty).
type ShippedProvider struct {
	Key string
	// Servers are its mcp.json's declarations of the manifest's servers.
	Servers map[string]capability.RedactedServer
	// Tools are the manifest's capabilities as tools: server id, tool
	// name, description and input schema.
	Tools []capability.Tool
	// Backends is its backends.yaml, nil when it ships none.
	Backends []byte
	// Dir is its directory, Digest its content digest, and Decls its
	// servers as declared: what a smoke check starts
	// ([Service.ShippedLiveTools]).
	Dir    string
	Digest string
	Decls  map[string]mcpclient.ServerDecl
}

// PromotionInputs reads what [promote.Detect] and [promote.Validate] need:
// every shipped provider skill (Options.Shipped) with its tools, every
// approved install with its approved, unblocked tools, and skill trigger
// (when not "") with every tool its analysis found, whatever its state. A
// shipped skill shadows an install of the same key, as in the registry.
// reg are the registrations of applied changes.
func (s *Service) PromotionInputs(ctx context.Context, trigger string, reg []store.Registration) (*Promotions, error) {
	cat, err := promote.Catalog(s.executorCatalog(), reg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	p := &Promotions{Catalog: cat, Serving: promote.Serving{Providers: map[string][]string{}, Mapped: map[string]bool{}},
		States: map[string]store.InstallState{}, Shipped: map[string]bool{}}
	seen := map[string]bool{}
	if s.shipped != nil {
		shipped, err := s.shipped(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: shipped provider skills: %w", ErrStorage, err)
		}
		for _, sp := range shipped {
			if seen[sp.Key] {
				continue
			}
			seen[sp.Key], p.Shipped[sp.Key], p.States[sp.Key] = true, true, store.StateEnabled
			sk := promote.Skill{Key: sp.Key, Servers: sp.Servers, Tools: sp.Tools}
			if sk.Servers == nil {
				sk.Servers = map[string]capability.RedactedServer{}
			}
			p.addBackends(&sk, sp.Backends)
			p.Skills = append(p.Skills, sk)
		}
	}
	all, err := s.st.Installs(ctx, store.InstallFilter{})
	if err != nil {
		return nil, err
	}
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
			p.addBackends(&sk, data)
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

// addBackends records what sk's backends file (data, nil for none) serves:
// its provider becomes sk's, and its backends serve their executors. A
// file that does not parse serves nothing (it is refused at install and
// when the gateway builds).
func (p *Promotions) addBackends(sk *promote.Skill, data []byte) {
	if data == nil {
		return
	}
	bf, err := executor.ParseBackends(sk.Key+"/"+executor.BackendsFileName, data, p.Catalog)
	if err != nil {
		return
	}
	sk.Provider = bf.Provider
	for _, d := range bf.Backends {
		if !slices.Contains(p.Serving.Providers[d.Executor], bf.Provider) {
			p.Serving.Providers[d.Executor] = append(p.Serving.Providers[d.Executor], bf.Provider)
		}
		p.Serving.Mapped[sk.Key+":"+d.Server+"/"+d.Tool] = true
	}
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
