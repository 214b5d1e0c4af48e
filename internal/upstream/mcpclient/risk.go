package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// MetaKey is the tool _meta key under which a server states skillgate risk
// metadata directly. It is namespaced as the MCP maintainers advise for
// project-specific metadata. Its value is an object with any of three string
// fields:
//
//	"_meta": {"io.skillgate/risk": {
//	    "riskLevel":   "read" | "write" | "destructive",
//	    "sideEffects": "none" | "internal" | "external",
//	    "dataEgress":  "none" | "network"
//	}}
//
// A field given here wins over what annotations imply. An unknown field or a
// value outside the set is a per-tool problem ([ErrInvalidTool]).
const MetaKey = "io.skillgate/risk"

// hints holds the annotation hints that are explicitly present.
type hints struct {
	readOnly, destructive, openWorld *bool
}

// DeriveRisk derives a tool's risk metadata from its raw definition (one
// element of a tools/list result). The server is the authority:
//
//  1. A field present in _meta[MetaKey] is taken as is (SourceServerMeta).
//  2. Otherwise explicitly present annotations decide (SourceAnnotations),
//     following reference §5 but never using a spec default, because an
//     absent hint says nothing about the tool:
//     - riskLevel: readOnlyHint=true → read; readOnlyHint=false with
//     destructiveHint=false → write, with destructiveHint=true →
//     destructive; destructiveHint=true without readOnlyHint →
//     destructive. Anything else stays unknown (notably readOnlyHint=false
//     alone, which Go SDK servers since v1.7.0 send for every annotated
//     tool).
//     - sideEffects: readOnlyHint=true → none; a write or destructive tool
//     with openWorldHint=false → internal, with openWorldHint=true →
//     external. Otherwise unknown.
//     - dataEgress: openWorldHint=true → network, openWorldHint=false →
//     none. Otherwise unknown.
//  3. Everything else stays unknown; see [RiskMetadata.Unknown].
//
// The returned problems are per-tool faults in the annotations or the _meta
// entry (a hint that is not a boolean, a value outside its set); the faulty
// input is ignored.
func DeriveRisk(rawTool json.RawMessage) (capability.RiskMetadata, []capability.Problem) {
	var (
		meta     capability.RiskMetadata
		problems []capability.Problem
		h        hints
		metaRaw  json.RawMessage
	)
	members, err := strictjson.Object(rawTool)
	if err != nil {
		return meta, []capability.Problem{{Code: capability.ProblemInvalidTool, Field: "tool", Message: describeObjectErr(err, "a tool")}}
	}
	for _, m := range members {
		switch m.Key {
		case "annotations":
			var ps []capability.Problem
			h, ps = parseHints(m.Value)
			problems = append(problems, ps...)
		case "_meta":
			mm, err := strictjson.Object(m.Value)
			if err != nil {
				problems = append(problems, capability.Problem{Code: capability.ProblemInvalidTool, Field: "_meta", Message: describeObjectErr(err, "_meta")})
				continue
			}
			for _, e := range mm {
				if e.Key == MetaKey {
					metaRaw = e.Value
				}
			}
		}
	}
	implied := impliedByHints(h)
	meta.RiskLevel, meta.SideEffects, meta.DataEgress = implied.RiskLevel, implied.SideEffects, implied.DataEgress
	if metaRaw != nil {
		declared, ps := parseRiskMeta(metaRaw)
		problems = append(problems, ps...)
		if declared.RiskLevel.Known() {
			meta.RiskLevel = declared.RiskLevel
			if implied.RiskLevel.Known() && declared.RiskLevel.Value.Compare(implied.RiskLevel.Value) < 0 {
				meta.Conflicts = append(meta.Conflicts, capability.RiskConflict{Field: "riskLevel", Declared: string(declared.RiskLevel.Value), Implied: string(implied.RiskLevel.Value), Basis: implied.RiskLevel.Basis})
			}
		}
		if declared.SideEffects.Known() {
			meta.SideEffects = declared.SideEffects
			if implied.SideEffects.Known() && declared.SideEffects.Value.Compare(implied.SideEffects.Value) < 0 {
				meta.Conflicts = append(meta.Conflicts, capability.RiskConflict{Field: "sideEffects", Declared: string(declared.SideEffects.Value), Implied: string(implied.SideEffects.Value), Basis: implied.SideEffects.Basis})
			}
		}
		if declared.DataEgress.Known() {
			meta.DataEgress = declared.DataEgress
			if implied.DataEgress.Known() && declared.DataEgress.Value.Compare(implied.DataEgress.Value) < 0 {
				meta.Conflicts = append(meta.Conflicts, capability.RiskConflict{Field: "dataEgress", Declared: string(declared.DataEgress.Value), Implied: string(implied.DataEgress.Value), Basis: implied.DataEgress.Basis})
			}
		}
	}
	return meta, problems
}

