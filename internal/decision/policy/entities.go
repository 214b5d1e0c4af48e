package policy

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// Entity types and the action of the model.
const (
	TypeAgent      = types.EntityType("Agent")
	TypeCapability = types.EntityType("Capability")
	TypeSkill      = types.EntityType("Skill")
	TypeExtension  = types.EntityType("Extension")
	TypeAction     = types.EntityType("Action")
)

// ActionInvoke is the only action skillgate asks about.
var ActionInvoke = types.NewEntityUID(TypeAction, "invoke")

// MaxArgDepth bounds how deep arguments are copied into the Cedar context;
// deeper values are left out (the typed constraints still see them).
const MaxArgDepth = 16

// agentEntity is the Cedar entity of a principal.
func agentEntity(p capability.Principal) types.Entity {
	attrs := types.RecordMap{
		"tier":      types.String(p.Tier),
		"tierLevel": types.Long(tierLevel(p.Tier)),
		"tenant":    types.String(p.Tenant),
		"agent":     types.String(p.Agent),
	}
	var parents types.EntityUIDSet
	if p.Parent != "" {
		parent := types.NewEntityUID(TypeAgent, types.String(p.Parent))
		attrs["parent"] = parent
		parents = types.NewEntityUIDSet(parent)
	}
	return types.Entity{
		UID:        types.NewEntityUID(TypeAgent, types.String(p.ID())),
		Parents:    parents,
		Attributes: types.NewRecord(attrs),
	}
}

// capabilityEntities returns the Cedar entities of a capability, its skill
// and its extension. Every id names the skill, because server ids are only
// unique within a skill: Capability::"skill:ext/cap", Skill::"skill",
// Extension::"skill:ext".
func capabilityEntities(c *Capability) (capE, skillE, extE types.Entity) {
	skillUID := types.NewEntityUID(TypeSkill, types.String(c.SkillKey))
	extUID := types.NewEntityUID(TypeExtension, types.String(c.SkillKey+":"+c.ExtensionID))
	capE = types.Entity{
		UID:     types.NewEntityUID(TypeCapability, types.String(c.Ref().String())),
		Parents: types.NewEntityUIDSet(skillUID, extUID),
		Attributes: types.NewRecord(types.RecordMap{
			"riskLevel":   types.String(c.RiskLevel),
			"sideEffects": types.String(c.SideEffects),
			"egress":      types.String(c.DataEgress),
			"extension":   types.String(c.ExtensionID),
			"capability":  types.String(c.CapabilityID),
			"skill":       types.String(c.SkillKey),
			"trust":       types.String(c.SkillTrust),
			"skillTier":   types.Long(c.SkillTier),
		}),
	}
	skillE = types.Entity{
		UID: skillUID,
		Attributes: types.NewRecord(types.RecordMap{
			"trust": types.String(c.SkillTrust),
			"tier":  types.Long(c.SkillTier),
			"state": types.String(c.SkillState),
		}),
	}
	extE = types.Entity{UID: extUID}
	return
}

// entityView is the EntityGetter of one request: the principal chain over
// the snapshot's entities.
type entityView struct {
	snap  *snapshot
	chain []types.Entity
}

// Get implements types.EntityGetter.
func (v *entityView) Get(uid types.EntityUID) (types.Entity, bool) {
	if uid.Type == TypeAgent {
		for i := range v.chain {
			if v.chain[i].UID == uid {
				return v.chain[i], true
			}
		}
		return types.Entity{}, false
	}
	e, ok := v.snap.entities[uid]
	return e, ok
}

// argsValue converts call arguments (as decoded from JSON) to a Cedar
// record. Integers become Long, other numbers Decimal (or are left out
// when out of Decimal's range), arrays Set, objects Record; null and values
// deeper than MaxArgDepth are left out.
func argsValue(args map[string]any, depth int) types.Record {
	m := make(types.RecordMap, len(args))
	for k, v := range args {
		if cv, ok := cedarValue(v, depth+1); ok {
			m[types.String(k)] = cv
		}
	}
	return types.NewRecord(m)
}

func cedarValue(v any, depth int) (types.Value, bool) {
	if depth > MaxArgDepth {
		return nil, false
	}
	switch v := v.(type) {
	case string:
		return types.String(v), true
	case bool:
		return types.Boolean(v), true
	case float64:
		if v == math.Trunc(v) && v >= -9.2e18 && v <= 9.2e18 {
			return types.Long(int64(v)), true
		}
		d, err := types.NewDecimalFromFloat(v)
		return d, err == nil
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return types.Long(i), true
		}
		f, err := v.Float64()
		if err != nil {
			return nil, false
		}
		return cedarValue(f, depth)
	case int:
		return types.Long(v), true
	case int64:
		return types.Long(v), true
	case []any:
		vals := make([]types.Value, 0, len(v))
		for _, e := range v {
			if cv, ok := cedarValue(e, depth+1); ok {
				vals = append(vals, cv)
			}
		}
		return types.NewSet(vals...), true
	case []string:
		vals := make([]types.Value, 0, len(v))
		for _, e := range v {
			vals = append(vals, types.String(e))
		}
		return types.NewSet(vals...), true
	case map[string]any:
		return argsValue(v, depth), true
	}
	return nil, false
}
