package propose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// Bounds that Validate applies.
const (
	// MaxConstraintsBytes bounds one item's constraints; larger ones are
	// dropped as bad_constraints.
	MaxConstraintsBytes = 16 << 10
	// MaxReasonBytes bounds an item's reason; a longer one is shortened.
	MaxReasonBytes = 1024
	// maxDetailBytes bounds a correction's detail (a parser's message).
	maxDetailBytes = 512
)

// Validate is the deterministic gate between a proposer and everything
// else: the only view of a proposal the install pipeline trusts. It returns
// a new proposal and the corrections it made; p is not modified.
//
// The returned proposal holds only capabilities that introspection reported
// in in.Tools (exact extensionId and capabilityId), each once (the first
// occurrence wins), sorted by extensionId then capabilityId, with a reason
// of at most [MaxReasonBytes] of printable UTF-8, and with constraints only
// when they are valid JSON of at most [MaxConstraintsBytes] that
// parseConstraints accepts (a nil parser accepts none). Risk metadata is
// never added and is removed wherever a proposer put it: fields named like
// riskLevel, sideEffects, dataEgress, risk*, annotations, the MCP hint names
// or _meta, among an item's constraint fields (not deeper, where keys are
// argument names), anywhere in the policy hints, and anywhere in the model's
// raw output (where it is reported; Raw itself is kept verbatim as evidence,
// or as a JSON string when it is not valid JSON).
//
// Each change is one [Correction]; corrections are sorted by extensionId and
// capabilityId (proposal-wide ones first), otherwise in the order found.
// Validate is a pure function: the same input always gives the same output.
func Validate(p *Proposal, in Input, parseConstraints func(json.RawMessage) error) (*Proposal, []Correction) {
	out := &Proposal{Capabilities: []Item{}}
	if p == nil {
		return out, nil
	}
	out.Proposer = p.Proposer
	var cs []Correction

	if len(bytes.TrimSpace(p.Raw)) > 0 {
		raw := bytes.Clone(p.Raw)
		if checkJSON(raw) != nil {
			// Keep the evidence, in a form that still marshals.
			raw, _ = marshalJSON(strings.ToValidUTF8(string(raw), "\uFFFD"))
		} else {
			cs = append(cs, rawCorrections(raw)...)
		}
		out.Raw = raw
	}

	known := make(map[toolKey]bool, len(in.Tools))
	for _, t := range in.Tools {
		if t.ExtensionID != "" && t.CapabilityID != "" {
			known[toolKey{t.ExtensionID, t.CapabilityID}] = true
		}
	}
	seen := make(map[toolKey]bool, len(p.Capabilities))
	for _, it := range p.Capabilities {
		k := toolKey{it.ExtensionID, it.CapabilityID}
		switch {
		case !known[k]:
			cs = append(cs, Correction{Kind: KindInventedCapability, ExtensionID: k.ext, CapabilityID: k.cap,
				Detail: "introspection reported no tool " + named(k.cap) + " on server " + named(k.ext) + "; item dropped"})
			continue
		case seen[k]:
			cs = append(cs, Correction{Kind: KindDuplicate, ExtensionID: k.ext, CapabilityID: k.cap,
				Detail: "proposed more than once; the first occurrence was kept"})
			continue
		}
		seen[k] = true
		item := Item{ExtensionID: k.ext, CapabilityID: k.cap, Reason: cleanText(it.Reason, MaxReasonBytes)}
		if !strictjson.IsNull(it.Constraints) {
			c, ccs := checkConstraints(it.Constraints, parseConstraints)
			for i := range ccs {
				ccs[i].ExtensionID, ccs[i].CapabilityID = k.ext, k.cap
			}
			cs = append(cs, ccs...)
			item.Constraints = c
		}
		out.Capabilities = append(out.Capabilities, item)
	}
	sortItems(out.Capabilities)

	if !strictjson.IsNull(p.PolicyHints) {
		hints, removed, err := stripRisk(p.PolicyHints, fieldPolicyHints, -1)
		if err != nil {
			cs = append(cs, Correction{Kind: KindUnknownField, Field: fieldPolicyHints, Detail: err.Error() + "; policy hints dropped"})
		} else {
			for _, path := range removed {
				cs = append(cs, riskCorrection(path))
			}
			out.PolicyHints = hints
		}
	}

	for i := range cs {
		// Ids and field names in corrections come from the proposer: keep
		// them short and printable (quoted when they are not).
		cs[i].ExtensionID = display(cs[i].ExtensionID)
		cs[i].CapabilityID = display(cs[i].CapabilityID)
		cs[i].Field = display(cs[i].Field)
	}
	slices.SortStableFunc(cs, func(a, b Correction) int {
		return compareKey(toolKey{a.ExtensionID, a.CapabilityID}, toolKey{b.ExtensionID, b.CapabilityID})
	})
	return out, cs
}