// parseHints reads the three hints that matter, keeping only those present
// with a boolean value.
func parseHints(raw json.RawMessage) (hints, []capability.Problem) {
	var h hints
	members, err := strictjson.Object(raw)
	if err != nil {
		return h, []capability.Problem{{Code: capability.ProblemInvalidTool, Field: "annotations", Message: describeObjectErr(err, "annotations")}}
	}
	var problems []capability.Problem
	for _, m := range members {
		var dst **bool
		switch m.Key {
		case "readOnlyHint":
			dst = &h.readOnly
		case "destructiveHint":
			dst = &h.destructive
		case "openWorldHint":
			dst = &h.openWorld
		case "idempotentHint":
			if _, ok := strictjson.Bool(m.Value); !ok {
				problems = append(problems, capability.Problem{Code: capability.ProblemInvalidTool, Field: "annotations.idempotentHint", Message: fmt.Sprintf("is %s; want a boolean", strictjson.Kind(m.Value))})
			}
			continue
		default:
			continue
		}
		v, ok := strictjson.Bool(m.Value)
		if !ok {
			problems = append(problems, capability.Problem{Code: capability.ProblemInvalidTool, Field: "annotations." + m.Key, Message: fmt.Sprintf("is %s; want a boolean", strictjson.Kind(m.Value))})
			continue
		}
		*dst = &v
	}
	return h, problems
}

func hintText(name string, v *bool) string { return fmt.Sprintf("%s=%t", name, *v) }

// impliedByHints maps explicitly present hints to risk metadata; see
// [DeriveRisk] for the table.
func impliedByHints(h hints) capability.RiskMetadata {
	var m capability.RiskMetadata
	set := func(f *capability.RiskField[capability.RiskLevel], v capability.RiskLevel, basis ...string) {
		*f = capability.RiskField[capability.RiskLevel]{Value: v, Source: capability.SourceAnnotations, Basis: "annotations: " + strings.Join(basis, ", ")}
	}
	switch {
	case h.readOnly != nil && *h.readOnly:
		set(&m.RiskLevel, capability.RiskRead, hintText("readOnlyHint", h.readOnly))
	case h.readOnly != nil && h.destructive != nil && !*h.destructive:
		set(&m.RiskLevel, capability.RiskWrite, hintText("readOnlyHint", h.readOnly), hintText("destructiveHint", h.destructive))
	case h.readOnly != nil && h.destructive != nil && *h.destructive:
		set(&m.RiskLevel, capability.RiskDestructive, hintText("readOnlyHint", h.readOnly), hintText("destructiveHint", h.destructive))
	case h.readOnly == nil && h.destructive != nil && *h.destructive:
		set(&m.RiskLevel, capability.RiskDestructive, hintText("destructiveHint", h.destructive))
	}
	switch {
	case m.RiskLevel.Value == capability.RiskRead:
		m.SideEffects = capability.RiskField[capability.SideEffects]{Value: capability.SideEffectsNone, Source: capability.SourceAnnotations, Basis: "annotations: " + hintText("readOnlyHint", h.readOnly)}
	case m.RiskLevel.Known() && h.openWorld != nil:
		v := capability.SideEffectsInternal
		if *h.openWorld {
			v = capability.SideEffectsExternal
		}
		m.SideEffects = capability.RiskField[capability.SideEffects]{Value: v, Source: capability.SourceAnnotations, Basis: m.RiskLevel.Basis + ", " + hintText("openWorldHint", h.openWorld)}
	}
	if h.openWorld != nil {
		v := capability.EgressNone
		if *h.openWorld {
			v = capability.EgressNetwork
		}
		m.DataEgress = capability.RiskField[capability.DataEgress]{Value: v, Source: capability.SourceAnnotations, Basis: "annotations: " + hintText("openWorldHint", h.openWorld)}
	}
	return m
}

// parseRiskMeta reads the _meta[MetaKey] object.
func parseRiskMeta(raw json.RawMessage) (capability.RiskMetadata, []capability.Problem) {
	var m capability.RiskMetadata
	field := fmt.Sprintf("_meta[%q]", MetaKey)
	members, err := strictjson.Object(raw)
	if err != nil {
		return m, []capability.Problem{{Code: capability.ProblemInvalidTool, Field: field, Message: describeObjectErr(err, "the risk entry")}}
	}
	var problems []capability.Problem
	bad := func(key, msg string) {
		problems = append(problems, capability.Problem{Code: capability.ProblemInvalidTool, Field: field + "." + key, Message: msg})
	}
	basis := func(key string) string { return field + "." + key }
	for _, e := range members {
		s, ok := strictjson.String(e.Value)
		if !ok && (e.Key == "riskLevel" || e.Key == "sideEffects" || e.Key == "dataEgress") {
			bad(e.Key, fmt.Sprintf("is %s; want a string", strictjson.Kind(e.Value)))
			continue
		}
		switch e.Key {
		case "riskLevel":
			if !capability.RiskLevel(s).Valid() {
				bad(e.Key, fmt.Sprintf("%s is not one of read, write, destructive", strictjson.Quote(s, 64)))
				continue
			}
			m.RiskLevel = capability.RiskField[capability.RiskLevel]{Value: capability.RiskLevel(s), Source: capability.SourceServerMeta, Basis: basis(e.Key)}
		case "sideEffects":
			if !capability.SideEffects(s).Valid() {
				bad(e.Key, fmt.Sprintf("%s is not one of none, internal, external", strictjson.Quote(s, 64)))
				continue
			}
			m.SideEffects = capability.RiskField[capability.SideEffects]{Value: capability.SideEffects(s), Source: capability.SourceServerMeta, Basis: basis(e.Key)}
		case "dataEgress":
			if !capability.DataEgress(s).Valid() {
				bad(e.Key, fmt.Sprintf("%s is not one of none, network", strictjson.Quote(s, 64)))
				continue
			}
			m.DataEgress = capability.RiskField[capability.DataEgress]{Value: capability.DataEgress(s), Source: capability.SourceServerMeta, Basis: basis(e.Key)}
		default:
			bad(e.Key, "unknown field; the entry has riskLevel, sideEffects and dataEgress")
		}
	}
	return m, problems
}
