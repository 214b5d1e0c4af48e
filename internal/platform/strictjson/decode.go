package strictjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"unicode"
)

// Decode reads data, exactly one JSON value in valid UTF-8, into v, which
// must be a non-nil pointer, as json.Unmarshal does, but strictly: within
// every object decoded into a struct or a map, a repeated key is refused;
// every key of an object decoded into a struct must name one of its fields
// exactly (case-sensitively; json.Unmarshal would also take "Name" for
// "name"); and objects and arrays decoded into Go values nest at most
// maxDepth deep. Values decoded by their own UnmarshalJSON (json.RawMessage,
// time.Time, …) are checked for syntax only and left to that reader, as are
// the values of an interface-typed field's object, which are checked like
// [Check]. Type errors are encoding/json's.
func Decode(data []byte, v any, maxDepth int) error {
	start, _, err := value(data)
	if err != nil {
		return err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	d := decoder{walker: walker{data: data, maxDepth: maxDepth}, fields: map[reflect.Type]map[string]reflect.Type{}}
	if _, err := d.typed(start, rv.Type().Elem(), 0, nil); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// decoder walks a document along the Go type it is decoded into.
type decoder struct {
	walker
	fields map[reflect.Type]map[string]reflect.Type // per struct type, by JSON name
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// typed checks the value at i, decoded into t, depth levels deep, and
// returns the index after it.
func (d *decoder) typed(i int, t reflect.Type, depth int, at *path) (int, error) {
	for t.Kind() == reflect.Pointer {
		if reflect.PointerTo(t).Implements(unmarshalerType) {
			return d.skip(i), nil
		}
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType) {
		return d.skip(i), nil
	}
	c := d.data[i]
	if c != '{' && c != '[' {
		return d.skip(i), nil // scalars: encoding/json checks their type
	}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return d.any(i, depth, at)
		}
	case reflect.Struct:
		if c == '{' && !reflect.PointerTo(t).Implements(textUnmarshalerType) {
			if depth >= d.maxDepth {
				return 0, &Error{Kind: ErrTooDeep, Path: orTop(at), Limit: d.maxDepth}
			}
			fields := d.structFields(t)
			return d.object(i, at, func(key string, start int) (int, error) {
				ft, ok := fields[key]
				if !ok {
					return 0, &Error{Kind: ErrUnknownField, Path: at.String(), Key: key}
				}
				return d.typed(start, ft, depth+1, &path{parent: at, key: key, isKey: true})
			})
		}
	case reflect.Map:
		if c == '{' {
			if depth >= d.maxDepth {
				return 0, &Error{Kind: ErrTooDeep, Path: orTop(at), Limit: d.maxDepth}
			}
			elem := t.Elem()
			return d.object(i, at, func(key string, start int) (int, error) {
				return d.typed(start, elem, depth+1, &path{parent: at, key: key, isKey: true})
			})
		}
	case reflect.Slice, reflect.Array:
		if c == '[' {
			if depth >= d.maxDepth {
				return 0, &Error{Kind: ErrTooDeep, Path: orTop(at), Limit: d.maxDepth}
			}
			elem := t.Elem()
			return d.array(i, at, func(n, start int) (int, error) {
				return d.typed(start, elem, depth+1, &path{parent: at, index: n})
			})
		}
	}
	return d.skip(i), nil // a type mismatch: encoding/json reports it
}

// structFields returns the JSON names of t's fields, as encoding/json
// decodes them, with their types.
func (d *decoder) structFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := d.fields[t]; ok {
		return f
	}
	f := map[string]reflect.Type{}
	for _, sf := range jsonFields(t) {
		f[sf.name] = sf.typ
	}
	d.fields[t] = f
	return f
}

type jsonField struct {
	name   string
	typ    reflect.Type
	depth  int
	tagged bool
}

// jsonFields lists the fields encoding/json decodes into t, following its
// rules: exported fields, named by their tag or their Go name, "-" left
// out, the fields of untagged embedded structs promoted, and of several
// fields with one name the shallowest wins, then the only tagged one, else
// none.
func jsonFields(t reflect.Type) []jsonField {
	var all []jsonField
	var walk func(t reflect.Type, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			sf := t.Field(i)
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if !validTagName(name) {
				name = ""
			}
			if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
				walk(ft, depth+1, seen)
				continue
			}
			tagged := name != ""
			if name == "" {
				name = sf.Name
			}
			all = append(all, jsonField{name: name, typ: sf.Type, depth: depth, tagged: tagged})
		}
	}
	walk(t, 0, map[reflect.Type]bool{})

	byName := map[string][]jsonField{}
	var order []string
	for _, f := range all {
		if _, ok := byName[f.name]; !ok {
			order = append(order, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	var out []jsonField
	for _, name := range order {
		if f, ok := dominant(byName[name]); ok {
			out = append(out, f)
		}
	}
	return out
}

// dominant picks the field encoding/json uses among fields of one name.
func dominant(fs []jsonField) (jsonField, bool) {
	shallowest := fs[0].depth
	for _, f := range fs {
		shallowest = min(shallowest, f.depth)
	}
	var shallow []jsonField
	for _, f := range fs {
		if f.depth == shallowest {
			shallow = append(shallow, f)
		}
	}
	if len(shallow) == 1 {
		return shallow[0], true
	}
	var tagged []jsonField
	for _, f := range shallow {
		if f.tagged {
			tagged = append(tagged, f)
		}
	}
	if len(tagged) == 1 {
		return tagged[0], true
	}
	return jsonField{}, false
}

// validTagName is encoding/json's rule for a usable tag name.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
