package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/strictjson"
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

// RiskLevel is how much a capability can change: read < write < destructive.
type RiskLevel string

// The risk levels, least to most severe.
const (
	RiskRead        RiskLevel = "read"
	RiskWrite       RiskLevel = "write"
	RiskDestructive RiskLevel = "destructive"
)

// SideEffects is where a capability's effects land: none < internal <
// external.
type SideEffects string

// The side-effect scopes, narrowest first.
const (
	SideEffectsNone     SideEffects = "none"
	SideEffectsInternal SideEffects = "internal"
	SideEffectsExternal SideEffects = "external"
)

// DataEgress is whether a capability may send data off the machine: none <
// network.
type DataEgress string

// The data egress values, narrowest first.
const (
	EgressNone    DataEgress = "none"
	EgressNetwork DataEgress = "network"
)

// Source says where a risk field's value came from.
type Source string

// The sources of risk metadata. This package sets only the first two; the
// registry records operator-supplied values with SourceOperator.
const (
	// SourceServerMeta: the tool's _meta[MetaKey] entry.
	SourceServerMeta Source = "server_meta"
	// SourceAnnotations: explicitly present MCP tool annotations, mapped as
	// described on [DeriveRisk].
	SourceAnnotations Source = "annotations"
	// SourceOperator: a human completed or overrode the value with a written
	// reason.
	SourceOperator Source = "operator"
)

// riskValue is the constraint for the three closed sets.
type riskValue interface {
	~string
}

// RiskField is one risk metadata field with its provenance. A zero Value
// means unknown.
type RiskField[T riskValue] struct {
	// Value is the field's value, or empty when unknown.
	Value T `json:"value,omitempty"`
	// Source is where Value came from; empty when unknown.
	Source Source `json:"source,omitempty"`
	// Basis is the evidence, for example "annotations: readOnlyHint=true".
	Basis string `json:"basis,omitempty"`
}

// Known reports whether the field has a value.
func (f RiskField[T]) Known() bool { return f.Value != "" }

// RiskMetadata is a capability's risk metadata as the server stated it.
type RiskMetadata struct {
	RiskLevel   RiskField[RiskLevel]   `json:"riskLevel"`
	SideEffects RiskField[SideEffects] `json:"sideEffects"`
	DataEgress  RiskField[DataEgress]  `json:"dataEgress"`
	// Conflicts lists fields where the _meta value is less severe than what
	// the tool's own annotations imply. The _meta value still stands (it is
	// authoritative), but a reviewer should see the disagreement.
	Conflicts []RiskConflict `json:"conflicts,omitempty"`
}

// RiskConflict is a _meta value below what annotations imply.
type RiskConflict struct {
	// Field is "riskLevel", "sideEffects" or "dataEgress".
	Field string `json:"field"`
	// Declared is the _meta value.
	Declared string `json:"declared"`
	// Implied is the value the annotations imply.
	Implied string `json:"implied"`
	// Basis is the annotation evidence.
	Basis string `json:"basis"`
}

// Unknown returns the JSON names of the fields that are still unknown, in
// the order riskLevel, sideEffects, dataEgress. A caller must block the
// capability until each is supplied.
func (m RiskMetadata) Unknown() []string {
	var out []string
	if !m.RiskLevel.Known() {
		out = append(out, "riskLevel")
	}
	if !m.SideEffects.Known() {
		out = append(out, "sideEffects")
	}
	if !m.DataEgress.Known() {
		out = append(out, "dataEgress")
	}
	return out
}

func (l RiskLevel) rank() int {
	switch l {
	case RiskRead:
		return 0
	case RiskWrite:
		return 1
	case RiskDestructive:
		return 2
	}
	return -1
}

func (s SideEffects) rank() int {
	switch s {
	case SideEffectsNone:
		return 0
	case SideEffectsInternal:
		return 1
	case SideEffectsExternal:
		return 2
	}
	return -1
}

