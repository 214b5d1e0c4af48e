package policy

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/internal/decision/policy/internal/cedarinspect"
)

// The Cedar type of a call argument, read from the capability's input
// JSON Schema. It states what cedarValue builds from an argument that
// conforms to the schema (the broker checks every call's arguments
// against it before the policy decides), so one set of rules, written
// down in [argsValue] and here, and checked against each other by
// TestArgTypesDescribeArgs:
//
//	JSON Schema            Cedar (context.args)
//	string                 String
//	integer                Long
//	number                 Long when whole, decimal otherwise (argNumber)
//	boolean                Bool
//	array                  Set of the items' type
//	object                 record of its properties; required ones
//	                       required, the others optional
//	["T", "null"]          T, optional (null is left out)
//	enum/const only        the kind all its values share
//	anything else          unknown: reads of it are not checked
//
// Unknown covers oneOf/anyOf/allOf/not/if/$ref, several types, an array
// without items, and values deeper than MaxArgDepth (left out of the
// context).

// argKind is the Cedar type an argument arrives as.
type argKind uint8

const (
	// argUnknown: not representable; reads of it are not checked.
	argUnknown argKind = iota
	argString
	argLong
	// argNumber: a JSON Schema number, a Long when whole and a decimal
	// otherwise. The Cedar schema types it Long.
	argNumber
	argBool
	argSet
	argRecord
)

// argType is the Cedar type of an argument.
type argType struct {
	kind  argKind
	elem  *argType           // argSet: the elements' type
	attrs map[string]argAttr // argRecord: the properties
}

// argAttr is one attribute of a record argument.
type argAttr struct {
	t        *argType
	required bool
}

// maxArgSchemaNodes bounds the subschemas read from one input schema;
// the rest are unknown (not checked).
const maxArgSchemaNodes = 512

var unknownArg = &argType{kind: argUnknown}

// argsType reads a capability's input JSON Schema as the Cedar type of
// context.args. An empty schema is the empty object (as the broker
// treats it); a schema that is not an object is unknown.
func argsType(raw json.RawMessage) *argType {
	if len(raw) == 0 {
		return &argType{kind: argRecord, attrs: map[string]argAttr{}}
	}
	var s any
	if err := json.Unmarshal(raw, &s); err != nil {
		return unknownArg
	}
	budget := maxArgSchemaNodes
	t, _ := schemaArgType(s, 0, &budget)
	if t.kind != argRecord {
		return unknownArg
	}
	return t
}

// schemaArgType maps one subschema at depth (0 for context.args, as in
// argsValue) to a Cedar type; nullable is true when null is allowed (a
// null argument is left out of the context).
func schemaArgType(s any, depth int, budget *int) (t *argType, nullable bool) {
	m, ok := s.(map[string]any)
	*budget--
	if !ok || *budget < 0 || depth > MaxArgDepth {
		return unknownArg, false
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "if", "$ref", "$dynamicRef", "prefixItems"} {
		if _, ok := m[k]; ok {
			return unknownArg, false
		}
	}
	names := map[string]bool{}
	switch v := m["type"].(type) {
	case string:
		names[v] = true
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				names[s] = true
			} else {
				return unknownArg, false
			}
		}
	case nil:
		return enumArgType(m), false
	default:
		return unknownArg, false
	}
	nullable = names["null"]
	delete(names, "null")
	if names["integer"] && names["number"] {
		delete(names, "integer")
	}
	if len(names) != 1 {
		return unknownArg, nullable
	}
	var name string
	for n := range names {
		name = n
	}
	switch name {
	case "string":
		return &argType{kind: argString}, nullable
	case "integer":
		return &argType{kind: argLong}, nullable
	case "number":
		return &argType{kind: argNumber}, nullable
	case "boolean":
		return &argType{kind: argBool}, nullable
	case "array":
		items, ok := m["items"]
		if !ok {
			return &argType{kind: argSet, elem: unknownArg}, nullable
		}
		elem, _ := schemaArgType(items, depth+1, budget)
		return &argType{kind: argSet, elem: elem}, nullable
	case "object":
		t := &argType{kind: argRecord, attrs: map[string]argAttr{}}
		var required []string
		if r, ok := m["required"].([]any); ok {
			for _, e := range r {
				if s, ok := e.(string); ok {
					required = append(required, s)
				}
			}
		}
		props, _ := m["properties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(props)) {
			at, null := schemaArgType(props[k], depth+1, budget)
			t.attrs[k] = argAttr{t: at, required: !null && slices.Contains(required, k)}
		}
		return t, nullable
	}
	return unknownArg, nullable
}

