package executor

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// MaxSchemaDepth bounds how deeply a schema's JSON nests (objects and
// arrays), as the MCP client bounds the tool schemas it introspects:
// compiling a schema costs more than linear time in its depth.
const MaxSchemaDepth = 64

// compileSchema compiles a JSON Schema object (draft 2020-12 unless it
// says otherwise), never following a remote $ref: schemas come from
// files and upstream servers, both outside input. A schema nested deeper
// than MaxSchemaDepth, or with a key twice in an object, is refused first.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if err := strictjson.Check(raw, MaxSchemaDepth); err != nil {
		return nil, fmt.Errorf("%v (schemas nest at most %d levels, each key once)", err, MaxSchemaDepth)
	}
	return capability.CompileSchema("skillgate:executor-schema.json", raw)
}

// objectShape is what the mappings need to know of an object schema: its
// top-level properties with their JSON types, which are required, and
// whether properties it does not list are refused.
type objectShape struct {
	props    map[string][]string // property → JSON types; nil slice: any type
	required []string
	closed   bool // additionalProperties: false
}

// shapeOf reads the top-level shape of an object schema. It reads only
// "type" of each property, "required" and "additionalProperties"; the
// full schema still validates every value.
func shapeOf(raw json.RawMessage) (objectShape, error) {
	var s struct {
		Type                 any                        `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties any                        `json:"additionalProperties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return objectShape{}, fmt.Errorf("not a JSON Schema object: %v", err)
	}
	if s.Type != "object" {
		return objectShape{}, fmt.Errorf(`must have "type": "object"`)
	}
	sh := objectShape{props: map[string][]string{}, required: s.Required, closed: s.AdditionalProperties == false}
	for name, p := range s.Properties {
		var ps struct {
			Type any `json:"type"`
		}
		if err := json.Unmarshal(p, &ps); err != nil {
			return objectShape{}, fmt.Errorf("properties.%s: not a JSON Schema object", name)
		}
		switch t := ps.Type.(type) {
		case string:
			sh.props[name] = []string{t}
		case []any:
			var ts []string
			for _, x := range t {
				if s, ok := x.(string); ok {
					ts = append(ts, s)
				}
			}
			sh.props[name] = ts
		default:
			sh.props[name] = nil
		}
	}
	slices.Sort(sh.required)
	return sh, nil
}

// names returns the shape's property names, sorted, for messages.
func (s objectShape) names() string {
	n := make([]string, 0, len(s.props))
	for k := range s.props {
		n = append(n, k)
	}
	slices.Sort(n)
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}