func (e DataEgress) rank() int {
	switch e {
	case EgressNone:
		return 0
	case EgressNetwork:
		return 1
	}
	return -1
}

// Valid reports whether l is one of the defined risk levels.
func (l RiskLevel) Valid() bool { return l.rank() >= 0 }

// Valid reports whether s is one of the defined side-effect scopes.
func (s SideEffects) Valid() bool { return s.rank() >= 0 }

// Valid reports whether e is one of the defined egress values.
func (e DataEgress) Valid() bool { return e.rank() >= 0 }

// Compare orders risk levels: negative when l is less severe than o, zero
// when equal, positive when more severe. Invalid values sort first.
func (l RiskLevel) Compare(o RiskLevel) int { return l.rank() - o.rank() }

// Compare orders side-effect scopes like [RiskLevel.Compare].
func (s SideEffects) Compare(o SideEffects) int { return s.rank() - o.rank() }

// Compare orders egress values like [RiskLevel.Compare].
func (e DataEgress) Compare(o DataEgress) int { return e.rank() - o.rank() }

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
func DeriveRisk(rawTool json.RawMessage) (RiskMetadata, []Problem) {
	var (
		meta     RiskMetadata
		problems []Problem
		h        hints
		metaRaw  json.RawMessage
	)
	members, err := strictjson.Object(rawTool)
	if err != nil {
		return meta, []Problem{{Code: ProblemInvalidTool, Field: "tool", Message: describeObjectErr(err, "a tool")}}
	}
	for _, m := range members {
		switch m.Key {
		case "annotations":
			var ps []Problem
			h, ps = parseHints(m.Value)
			problems = append(problems, ps...)
		case "_meta":
			mm, err := strictjson.Object(m.Value)
			if err != nil {
				problems = append(problems, Problem{Code: ProblemInvalidTool, Field: "_meta", Message: describeObjectErr(err, "_meta")})
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
				meta.Conflicts = append(meta.Conflicts, RiskConflict{"riskLevel", string(declared.RiskLevel.Value), string(implied.RiskLevel.Value), implied.RiskLevel.Basis})
			}
		}
		if declared.SideEffects.Known() {
			meta.SideEffects = declared.SideEffects
			if implied.SideEffects.Known() && declared.SideEffects.Value.Compare(implied.SideEffects.Value) < 0 {
				meta.Conflicts = append(meta.Conflicts, RiskConflict{"sideEffects", string(declared.SideEffects.Value), string(implied.SideEffects.Value), implied.SideEffects.Basis})
			}
		}
		if declared.DataEgress.Known() {
			meta.DataEgress = declared.DataEgress
			if implied.DataEgress.Known() && declared.DataEgress.Value.Compare(implied.DataEgress.Value) < 0 {
				meta.Conflicts = append(meta.Conflicts, RiskConflict{"dataEgress", string(declared.DataEgress.Value), string(implied.DataEgress.Value), implied.DataEgress.Basis})
			}
		}
	}
	return meta, problems
}

// parseHints reads the three hints that matter, keeping only those present
// with a boolean value.
func parseHints(raw json.RawMessage) (hints, []Problem) {
	var h hints
	members, err := strictjson.Object(raw)
	if err != nil {
		return h, []Problem{{Code: ProblemInvalidTool, Field: "annotations", Message: describeObjectErr(err, "annotations")}}
	}
	var problems []Problem
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
				problems = append(problems, Problem{Code: ProblemInvalidTool, Field: "annotations.idempotentHint", Message: fmt.Sprintf("is %s; want a boolean", strictjson.Kind(m.Value))})
			}
			continue
		default:
			continue
		}
		v, ok := strictjson.Bool(m.Value)
		if !ok {
			problems = append(problems, Problem{Code: ProblemInvalidTool, Field: "annotations." + m.Key, Message: fmt.Sprintf("is %s; want a boolean", strictjson.Kind(m.Value))})
			continue
		}
		*dst = &v
	}
	return h, problems
}

func hintText(name string, v *bool) string { return fmt.Sprintf("%s=%t", name, *v) }

