package executor

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/skillgate/skillgate/internal/platform/jsonscan"
)

// This file is the mapping's fast path, in one place: a hand-written
// check of the flat tool schemas most MCP servers publish (an object of
// typed properties, required names, additionalProperties) and a
// hand-written encoder of the mapped arguments. TestFastPathDifferential
// holds both to the library they shortcut: a flat schema accepts exactly
// what jsonschema accepts, and the encoder writes exactly what
// encoding/json writes. Anything else takes the library.

// flatType is what a flat schema says of one value: its JSON types (nil:
// any) and, for an array, its items.
type flatType struct {
	types []string
	items *flatType
}

// flatSchema is a tool input schema the fast path checks by hand.
type flatSchema struct {
	props    map[string]flatType
	required []string
	closed   bool
}

// flatOf returns the flat form of an object schema, or false when it uses
// a keyword the fast path does not check (enum, pattern, minLength, $ref
// …): those schemas are checked by the library alone.
func flatOf(raw json.RawMessage) (*flatSchema, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil, false
	}
	f := &flatSchema{props: map[string]flatType{}}
	for k, v := range top {
		switch k {
		case "$schema", "description", "title", "$comment":
		case "type":
			var t string
			if json.Unmarshal(v, &t) != nil || t != "object" {
				return nil, false
			}
		case "required":
			if json.Unmarshal(v, &f.required) != nil {
				return nil, false
			}
		case "additionalProperties":
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return nil, false
			}
			f.closed = !b
		case "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil {
				return nil, false
			}
			for name, p := range props {
				ft, ok := flatTypeOf(p, 0)
				if !ok {
					return nil, false
				}
				f.props[name] = ft
			}
		default:
			return nil, false
		}
	}
	if _, ok := top["type"]; !ok {
		return nil, false
	}
	return f, true
}

func flatTypeOf(raw json.RawMessage, depth int) (flatType, bool) {
	var s map[string]json.RawMessage
	if depth > 4 || json.Unmarshal(raw, &s) != nil {
		return flatType{}, false
	}
	var ft flatType
	for k, v := range s {
		switch k {
		case "description", "title", "default", "$comment":
		case "type":
			var one string
			if json.Unmarshal(v, &one) == nil {
				ft.types = []string{one}
			} else if json.Unmarshal(v, &ft.types) != nil {
				return flatType{}, false
			}
			for _, t := range ft.types {
				switch t {
				case "string", "integer", "number", "boolean", "null", "array":
				default: // "object" values would need their own schema
					return flatType{}, false
				}
			}
		case "items":
			it, ok := flatTypeOf(v, depth+1)
			if !ok {
				return flatType{}, false
			}
			ft.items = &it
		default:
			return flatType{}, false
		}
	}
	if _, ok := s["type"]; !ok && ft.items != nil {
		return flatType{}, false // items without a type: leave it to the library
	}
	return ft, true
}

// valid reports whether out satisfies the schema. A false answer is
// confirmed by the library, which also words the error.
func (f *flatSchema) valid(out map[string]any) bool {
	for _, r := range f.required {
		if _, ok := out[r]; !ok {
			return false
		}
	}
	for k, v := range out {
		ft, ok := f.props[k]
		if !ok {
			if f.closed {
				return false
			}
			continue
		}
		if !ft.valid(v) {
			return false
		}
	}
	return true
}

func (ft *flatType) valid(v any) bool {
	if ft.types != nil {
		ok := false
		for _, t := range ft.types {
			if isJSONType(v, t) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if a, isArray := v.([]any); isArray && ft.items != nil {
		for _, e := range a {
			if !ft.items.valid(e) {
				return false
			}
		}
	}
	return true
}

// isJSONType reports whether v, a value toJSON returned, is of JSON Schema
// type t: an integer is any number without a fractional part.
func isJSONType(v any, t string) bool {
	switch x := v.(type) {
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case int64, uint64:
		return t == "integer" || t == "number"
	case float64:
		return t == "number" || t == "integer" && x == math.Trunc(x)
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

// appendArgs writes the mapped arguments as encoding/json writes the map
// (keys sorted, which the mapping's fields already are).
func (m *Mapping) appendArgs(b []byte, out map[string]any) ([]byte, error) {
	b = append(b, '{')
	first := true
	for _, f := range m.fields {
		v, ok := out[f.name]
		if !ok {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, jsonscan.Quote(f.name)...)
		b = append(b, ':')
		switch x := v.(type) {
		case string:
			if jsonscan.Plain(x) {
				b = append(b, '"')
				b = append(b, x...)
				b = append(b, '"')
			} else {
				q, _ := json.Marshal(x)
				b = append(b, q...)
			}
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case bool:
			b = strconv.AppendBool(b, x)
		default:
			q, err := json.Marshal(x)
			if err != nil {
				return nil, err
			}
			b = append(b, q...)
		}
	}
	return append(b, '}'), nil
}
