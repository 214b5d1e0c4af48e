package promote

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/propose"
	"github.com/skillgate/skillgate/internal/decision/executor"
)

// MaxHeldTools bounds the tools a group carries for lookups.
const MaxHeldTools = 4096

// heldTools lists every tool of skills with its provider (the skill's, or
// its server's as [ProviderOf] recognises it; "" when none), sorted.
func heldTools(cat *executor.Catalog, skills []Skill) []Offer {
	var out []Offer
	for _, s := range skills {
		for _, t := range s.Tools {
			if len(out) == MaxHeldTools {
				return out
			}
			prov := s.Provider
			if prov == "" {
				prov, _ = ProviderOf(cat, t.ExtensionID, s.Servers[t.ExtensionID])
			}
			out = append(out, Offer{Provider: prov, Skill: s.Key, Server: t.ExtensionID, Tool: t})
		}
	}
	slices.SortFunc(out, func(a, b Offer) int {
		return strings.Compare(a.Skill+":"+a.Tool.Name(), b.Skill+":"+b.Tool.Name())
	})
	return out
}

// The lookups the model may call while drafting (no side effects: they
// read the tools detection already holds).
const (
	lookupToolSchema    = "read_tool_schema"
	lookupProviderTools = "list_provider_tools"
	maxListedTools      = 64
)

func draftLookups() []propose.Lookup {
	str := map[string]any{"type": "string"}
	return []propose.Lookup{
		{Name: lookupToolSchema, Description: "Read one tool's description and full input JSON Schema.",
			Parameters: map[string]any{"type": "object", "additionalProperties": false, "required": []string{"skill", "server", "tool"},
				"properties": map[string]any{"skill": str, "server": str, "tool": str}}},
		{Name: lookupProviderTools, Description: "List the tools a provider's skills offer (skill, server, tool and a one-line description), at most 64.",
			Parameters: map[string]any{"type": "object", "additionalProperties": false, "required": []string{"provider"},
				"properties": map[string]any{"provider": str}}},
	}
}

// lookup answers one lookup call from tools.
func lookup(tools []Offer, name string, args json.RawMessage) (string, error) {
	var a struct {
		Skill, Server, Tool, Provider string
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return "", fmt.Errorf("arguments: %v", err)
	}
	switch name {
	case lookupToolSchema:
		i := slices.IndexFunc(tools, func(o Offer) bool {
			return o.Skill == a.Skill && o.Server == a.Server && o.Tool.CapabilityID == a.Tool
		})
		if i < 0 {
			return "", fmt.Errorf("skill %s offers no tool %s/%s", a.Skill, a.Server, a.Tool)
		}
		out, _ := json.Marshal(map[string]any{"description": oneLine(tools[i].Tool.Description), "inputSchema": tools[i].Tool.InputSchema})
		return string(out), nil
	case lookupProviderTools:
		var b strings.Builder
		n := 0
		for _, o := range tools {
			if o.Provider != a.Provider {
				continue
			}
			if n == maxListedTools {
				b.WriteString("…\n")
				break
			}
			fmt.Fprintf(&b, "skill %s, server %s, tool %s: %s\n", o.Skill, o.Server, o.Tool.CapabilityID, oneLine(o.Tool.Description))
			n++
		}
		if n == 0 {
			return "", fmt.Errorf("no skill of provider %q", a.Provider)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("no lookup %q", name)
}
