package capability

import "fmt"

// RiskLevel is how much a capability can change: read < write < destructive.
type RiskLevel string

// The risk levels, least severe first.
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

// unknownRank is the rank of a value outside its set, the empty value
// included: above the most severe known value, so that an unknown value is
// never covered by a grant for a known one, never needs less approval than
// a known one and never sorts as the less severe of two.
const unknownRank = 1 << 8

// rank is the one severity order of the three sets: the position of v in
// order (least severe first), or unknownRank when v is not in it.
func rank[T ~string](v T, order ...T) int {
	for i, o := range order {
		if v == o {
			return i
		}
	}
	return unknownRank
}

func (l RiskLevel) rank() int { return rank(l, RiskRead, RiskWrite, RiskDestructive) }
func (s SideEffects) rank() int {
	return rank(s, SideEffectsNone, SideEffectsInternal, SideEffectsExternal)
}
func (e DataEgress) rank() int { return rank(e, EgressNone, EgressNetwork) }

// Valid reports whether l is one of the defined risk levels.
func (l RiskLevel) Valid() bool { return l.rank() != unknownRank }

// Valid reports whether s is one of the defined side-effect scopes.
func (s SideEffects) Valid() bool { return s.rank() != unknownRank }

// Valid reports whether e is one of the defined egress values.
func (e DataEgress) Valid() bool { return e.rank() != unknownRank }

// Compare orders risk levels by severity: negative when l is less severe
// than o, zero when equal, positive when more severe. A value outside the
// set (the empty one included) is more severe than destructive, and equal
// to any other unknown value.
func (l RiskLevel) Compare(o RiskLevel) int { return l.rank() - o.rank() }

// Compare orders side-effect scopes like [RiskLevel.Compare]: an unknown
// value is more severe than external.
func (s SideEffects) Compare(o SideEffects) int { return s.rank() - o.rank() }

// Compare orders egress values like [RiskLevel.Compare]: an unknown value
// is more severe than network.
func (e DataEgress) Compare(o DataEgress) int { return e.rank() - o.rank() }

// Source says where a risk field's value came from.
type Source string

// The sources of risk metadata.
const (
	// SourceServerMeta: the tool's _meta["io.skillgate/risk"] entry.
	SourceServerMeta Source = "server_meta"
	// SourceAnnotations: explicitly present MCP tool annotations.
	SourceAnnotations Source = "annotations"
	// SourceOperator: a human completed or overrode the value with a written
	// reason.
	SourceOperator Source = "operator"
)

// Valid reports whether s is one of the defined sources.
func (s Source) Valid() bool {
	return s == SourceServerMeta || s == SourceAnnotations || s == SourceOperator
}

// RiskField is one risk metadata field with its provenance. A zero Value
// means unknown.
type RiskField[T ~string] struct {
	// Value is the field's value, or empty when unknown.
	Value T `json:"value,omitempty"`
	// Source is where Value came from; empty when unknown.
	Source Source `json:"source,omitempty"`
	// Basis is the evidence: the annotations read, the _meta entry, or the
	// operator's reason.
	Basis string `json:"basis,omitempty"`
}

// Known reports whether the field has a value.
func (f RiskField[T]) Known() bool { return f.Value != "" }

// Risk is a capability's risk metadata, each field with where it came from:
// what manifests approve and install reports record.
type Risk struct {
	RiskLevel   RiskField[RiskLevel]   `json:"riskLevel"`
	SideEffects RiskField[SideEffects] `json:"sideEffects"`
	DataEgress  RiskField[DataEgress]  `json:"dataEgress"`
}

// Unknown returns the JSON names of the fields that are still unknown, in
// the order riskLevel, sideEffects, dataEgress. A caller must block the
// capability until each is supplied.
func (r Risk) Unknown() []string {
	var out []string
	if !r.RiskLevel.Known() {
		out = append(out, "riskLevel")
	}
	if !r.SideEffects.Known() {
		out = append(out, "sideEffects")
	}
	if !r.DataEgress.Known() {
		out = append(out, "dataEgress")
	}
	return out
}

// Check reports the first field of r that breaks a rule, for artefacts
// read back from storage: a value outside its set, a source outside its
// set, or a value without a source (or a source without a value). Unknown
// fields are allowed; see [Risk.Unknown].
func (r Risk) Check() error {
	if v := r.RiskLevel.Value; v != "" && !v.Valid() {
		return fmt.Errorf("risk.riskLevel %q is not read, write or destructive", v)
	}
	if v := r.SideEffects.Value; v != "" && !v.Valid() {
		return fmt.Errorf("risk.sideEffects %q is not none, internal or external", v)
	}
	if v := r.DataEgress.Value; v != "" && !v.Valid() {
		return fmt.Errorf("risk.dataEgress %q is not none or network", v)
	}
	for _, f := range []struct {
		name     string
		val, src string
	}{
		{"riskLevel", string(r.RiskLevel.Value), string(r.RiskLevel.Source)},
		{"sideEffects", string(r.SideEffects.Value), string(r.SideEffects.Source)},
		{"dataEgress", string(r.DataEgress.Value), string(r.DataEgress.Source)},
	} {
		if (f.val == "") != (f.src == "") {
			return fmt.Errorf("risk.%s: a value needs a source and a source a value", f.name)
		}
		if f.src != "" && !Source(f.src).Valid() {
			return fmt.Errorf("risk.%s.source %q is not server_meta, annotations or operator", f.name, f.src)
		}
	}
	return nil
}

// RiskMetadata is a capability's risk metadata as a server stated it, with
// the disagreements a reviewer should see.
type RiskMetadata struct {
	Risk
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