// impliedByHints maps explicitly present hints to risk metadata; see
// [DeriveRisk] for the table.
func impliedByHints(h hints) RiskMetadata {
	var m RiskMetadata
	set := func(f *RiskField[RiskLevel], v RiskLevel, basis ...string) {
		*f = RiskField[RiskLevel]{Value: v, Source: SourceAnnotations, Basis: "annotations: " + strings.Join(basis, ", ")}
	}
	switch {
	case h.readOnly != nil && *h.readOnly:
		set(&m.RiskLevel, RiskRead, hintText("readOnlyHint", h.readOnly))
	case h.readOnly != nil && h.destructive != nil && !*h.destructive:
		set(&m.RiskLevel, RiskWrite, hintText("readOnlyHint", h.readOnly), hintText("destructiveHint", h.destructive))
	case h.readOnly != nil && h.destructive != nil && *h.destructive:
		set(&m.RiskLevel, RiskDestructive, hintText("readOnlyHint", h.readOnly), hintText("destructiveHint", h.destructive))
	case h.readOnly == nil && h.destructive != nil && *h.destructive:
		set(&m.RiskLevel, RiskDestructive, hintText("destructiveHint", h.destructive))
	}
	switch {
	case m.RiskLevel.Value == RiskRead:
		m.SideEffects = RiskField[SideEffects]{Value: SideEffectsNone, Source: SourceAnnotations, Basis: "annotations: " + hintText("readOnlyHint", h.readOnly)}
	case m.RiskLevel.Known() && h.openWorld != nil:
		v := SideEffectsInternal
		if *h.openWorld {
			v = SideEffectsExternal
		}
		m.SideEffects = RiskField[SideEffects]{Value: v, Source: SourceAnnotations, Basis: m.RiskLevel.Basis + ", " + hintText("openWorldHint", h.openWorld)}
	}
	if h.openWorld != nil {
		v := EgressNone
		if *h.openWorld {
			v = EgressNetwork
		}
		m.DataEgress = RiskField[DataEgress]{Value: v, Source: SourceAnnotations, Basis: "annotations: " + hintText("openWorldHint", h.openWorld)}
	}
	return m
}

// parseRiskMeta reads the _meta[MetaKey] object.
func parseRiskMeta(raw json.RawMessage) (RiskMetadata, []Problem) {
	var m RiskMetadata
	field := fmt.Sprintf("_meta[%q]", MetaKey)
	members, err := strictjson.Object(raw)
	if err != nil {
		return m, []Problem{{Code: ProblemInvalidTool, Field: field, Message: describeObjectErr(err, "the risk entry")}}
	}
	var problems []Problem
	bad := func(key, msg string) {
		problems = append(problems, Problem{Code: ProblemInvalidTool, Field: field + "." + key, Message: msg})
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
			if !RiskLevel(s).Valid() {
				bad(e.Key, fmt.Sprintf("%s is not one of read, write, destructive", strictjson.Quote(s, 64)))
				continue
			}
			m.RiskLevel = RiskField[RiskLevel]{Value: RiskLevel(s), Source: SourceServerMeta, Basis: basis(e.Key)}
		case "sideEffects":
			if !SideEffects(s).Valid() {
				bad(e.Key, fmt.Sprintf("%s is not one of none, internal, external", strictjson.Quote(s, 64)))
				continue
			}
			m.SideEffects = RiskField[SideEffects]{Value: SideEffects(s), Source: SourceServerMeta, Basis: basis(e.Key)}
		case "dataEgress":
			if !DataEgress(s).Valid() {
				bad(e.Key, fmt.Sprintf("%s is not one of none, network", strictjson.Quote(s, 64)))
				continue
			}
			m.DataEgress = RiskField[DataEgress]{Value: DataEgress(s), Source: SourceServerMeta, Basis: basis(e.Key)}
		default:
			bad(e.Key, "unknown field; the entry has riskLevel, sideEffects and dataEgress")
		}
	}
	return m, problems
}
