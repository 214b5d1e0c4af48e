package change

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
//
// With call, each backend is then called once through its server with the
// call's arguments mapped: the operator's smoke call, allowed only for a
// read-only executor (verb find, list or read); a failure or an error
// result refuses the change.
func (s *Service) admit(ctx context.Context, v promote.Proposal, in *install.Promotions, call *SmokeCall) ([]string, error) {
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

	var callArgs map[string]any
	if call != nil {
		var err error
		if callArgs, err = smokeArgs(ex, call); err != nil {
			return nil, err
		}
	}
	comp := executor.NewCompiler()
	var live, called []string
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
			m, err := comp.CompileMapping(ex, lt.Tool, b.Arguments)
			if err != nil {
				return nil, fmt.Errorf("%w: layer 7 (confinement): %s: against the tool as listed now: %w", ErrRefused, at, err)
			}
			live = append(live, b.Provider+" ("+key+": "+b.Server+"/"+b.Tool+")")
			if call == nil {
				continue
			}
			mapped, err := m.ApplyContext(ctx, callArgs)
			if err != nil {
				return nil, fmt.Errorf("%w: smoke call of %s through %s: the mapping: %w", ErrInvalid, ex.Name, at, err)
			}
			res, err := s.installs.CallLive(ctx, key, in.Shipped[key], b.Server, b.Tool, mapped)
			if err != nil {
				return nil, fmt.Errorf("%w: layer 7 (confinement): smoke call of %s through %s failed: %w", ErrRefused, ex.Name, at, err)
			}
			if res.IsError {
				return nil, fmt.Errorf("%w: layer 7 (confinement): smoke call of %s through %s: the server answered with an error: %s", ErrRefused, ex.Name, at, resultText(res))
			}
			called = append(called, b.Provider)
		}
	}
	evidence = append(evidence, "layer 7 (confinement): started in the sandbox, listing the approved definitions, mappings type-checked: "+strings.Join(live, ", "))
	if call != nil {
		evidence = append(evidence, fmt.Sprintf("smoke call of %s with %s answered through %s", ex.Name, call.Arguments, strings.Join(called, ", ")))
	}
	return evidence, nil
}

// SmokeCall is a call the operator asks the apply of a promote_provider
// change to make through each of its backends, once, before registering
// anything: the change's executor (which must be read-only: verb find,
// list or read) with canonical Arguments (a JSON object, at most
// MaxSmokeArgs bytes). Its answer is not shown to anyone but the record.
type SmokeCall struct {
	Executor  string          `json:"executor"`
	Arguments json.RawMessage `json:"arguments"`
}

// MaxSmokeArgs bounds a smoke call's arguments.
const MaxSmokeArgs = 64 << 10

// ParseSmokeCall reads the operator's smoke call as the CLI takes it,
// "EXECUTOR=JSON" (find_repositories={"query":"skillgate"}). ErrInvalid
// names what is wrong.
func ParseSmokeCall(s string) (*SmokeCall, error) {
	name, args, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return nil, fmt.Errorf("%w: a smoke call is EXECUTOR=JSON (find_repositories={\"query\":\"skillgate\"}), not %q", ErrInvalid, s)
	}
	if len(args) > MaxSmokeArgs {
		return nil, fmt.Errorf("%w: the smoke call's arguments are %d bytes, limit %d", ErrInvalid, len(args), MaxSmokeArgs)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("%w: the smoke call's arguments must be a JSON object: %s", ErrInvalid, args)
	}
	return &SmokeCall{Executor: name, Arguments: json.RawMessage(args)}, nil
}

// smokeArgs checks call against ex: the change's executor, read-only, and
// arguments its schema accepts.
func smokeArgs(ex *executor.Executor, call *SmokeCall) (map[string]any, error) {
	if call.Executor != ex.Name {
		return nil, fmt.Errorf("%w: the smoke call names %s, but the change registers %s: a smoke call tests the change's backends", ErrInvalid, call.Executor, ex.Name)
	}
	verb, _, err := executor.ParseName(ex.Name)
	if err != nil || (verb != executor.Find && verb != executor.List && verb != executor.Read) {
		return nil, fmt.Errorf("%w: a smoke call must not change anything: %s is not a find, list or read executor; apply without --smoke-call", ErrInvalid, ex.Name)
	}
	if len(call.Arguments) > MaxSmokeArgs {
		return nil, fmt.Errorf("%w: the smoke call's arguments are %d bytes, limit %d", ErrInvalid, len(call.Arguments), MaxSmokeArgs)
	}
	var args map[string]any
	if err := json.Unmarshal(call.Arguments, &args); err != nil || args == nil {
		return nil, fmt.Errorf("%w: the smoke call's arguments must be a JSON object", ErrInvalid)
	}
	if err := ex.Validate(args); err != nil {
		return nil, fmt.Errorf("%w: the smoke call's arguments do not fit executor %s: %w", ErrInvalid, ex.Name, err)
	}
	return args, nil
}

// resultText is a tool result's text, at most 300 bytes, for a message.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	t := b.String()
	if len(t) <= 300 {
		return t
	}
	cut := 300
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return t[:cut] + "…"
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
