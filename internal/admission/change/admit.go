package change

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/admission/secscan"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/plural"
)

// admit re-runs the admission layers on what applying v registers, as an
// install of a provider skill with these backends would be checked, and
// returns the evidence, one line per layer:
//
//   - layer 3 (format): each skill's backends, written as the
//     backends.yaml it would ship, parse against the catalog (with the
//     executor v declares) and compile against its approved tools;
//   - layer 4 (content scan): the executor's description, which agents
//     read, passes the content scanner's tool rules (no high or critical
//     finding);
//   - layer 5 (capability analysis): every backend's tool is approved and
//     unblocked (checked by promote.Validate against the installs);
//   - layer 7 (confinement): each provider skill's servers, started in
//     the sandbox as the gateway starts them, still list every mapped
//     tool with the approved (pinned, or shipped) definition, and each
//     mapping type-checks against the tool as listed now.
//
// Layer 6 is the apply itself: a human with a reason. A layer that does
// not hold refuses the change (ErrRefused) with the layer, what failed and
// the fix.
func (s *Service) admit(ctx context.Context, v promote.Proposal, in *install.Promotions) ([]string, error) {
	cat := in.Catalog
	if v.New {
		var err error
		if cat, err = cat.With("change executor", v.Executor); err != nil {
			return nil, fmt.Errorf("%w: layer 3 (format): %w", ErrRefused, err)
		}
	}
	ex := cat.Lookup(v.Executor.Name)
	tools := map[string][]capability.Tool{}
	for _, sk := range in.Skills {
		tools[sk.Key] = sk.Tools
	}
	bySkill := map[string][]promote.Backend{}
	for _, b := range v.Backends {
		bySkill[b.Skill] = append(bySkill[b.Skill], b)
	}
	skills := slices.Sorted(maps.Keys(bySkill))
	for _, key := range skills {
		bs := bySkill[key]
		decls := make([]map[string]any, 0, len(bs))
		var servers []string
		for _, b := range bs {
			decls = append(decls, map[string]any{"executor": v.Executor.Name, "server": b.Server, "tool": b.Tool, "arguments": b.Arguments})
			servers = append(servers, b.Server)
		}
		// JSON is YAML: the file an author would ship for these backends.
		doc, _ := json.Marshal(map[string]any{"apiVersion": "skillgate.dev/v1", "kind": "Backends", "provider": bs[0].Provider, "backends": decls})
		file := key + " (change)/" + executor.BackendsFileName
		bf, err := executor.ParseBackends(file, doc, cat)
		if err == nil {
			_, err = bf.Compile(cat, key, servers, tools[key])
		}
		if err != nil {
			return nil, fmt.Errorf("%w: layer 3 (format): %w; reject the change, or fix the skill and let detection queue another", ErrRefused, err)
		}
	}
	evidence := []string{fmt.Sprintf("layer 3 (format): %d backends of %d %s parsed and compiled against the approved tools", len(v.Backends), len(skills), plural.Noun(len(skills), "skill", "skills"))}

	var blocking []string
	for _, f := range secscan.Tools([]secscan.Tool{{Server: "executor", Name: v.Executor.Name, Description: v.Executor.Description}}) {
		if f.Severity.Blocks() {
			blocking = append(blocking, fmt.Sprintf("%s %s %s: %s", f.Severity, f.Rule, f.Name, f.Message))
		}
	}
	if len(blocking) > 0 {
		return nil, fmt.Errorf("%w: layer 4 (content scan): the description of executor %s: %s; reject the change", ErrRefused, v.Executor.Name, strings.Join(blocking, "; "))
	}
	evidence = append(evidence, "layer 4 (content scan): the executor's description has no high or critical finding",
		"layer 5 (capability analysis): every backend's tool is approved and not blocked")

	comp := executor.NewCompiler()
	var live []string
	for _, key := range skills {
		listed, err := s.liveTools(ctx, key, in.Shipped[key])
		if err != nil {
			return nil, fmt.Errorf("%w: layer 7 (confinement): smoke start of %s: %w", ErrRefused, key, err)
		}
		for _, b := range bySkill[key] {
			at := fmt.Sprintf("backend %s (%s: %s/%s)", b.Provider, b.Skill, b.Server, b.Tool)
			lt, ok := listed[b.Server+"/"+b.Tool]
			switch {
			case !ok:
				return nil, fmt.Errorf("%w: layer 7 (confinement): %s: server %s no longer lists tool %s; recheck %s (skillgate recheck %s)", ErrRefused, at, b.Server, b.Tool, key, key)
			case !lt.Pinned:
				return nil, fmt.Errorf("%w: layer 7 (confinement): %s: the tool's definition is not the approved one; recheck %s (skillgate recheck %s) and review the drift", ErrRefused, at, key, key)
			}
			if _, err := comp.CompileMapping(ex, lt.Tool, b.Arguments); err != nil {
				return nil, fmt.Errorf("%w: layer 7 (confinement): %s: against the tool as listed now: %w", ErrRefused, at, err)
			}
			live = append(live, b.Provider+" ("+key+": "+b.Server+"/"+b.Tool+")")
		}
	}
	evidence = append(evidence, "layer 7 (confinement): started in the sandbox, listing the approved definitions, mappings type-checked: "+strings.Join(live, ", "))
	return evidence, nil
}

// liveTools lists what skill key's servers offer now: a shipped skill's
// as the gateway starts them, an install's as a recheck does.
func (s *Service) liveTools(ctx context.Context, key string, shipped bool) (map[string]install.LiveTool, error) {
	if shipped {
		return s.installs.ShippedLiveTools(ctx, key)
	}
	listed, err := s.installs.LiveTools(ctx, key)
	if errors.Is(err, install.ErrNotFound) {
		return nil, fmt.Errorf("%s is not installed", key)
	}
	return listed, err
}
