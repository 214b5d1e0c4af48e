package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

type snapshot struct {
	caps []*Capability
	// exec is the executors and their backends; execProblems the backends
	// refused.
	exec         *execSnap
	execProblems []string
	// published are the approved published skills relayed, by path.
	published []*published
}

// Reload rebuilds the capability set from Options.Load, hands it to the
// decider, and closes upstream connections no longer needed. It returns
// the problems of individual capabilities (which are left out) joined, and
// fails only when loading fails.
func (b *Broker) Reload(ctx context.Context) error {
	b.reloadMu.Lock()
	defer b.reloadMu.Unlock()
	skills, err := b.opts.Load(ctx)
	if err != nil {
		return fmt.Errorf("broker: load installed skills: %w", err)
	}
	cat, err := b.registered(ctx, skills)
	if err != nil {
		return err
	}
	snap, problems := buildWith(skills, cat)
	problems = append(problems, snap.execProblems...)
	var pubProblems []string
	snap.published, pubProblems = buildPublished(skills)
	problems = append(problems, pubProblems...)
	b.opts.Decider.SetCapabilities(snap.caps)
	b.snap.Store(snap)
	// The install flow now holds what drift blocked (a skill it blocked
	// is not in the new snapshot); what it re-approved is served again.
	// Every read is verified whatever this set says.
	b.blocked.reset()
	keep := map[string]bool{}
	for _, c := range snap.caps {
		keep[c.target.ID()] = true
	}
	for _, s := range snap.published {
		keep[s.target.ID()] = true
	}
	b.opts.Upstream.Retain(keep)
	for _, p := range problems {
		b.log.WarnContext(ctx, "capability left out", "problem", p)
	}
	return nil
}

// registered adds what applied changes registered to skills (which Load
// returned: the broker's own) and returns the catalog with the registered
// executors.
func (b *Broker) registered(ctx context.Context, skills []Skill) (*executor.Catalog, error) {
	cat := b.catalog()
	if b.opts.Executors.Registered == nil {
		return cat, nil
	}
	regs, err := b.opts.Executors.Registered(ctx)
	if err != nil {
		return nil, fmt.Errorf("broker: registered executors: %w", err)
	}
	if cat, err = promote.Catalog(cat, regs); err != nil {
		return nil, fmt.Errorf("broker: registered executors: %w", err)
	}
	bySkill := registeredBackends(regs)
	for i := range skills {
		skills[i].Registered = bySkill[skills[i].Key]
	}
	return cat, nil
}

// build compiles the skills into a snapshot with the built-in executor
// catalog.
func build(skills []Skill) (*snapshot, []string) {
	return buildWith(skills, executor.Builtin())
}

// buildWith compiles the skills into a snapshot. Names: a capability is
// offered under the name fixed at its approval (manifest toolName, see
// [capability.AssignToolNames]); one approved before names were fixed (or
// a first_party one) keeps its upstream or shipped tool name unless it
// clashes with a gateway tool, a fixed name or a capability of another
// skill, in which case every clashing one is named "<skill>__<tool>" (the
// skill key with "/" as "--"). An executor with backends takes its name
// from any capability. A capability a backend maps is not offered under
// its own name: agents call the executor.
func buildWith(skills []Skill, cat *executor.Catalog) (*snapshot, []string) {
	var caps []*Capability
	var problems []string
	sort.Slice(skills, func(i, j int) bool { return skills[i].Key < skills[j].Key })
	for _, s := range skills {
		if s.Manifest == nil {
			problems = append(problems, fmt.Sprintf("skill %s: no approved manifest", s.Key))
			continue
		}
		for _, mc := range s.Manifest.Capabilities {
			id := mc.Name()
			if why, blocked := s.Blocked[id]; blocked {
				problems = append(problems, fmt.Sprintf("skill %s: %s blocked: %s", s.Key, id, why))
				continue
			}
			decl, ok := s.Servers[mc.ExtensionID]
			if !ok {
				problems = append(problems, fmt.Sprintf("skill %s: %s: server %q is not declared in mcp.json", s.Key, id, mc.ExtensionID))
				continue
			}
			trust, approvedTrust := orImported(s.Trust), orImported(s.ApprovedTrust)
			target := mcpclient.Target{Skill: s.Key, Digest: s.Digest, Content: s.Content, Server: decl, Dir: s.Dir,
				// A server shares the host's network (when confined) only
				// if an approved capability of it declares network egress.
				Trust: trust, Network: s.Manifest.Networked(mc.ExtensionID)}
			var tool *mcp.Tool
			var schema *jsonschema.Schema
			var err error
			var creds []string
			if trust == capability.TrustFirstParty {
				// Shipped, not pinned: the manifest describes the tool.
				target.Unpinned = true
				tool, schema, err = toolFromManifest(mc)
				creds = decl.Credentials()
				sort.Strings(creds)
			} else {
				pins := s.Pins[mc.ExtensionID]
				pin, ok := pins.Lookup(mc.CapabilityID)
				if !ok {
					problems = append(problems, fmt.Sprintf("skill %s: %s has no approved pin", s.Key, id))
					continue
				}
				target.Pins, target.LeftOut = pins, s.LeftOut[mc.ExtensionID]
				tool, schema, err = toolFromPin(pin)
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("skill %s: %s: %v", s.Key, id, err))
				continue
			}
			caps = append(caps, &Capability{
				Skill: s.Key, Capability: mc, Name: mc.CapabilityID, Tool: tool, schema: schema,
				emptyErr:  schema.Validate(map[string]any{}),
				SkillTier: s.Tier, InvokableBy: s.InvokableBy, Trust: trust, ApprovedTrust: approvedTrust, Credentials: creds,
				target: target,
			})
		}
	}
	// Names fixed at the approval of an imported skill (manifest
	// toolName) are kept as they are: they never depend on which other
	// skills are enabled. The others (first_party skills, named by their
	// shipped toolName or their tool, and imported skills approved before
	// names were fixed) keep that name unless it clashes with a gateway
	// tool, a fixed name or another such capability of another skill; then
	// every clashing one is namespaced.
	isFixed := func(c *Capability) bool { return c.Capability.ToolName != "" && c.Trust != capability.TrustFirstParty }
	fixed := map[string]bool{}
	for _, c := range caps {
		if c.Capability.ToolName != "" {
			c.Name = c.Capability.ToolName
			fixed[c.Name] = fixed[c.Name] || isFixed(c)
		}
	}
	es, execProblems := buildExecutors(cat, skills, caps)
	count := map[string]map[string]bool{}
	for _, c := range caps {
		if isFixed(c) {
			continue
		}
		if count[c.Name] == nil {
			count[c.Name] = map[string]bool{}
		}
		count[c.Name][c.Skill] = true
	}
	for _, c := range caps {
		// An executor with a backend takes its name even from a fixed one.
		if (!isFixed(c) && (len(count[c.Name]) > 1 || isReserved(c.Name) || fixed[c.Name])) || es.names[c.Name] {
			c.Name = namespaced(c.Skill, c.Name)
		}
	}
	// Within one skill two servers may offer the same tool name too.
	seen := map[string]int{}
	for _, c := range caps {
		seen[c.Name]++
	}
	for _, c := range caps {
		if seen[c.Name] > 1 && !isFixed(c) {
			c.Name = namespaced(c.Skill, c.Capability.ExtensionID+"__"+c.Capability.CapabilityID)
		}
		t := *c.Tool
		t.Name = c.Name
		c.Tool = &t
		c.id = c.Ref().String()
	}
	return &snapshot{caps: caps, exec: es, execProblems: execProblems}, problems
}

