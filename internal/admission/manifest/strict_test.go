package manifest

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestStrictReadsWhatMarshalWrites fills every field of the artefact types
// (through every nested struct, slice, map and pointer) and checks that the
// strict reader takes back what Marshal writes, to the same value: no field
// is spelt one way on the way out and refused on the way in.
func TestStrictReadsWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	for _, v := range []any{&Manifest{}, &Report{}} {
		fill(reflect.ValueOf(v).Elem(), 0)
		data, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		back := reflect.New(reflect.TypeOf(v).Elem())
		if err := decodeStrict(data, MaxReportBytes, back.Interface()); err != nil {
			t.Fatalf("%T: %v\n%s", v, err, data)
		}
		again, _ := Marshal(back.Interface())
		if string(again) != string(data) {
			t.Errorf("%T: read back differs:\n got %s\nwant %s", v, again, data)
		}
	}
}

// fill sets every settable field of v to a non-zero value.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Interface().(type) {
	case json.RawMessage:
		v.SetBytes([]byte(`{"k":[1]}`))
		return
	case time.Time:
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		v.SetUint(1)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}
