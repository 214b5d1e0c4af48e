package propose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// Field names of the model's output, as the response schema spells them.
const (
	fieldCapabilities = "capabilities"
	fieldPolicyHints  = "policyHints"
	fieldExtensionID  = "extensionId"
	fieldCapabilityID = "capabilityId"
	fieldReason       = "reason"
	fieldConstraints  = "constraints"
)

// itemFields and topFields are the fields the proposal format has.
var (
	itemFields = map[string]bool{fieldExtensionID: true, fieldCapabilityID: true, fieldReason: true, fieldConstraints: true}
	topFields  = map[string]bool{fieldCapabilities: true, fieldPolicyHints: true}
)

// parseOutput turns a model's message content into a draft proposal. The
// content must be one JSON object {"capabilities": [...], "policyHints": …}
// whose items carry string extensionId and capabilityId, an optional string
// reason and optional constraints (JSON text in a string, as the strict
// schema asks, or an object from a server that ignores the schema). Keys are
// case-sensitive and may not repeat. Fields the format lacks are tolerated
// here and reported by [Validate]. A Markdown code fence around the JSON, as
// servers without structured output add, is removed. Errors wrap
// [ErrMalformedOutput] and name the field.
func parseOutput(content []byte) (*Proposal, error) {
	data := stripFence(bytes.TrimSpace(content))
	if err := checkJSON(data); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedOutput, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: want a JSON object with a %q array, got %s", ErrMalformedOutput, fieldCapabilities, strictjson.Kind(data))
	}
	rawCaps, ok := top[fieldCapabilities]
	if !ok {
		return nil, fmt.Errorf("%w: %s: missing", ErrMalformedOutput, fieldCapabilities)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(rawCaps, &items); err != nil || items == nil {
		return nil, fmt.Errorf("%w: %s: want an array, got %s", ErrMalformedOutput, fieldCapabilities, strictjson.Kind(rawCaps))
	}
	p := &Proposal{Capabilities: make([]Item, 0, len(items)), Raw: json.RawMessage(data)}
	for i, raw := range items {
		it, fe := parseItem(raw)
		if fe != nil {
			path := fieldCapabilities + "[" + strconv.Itoa(i) + "]"
			if fe.field != "" {
				path += "." + fe.field
			}
			return nil, fmt.Errorf("%w: %s: %s", ErrMalformedOutput, path, fe.problem)
		}
		p.Capabilities = append(p.Capabilities, it)
	}
	if h := top[fieldPolicyHints]; !strictjson.IsNull(h) {
		p.PolicyHints = h
	}
	return p, nil
}

// fieldError is a problem with one field of an item (field is empty for the
// item itself); parseOutput prefixes the item's path.
type fieldError struct{ field, problem string }

// parseItem decodes one proposed capability.
func parseItem(raw json.RawMessage) (Item, *fieldError) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Item{}, &fieldError{"", "want an object, got " + strictjson.Kind(raw)}
	}
	var it Item
	var fe *fieldError
	if it.ExtensionID, fe = requiredString(obj, fieldExtensionID); fe != nil {
		return Item{}, fe
	}
	if it.CapabilityID, fe = requiredString(obj, fieldCapabilityID); fe != nil {
		return Item{}, fe
	}
	if r := obj[fieldReason]; !strictjson.IsNull(r) {
		if err := json.Unmarshal(r, &it.Reason); err != nil {
			return Item{}, &fieldError{fieldReason, "want a string or null, got " + strictjson.Kind(r)}
		}
	}
	if c := obj[fieldConstraints]; !strictjson.IsNull(c) {
		it.Constraints = constraintsValue(c)
	}
	return it, nil
}

// requiredString reads a string field that must be present.
func requiredString(obj map[string]json.RawMessage, field string) (string, *fieldError) {
	raw, ok := obj[field]
	if !ok {
		return "", &fieldError{field, "missing"}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &fieldError{field, "want a string, got " + strictjson.Kind(raw)}
	}
	return s, nil
}

// constraintsValue turns the constraints field into JSON for the caller's
// parser. The strict schema carries them as JSON text in a string: valid text
// is unwrapped, empty text means none, and text that is not JSON is kept as a
// JSON string so that [Validate] reports it with the parser's message rather
// than losing it.
func constraintsValue(c json.RawMessage) json.RawMessage {
	var s string
	if err := json.Unmarshal(c, &s); err != nil {
		return c // an object (or anything else) given directly
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "null":
		return nil
	case json.Valid([]byte(s)):
		return json.RawMessage(s)
	default:
		return json.RawMessage(strconv.Quote(s))
	}
}

// stripFence removes a Markdown code fence (```json … ```) around data.
func stripFence(data []byte) []byte {
	if !bytes.HasPrefix(data, []byte("```")) || !bytes.HasSuffix(data, []byte("```")) || len(data) < 6 {
		return data
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return data
	}
	return bytes.TrimSpace(data[nl+1 : len(data)-3])
}