func isReserved(name string) bool { return capability.IsReservedName(name) }

// namespaced is [capability.NamespacedTool].
func namespaced(skill, tool string) string { return capability.NamespacedTool(skill, tool) }

// toolFromPin rebuilds the tool definition agents see from the approved
// pin (never from a live listing) and compiles its input schema.
func toolFromPin(pin capability.ToolPin) (*mcp.Tool, *jsonschema.Schema, error) {
	var def struct {
		Name         string               `json:"name"`
		Title        string               `json:"title"`
		Description  string               `json:"description"`
		InputSchema  json.RawMessage      `json:"inputSchema"`
		OutputSchema json.RawMessage      `json:"outputSchema"`
		Annotations  *mcp.ToolAnnotations `json:"annotations"`
	}
	if err := json.Unmarshal(pin.Definition, &def); err != nil {
		return nil, nil, fmt.Errorf("pinned definition: %w", err)
	}
	if len(def.InputSchema) == 0 {
		def.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	var top map[string]any
	if err := json.Unmarshal(def.InputSchema, &top); err != nil || top["type"] != "object" {
		return nil, nil, errors.New(`input schema is not a JSON Schema object with "type": "object"`)
	}
	schema, err := compileSchema(def.InputSchema)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	t := &mcp.Tool{Name: def.Name, Title: def.Title, Description: def.Description, InputSchema: def.InputSchema, Annotations: def.Annotations}
	if len(def.OutputSchema) > 0 {
		t.OutputSchema = def.OutputSchema
	}
	return t, schema, nil
}

// toolFromManifest builds the tool definition agents see of a first_party
// capability from its shipped manifest entry, and compiles its input
// schema.
func toolFromManifest(mc manifest.Capability) (*mcp.Tool, *jsonschema.Schema, error) {
	def := map[string]any{"name": mc.CapabilityID}
	if mc.Title != "" {
		def["title"] = mc.Title
	}
	if mc.Description != "" {
		def["description"] = mc.Description
	}
	if len(mc.InputSchema) > 0 {
		def["inputSchema"] = mc.InputSchema
	}
	if len(mc.OutputSchema) > 0 {
		def["outputSchema"] = mc.OutputSchema
	}
	raw, err := json.Marshal(def)
	if err != nil {
		return nil, nil, fmt.Errorf("shipped definition: %w", err)
	}
	return toolFromPin(capability.ToolPin{Name: mc.CapabilityID, Definition: raw})
}

// orImported is t, or imported when t is empty.
func orImported(t capability.Trust) capability.Trust {
	if t == "" {
		return capability.TrustImported
	}
	return t
}

// compileSchema compiles a pinned tool's input schema.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	return capability.CompileSchema("skillgate:tool-input.json", raw)
}