// enumArgType types a schema without "type" by its enum or const: the
// kind all the values share, else unknown.
func enumArgType(m map[string]any) *argType {
	vals, ok := m["enum"].([]any)
	if c, has := m["const"]; has {
		vals, ok = []any{c}, true
	}
	if !ok || len(vals) == 0 {
		return unknownArg
	}
	var kind argKind
	for _, v := range vals {
		k := argUnknown
		switch v := v.(type) {
		case string:
			k = argString
		case bool:
			k = argBool
		case float64:
			if v == math.Trunc(v) && math.Abs(v) <= 9.2e18 {
				k = argLong
			}
		}
		if k == argUnknown || kind != argUnknown && k != kind {
			return unknownArg
		}
		kind = k
	}
	return &argType{kind: kind}
}

// cedarType is t in the Cedar schema, false when it cannot be written
// there (unknown, or a set of unknown elements). Unrepresentable record
// attributes are left out of their record.
func (t *argType) cedarType() (cedarinspect.Type, bool) {
	switch t.kind {
	case argString:
		return cedarinspect.StringType(), true
	case argLong, argNumber:
		return cedarinspect.LongType(), true
	case argBool:
		return cedarinspect.BoolType(), true
	case argSet:
		e, ok := t.elem.cedarType()
		if !ok {
			return cedarinspect.Type{}, false
		}
		return cedarinspect.SetType(e), true
	case argRecord:
		r := map[string]cedarinspect.Attribute{}
		for k, a := range t.attrs {
			if ct, ok := a.t.cedarType(); ok {
				r[k] = cedarinspect.Attribute{Type: ct, Optional: !a.required}
			}
		}
		return cedarinspect.RecordType(r), true
	}
	return cedarinspect.Type{}, false
}

// signature is a canonical text of t: capabilities whose arguments have
// the same signature are checked once.
func (t *argType) signature() string {
	var b strings.Builder
	t.writeSignature(&b)
	return b.String()
}

func (t *argType) writeSignature(b *strings.Builder) {
	switch t.kind {
	case argSet:
		b.WriteString("[")
		t.elem.writeSignature(b)
		b.WriteString("]")
	case argRecord:
		b.WriteString("{")
		for _, k := range slices.Sorted(maps.Keys(t.attrs)) {
			a := t.attrs[k]
			b.WriteString(strconv.Quote(k))
			if !a.required {
				b.WriteString("?")
			}
			b.WriteString(":")
			a.t.writeSignature(b)
			b.WriteString(",")
		}
		b.WriteString("}")
	default:
		b.WriteString(strconv.Itoa(int(t.kind)))
	}
}

// name is how findings call t: "a String", "a Set of String".
func (t *argType) name() string {
	switch t.kind {
	case argString:
		return "a String"
	case argLong:
		return "a Long"
	case argNumber:
		return "a number (a Long when whole, else a decimal)"
	case argBool:
		return "a Bool"
	case argSet:
		if t.elem.kind == argUnknown {
			return "a Set"
		}
		return "a Set of " + strings.TrimPrefix(strings.TrimPrefix(t.elem.name(), "a "), "an ")
	case argRecord:
		return "a record"
	}
	return "of unknown type"
}
