package cedarinspect

import (
	"maps"
	"sort"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/resolved"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
)

// Schema is a resolved Cedar schema. It is immutable: [Schema.WithContextType]
// returns a changed copy.
type Schema struct{ rs *resolved.Schema }

// ParseSchema parses and resolves a schema in Cedar's text format;
// filename is the name its errors give.
func ParseSchema(filename string, text []byte) (*Schema, error) {
	var s schema.Schema
	s.SetFilename(filename)
	if err := s.UnmarshalCedar(text); err != nil {
		return nil, err
	}
	rs, err := s.Resolve()
	if err != nil {
		return nil, err
	}
	return &Schema{rs: rs}, nil
}

// EntityAttributes are the attribute names of entity type t, sorted (none
// for a type the schema does not declare).
func (s *Schema) EntityAttributes(t types.EntityType) []string {
	return recordNames(s.rs.Entities[t].Shape)
}

// ContextAttributes are the attribute names of action's context, sorted.
func (s *Schema) ContextAttributes(action types.EntityUID) []string {
	at := s.rs.Actions[action].AppliesTo
	if at == nil {
		return []string{}
	}
	return recordNames(at.Context)
}

// EntityTypes are the entity types the schema declares, sorted (action
// types aside).
func (s *Schema) EntityTypes() []string {
	var out []string
	for t := range s.rs.Entities {
		out = append(out, string(t))
	}
	sort.Strings(out)
	return out
}

func recordNames(r resolved.RecordType) []string {
	out := make([]string, 0, len(r))
	for k := range r {
		out = append(out, string(k))
	}
	sort.Strings(out)
	return out
}

// WithContextType is s with the type of action's context attribute attr
// replaced by t (the attribute keeps whether it is optional). s is not
// changed.
func (s *Schema) WithContextType(action types.EntityUID, attr string, t Type) *Schema {
	vs := *s.rs
	vs.Actions = maps.Clone(s.rs.Actions)
	act := vs.Actions[action]
	at := *act.AppliesTo
	at.Context = maps.Clone(at.Context)
	a := at.Context[types.String(attr)]
	a.Type = t.t
	at.Context[types.String(attr)] = a
	act.AppliesTo = &at
	vs.Actions[action] = act
	return &Schema{rs: &vs}
}

// Type is a Cedar type as a schema states it.
type Type struct{ t resolved.IsType }

// Attribute is one attribute of a record [Type].
type Attribute struct {
	Type     Type
	Optional bool
}

// StringType is Cedar's String.
func StringType() Type { return Type{resolved.StringType{}} }

// LongType is Cedar's Long.
func LongType() Type { return Type{resolved.LongType{}} }

// BoolType is Cedar's Bool.
func BoolType() Type { return Type{resolved.BoolType{}} }

// SetType is a Set of elem.
func SetType(elem Type) Type { return Type{resolved.SetType{Element: elem.t}} }

// RecordType is a record of attrs (none for an empty record).
func RecordType(attrs map[string]Attribute) Type {
	r := make(resolved.RecordType, len(attrs))
	for k, a := range attrs {
		r[types.String(k)] = resolved.Attribute{Type: a.Type.t, Optional: a.Optional}
	}
	return Type{r}
}

// Validator checks policies, entities and requests against a schema.
type Validator struct{ v *validate.Validator }

// NewValidator is Cedar's validator for s.
func NewValidator(s *Schema) *Validator {
	return &Validator{v: validate.New(s.rs)}
}

// Policy validates p, named id in the messages; the error joins every
// problem found.
func (v *Validator) Policy(id string, p *cedar.Policy) error {
	return v.v.Policy(id, (*xast.Policy)(p.AST()))
}

// Entity validates an entity.
func (v *Validator) Entity(e types.Entity) error {
	return v.v.Entity(e)
}

// Request validates a request (its entities' types, its context).
func (v *Validator) Request(r types.Request) error {
	return v.v.Request(r)
}