// checkConstraints returns the constraints to keep (nil for none) and the
// corrections made to them, without item ids.
func checkConstraints(c json.RawMessage, parse func(json.RawMessage) error) (json.RawMessage, []Correction) {
	bad := func(detail string) []Correction {
		return []Correction{{Kind: KindBadConstraints, Field: fieldConstraints, Detail: detail + "; constraints dropped"}}
	}
	if len(c) > MaxConstraintsBytes {
		return nil, bad(fmt.Sprintf("larger than %d bytes", MaxConstraintsBytes))
	}
	if err := checkJSON(c); err != nil {
		return nil, bad(cleanText(err.Error(), maxDetailBytes))
	}
	// Only the constraint set's own fields can state risk. Deeper keys are
	// argument names (argValues: {"readOnly": ["true"]}), and removing one
	// would loosen a restriction; the parser judges those.
	kept, removed, err := stripRisk(c, fieldConstraints, 1)
	if err != nil {
		return nil, bad(cleanText(err.Error(), maxDetailBytes))
	}
	var cs []Correction
	for _, path := range removed {
		cs = append(cs, riskCorrection(path))
	}
	if strictjson.IsNull(kept) {
		return nil, cs
	}
	if parse == nil {
		return nil, append(cs, bad("no constraint parser is configured")...)
	}
	if err := parse(kept); err != nil {
		return nil, append(cs, bad(cleanText(err.Error(), maxDetailBytes))...)
	}
	return kept, cs
}

// named shows an id in a message; an empty one as "".
func named(id string) string {
	if id == "" {
		return `""`
	}
	return display(id)
}

// riskCorrection reports a removed risk field at path.
func riskCorrection(path string) Correction {
	return Correction{Kind: KindRiskFieldRemoved, Field: path,
		Detail: "risk metadata comes from the MCP server or an operator, never from a proposer; removed"}
}

// rawCorrections reports what the model's raw output held beyond the
// proposal format: risk fields and unknown fields at the top level and in
// each item, and risk fields nested in unknown fields. raw is valid JSON.
func rawCorrections(raw []byte) []Correction {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	cs := extraFields(top, topFields, "", "", "")
	var items []json.RawMessage
	if json.Unmarshal(top[fieldCapabilities], &items) != nil {
		return cs
	}
	for i, item := range items {
		var obj map[string]json.RawMessage
		if json.Unmarshal(item, &obj) != nil {
			continue
		}
		var ext, cap string
		_ = json.Unmarshal(obj[fieldExtensionID], &ext)
		_ = json.Unmarshal(obj[fieldCapabilityID], &cap)
		cs = append(cs, extraFields(obj, itemFields, ext, cap, fieldCapabilities+"["+strconv.Itoa(i)+"]")...)
	}
	return cs
}

// extraFields reports the keys of obj that known lacks, in key order.
func extraFields(obj map[string]json.RawMessage, known map[string]bool, ext, cap, where string) []Correction {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if !known[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var cs []Correction
	for _, k := range keys {
		if isRiskKey(k) {
			c := riskCorrection(k)
			c.ExtensionID, c.CapabilityID = ext, cap
			cs = append(cs, c)
			continue
		}
		detail := "not a field of a proposal; ignored"
		if where != "" {
			detail = "not a field of a proposed capability (" + where + "); ignored"
		}
		cs = append(cs, Correction{Kind: KindUnknownField, ExtensionID: ext, CapabilityID: cap, Field: k, Detail: detail})
		if _, removed, err := stripRisk(obj[k], k, -1); err == nil {
			for _, path := range removed {
				c := riskCorrection(path)
				c.ExtensionID, c.CapabilityID = ext, cap
				cs = append(cs, c)
			}
		}
	}
	return cs
}

// riskKeys are the normalised names (lower case, without '_', '-' and
// spaces) of fields that state risk, besides any name containing "risk".
var riskKeys = map[string]bool{
	"sideeffect": true, "sideeffects": true, "dataegress": true, "egress": true,
	"annotations": true, "annotation": true, "meta": true,
	"readonlyhint": true, "destructivehint": true, "idempotenthint": true, "openworldhint": true,
	"readonly": true, "destructive": true, "idempotent": true, "openworld": true,
}

// isRiskKey reports whether a field name states risk metadata.
func isRiskKey(k string) bool {
	n := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == ' ' {
			return -1
		}
		return unicode.ToLower(r)
	}, k)
	return strings.Contains(n, "risk") || riskKeys[n]
}

// stripRisk removes every risk field from the JSON value data, in objects
// nested at most depth deep (the top-level object is depth 1; -1 means any
// depth), and returns the result with the JSON paths (under prefix) of what
// it removed. Unchanged data is returned compacted; changed data is
// re-encoded with sorted keys.
func stripRisk(data json.RawMessage, prefix string, depth int) (json.RawMessage, []string, error) {
	if err := checkJSON(data); err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("not JSON: %w", err)
	}
	var removed []string
	v = walkStrip(v, prefix, depth, &removed)
	if len(removed) == 0 {
		return compactJSON(data), nil, nil
	}
	out, err := marshalJSON(v)
	if err != nil {
		return nil, nil, err
	}
	return out, removed, nil
}

// walkStrip removes risk fields from v down to depth, recording their paths.
func walkStrip(v any, path string, depth int, removed *[]string) any {
	if depth == 0 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if isRiskKey(k) {
				*removed = append(*removed, joinPath(path, k))
				delete(x, k)
				continue
			}
			x[k] = walkStrip(x[k], joinPath(path, k), depth-1, removed)
		}
	case []any:
		for i := range x {
			x[i] = walkStrip(x[i], path+"["+strconv.Itoa(i)+"]", depth, removed)
		}
	}
	return v
}

// cleanText makes s safe to show: valid UTF-8, control characters as
// spaces, surrounding space trimmed, at most max bytes (then ending in "…").
func cleanText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > max {
		s = truncateUTF8(s, max-len("…")) + "…"
	}
	if !utf8.ValidString(s) {
		return ""
	}
	return s
}
