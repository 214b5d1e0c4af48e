package strictjson_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 5) + strings.Repeat("]", 5)
	tests := []struct {
		name, in string
		depth    int
		want     string
		kind     error
	}{
		{"object", `{"a":[1,{"b":null}],"c":"x"}`, 4, "", nil},
		{"scalar", ` 12 `, 4, "", nil},
		{"same key in two objects", `{"a":{"k":1},"b":{"k":2}}`, 4, "", nil},
		{"escaped keys differ", `{"a":1,"\u0062":2}`, 4, "", nil},
		{"empty", ``, 4, "not valid JSON: unexpected end of input", strictjson.ErrSyntax},
		{"cut off", `{"a":[1,`, 4, "not valid JSON: unexpected end of input", strictjson.ErrSyntax},
		{"bad character", `{"a":x}`, 4, "not valid JSON at byte 6: invalid character 'x' looking for beginning of value", strictjson.ErrSyntax},
		{"invalid UTF-8", "\"\xff\"", 4, "not valid UTF-8", strictjson.ErrInvalidUTF8},
		{"two values", `{} {}`, 4, "trailing data after the JSON object", strictjson.ErrTrailingData},
		{"trailing garbage", `[1] x`, 4, "trailing data after the JSON value", strictjson.ErrTrailingData},
		{"duplicate at top", `{"a":1,"a":2}`, 4, `duplicate key "a"`, strictjson.ErrDuplicateKey},
		{"duplicate nested", `{"a":[{"b":1},{"b":1,"b":2}]}`, 4, `a[1]: duplicate key "b"`, strictjson.ErrDuplicateKey},
		{"duplicate by escape", `{"k":{"ab":1,"a\u0062":2}}`, 4, `k: duplicate key "ab"`, strictjson.ErrDuplicateKey},
		{"case differs, not a duplicate", `{"a":1,"A":2}`, 4, "", nil},
		{"too deep", deep, 4, "[0][0][0][0]: nested more than 4 levels deep", strictjson.ErrTooDeep},
		{"too deep at top", `{}`, 0, "the document: nested more than 0 levels deep", strictjson.ErrTooDeep},
		{"deep enough", deep, 5, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := strictjson.Check([]byte(tc.in), tc.depth)
			assertErr(t, err, tc.want, tc.kind)
		})
	}
}

func TestDuplicateManyKeys(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("{")
	for i := range 100 {
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	b.WriteString(`"kxxxxx":2}`)
	err := strictjson.Check([]byte(b.String()), 4)
	assertErr(t, err, `duplicate key "kxxxxx"`, strictjson.ErrDuplicateKey)
}

func TestErrorBoundsHostileText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("k", 1000)
	err := strictjson.Check([]byte(`{"`+long+`":{"a":1,"a":2}}`), 4)
	want := strings.Repeat("k", 200) + `…: duplicate key "a"`
	assertErr(t, err, want, strictjson.ErrDuplicateKey)
	err = strictjson.Check([]byte(`{"`+long+`":1,"`+long+`":2}`), 4)
	assertErr(t, err, `duplicate key "`+strings.Repeat("k", 200)+`"… (1000 bytes)`, strictjson.ErrDuplicateKey)
}

func TestObject(t *testing.T) {
	t.Parallel()
	ms, err := strictjson.Object([]byte(` { "b" : [1, {"x":1,"x":2}] , "a":"s\"", "c" :null,"\u00e9":-1.5e3 } `))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Key+"="+string(m.Value))
	}
	want := `b=[1, {"x":1,"x":2}]|a="s\""|c=null|é=-1.5e3`
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("got %s\nwant %s", g, want)
	}

	for _, tc := range []struct{ in, want string }{
		{`[]`, "not a JSON object"},
		{`{"a":1,"a":1}`, `duplicate key "a"`},
		{`{"a":1} 2`, "trailing data after the JSON object"},
		{`{"a":`, "not valid JSON: unexpected end of input"},
	} {
		_, err := strictjson.Object([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Object(%s): got %v, want %s", tc.in, err, tc.want)
		}
	}
	if _, err := strictjson.Object([]byte(`"x"`)); !errors.Is(err, strictjson.ErrNotObject) {
		t.Errorf("a string: %v does not wrap ErrNotObject", err)
	}
}

func TestArray(t *testing.T) {
	t.Parallel()
	es, err := strictjson.Array([]byte(`[ "a", {"k":[]} ,3 ]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || string(es[0]) != `"a"` || string(es[1]) != `{"k":[]}` || string(es[2]) != "3" {
		t.Errorf("got %q", es)
	}
	if es, err := strictjson.Array([]byte(`[]`)); err != nil || len(es) != 0 {
		t.Errorf("empty array: %q, %v", es, err)
	}
	_, err = strictjson.Array([]byte(`{}`))
	assertErr(t, err, "not a JSON array", strictjson.ErrNotArray)
}

func TestScalars(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		s    string
		ok   bool
		kind string
	}{
		{`"plain"`, "plain", true, "a string"},
		{` "tab\tand \u00e9" `, "tab\tand é", true, "a string"},
		{`"a\"b"`, `a"b`, true, "a string"},
		{`1`, "", false, "a number"},
		{`null`, "", false, "null"},
		{`{}`, "", false, "an object"},
		{`[]`, "", false, "an array"},
		{`true`, "", false, "a boolean"},
		{``, "", false, "nothing"},
	} {
		s, ok := strictjson.String([]byte(tc.in))
		if s != tc.s || ok != tc.ok {
			t.Errorf("String(%s) = %q, %v; want %q, %v", tc.in, s, ok, tc.s, tc.ok)
		}
		if k := strictjson.Kind([]byte(tc.in)); k != tc.kind {
			t.Errorf("Kind(%s) = %s; want %s", tc.in, k, tc.kind)
		}
	}
	for in, want := range map[string][2]bool{"true": {true, true}, " false ": {false, true}, `"true"`: {false, false}, "1": {false, false}} {
		v, ok := strictjson.Bool([]byte(in))
		if v != want[0] || ok != want[1] {
			t.Errorf("Bool(%s) = %v, %v; want %v", in, v, ok, want)
		}
	}
	for in, want := range map[string]bool{"": true, " null ": true, `"null"`: false, "0": false} {
		if got := strictjson.IsNull([]byte(in)); got != want {
			t.Errorf("IsNull(%q) = %v", in, got)
		}
	}
}

// inner and outer cover the struct shapes Decode follows: tags, untagged
// fields, "-", embedding, pointers, maps, slices, raw values and types with
// their own UnmarshalJSON.
type inner struct {
	Value string `json:"value,omitempty"`
	N     int    `json:"n"`
}

type Embedded struct {
	Promoted string `json:"promoted"`
	Shadowed string `json:"name"`
}

type outer struct {
	Embedded
	Name    string            `json:"name"`
	Plain   string            // untagged: its Go name
	Skipped string            `json:"-"`
	Dash    string            `json:"-,"`
	In      *inner            `json:"in,omitempty"`
	List    []inner           `json:"list"`
	ByKey   map[string]inner  `json:"byKey"`
	Raw     json.RawMessage   `json:"raw,omitempty"`
	At      time.Time         `json:"at"`
	Any     any               `json:"any"`
	Grid    [][]int           `json:"grid"`
	Strs    map[string]string `json:"strs"`
	hidden  string
}

func TestDecode(t *testing.T) {
	t.Parallel()
	const ok = `{"name":"n","promoted":"p","Plain":"x","-":"d","in":{"value":"v","n":1},"list":[{"n":2}],"byKey":{"k":{"n":3}},` +
		`"raw":{"any":{"x":1,"x":2},"Name":1},"at":"2026-01-02T03:04:05Z","any":{"a":[1]},"grid":[[1,2]],"strs":{"a":"b","A":"c"}}`
	var got outer
	if err := strictjson.Decode([]byte(ok), &got, 8); err != nil {
		t.Fatal(err)
	}
	var want outer
	if err := json.Unmarshal([]byte(ok), &want); err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) || got.Name != "n" || got.Promoted != "p" || got.Dash != "d" || got.Shadowed != "" {
		t.Errorf("got  %s\nwant %s", g, w)
	}

	tests := []struct {
		name, in string
		want     string
		kind     error
	}{
		{"case variant of a tagged field", `{"Name":"n"}`, `unknown field "Name"`, strictjson.ErrUnknownField},
		{"case variant of an untagged field", `{"plain":"x"}`, `unknown field "plain"`, strictjson.ErrUnknownField},
		{"case variant nested", `{"in":{"Value":"v"}}`, `in: unknown field "Value"`, strictjson.ErrUnknownField},
		{"case variant in a list", `{"list":[{"n":1},{"N":1}]}`, `list[1]: unknown field "N"`, strictjson.ErrUnknownField},
		{"case variant in a map value", `{"byKey":{"k":{"VALUE":"v"}}}`, `byKey.k: unknown field "VALUE"`, strictjson.ErrUnknownField},
		{"unknown field", `{"extra":1}`, `unknown field "extra"`, strictjson.ErrUnknownField},
		{"ignored field by its Go name", `{"Skipped":"s"}`, `unknown field "Skipped"`, strictjson.ErrUnknownField},
		{"unexported field", `{"hidden":"s"}`, `unknown field "hidden"`, strictjson.ErrUnknownField},
		{"shadowed embedded field by Go name", `{"Shadowed":"s"}`, `unknown field "Shadowed"`, strictjson.ErrUnknownField},
		{"duplicate field", `{"name":"a","name":"b"}`, `duplicate key "name"`, strictjson.ErrDuplicateKey},
		{"duplicate map key", `{"strs":{"a":"1","a":"2"}}`, `strs: duplicate key "a"`, strictjson.ErrDuplicateKey},
		{"duplicate inside any", `{"any":[{"a":1,"a":2}]}`, `any[0]: duplicate key "a"`, strictjson.ErrDuplicateKey},
		{"too deep", `{"grid":[[1]]}`, `grid[0]: nested more than 2 levels deep`, strictjson.ErrTooDeep},
		{"trailing", `{} {}`, "trailing data after the JSON object", strictjson.ErrTrailingData},
		{"type error is encoding/json's", `{"in":[]}`, "json: cannot unmarshal array into Go struct field outer.in of type strictjson_test.inner", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var v outer
			depth := 8
			if tc.kind == strictjson.ErrTooDeep {
				depth = 2
			}
			err := strictjson.Decode([]byte(tc.in), &v, depth)
			assertErr(t, err, tc.want, tc.kind)
		})
	}
	if err := strictjson.Decode([]byte(`{}`), outer{}, 8); err == nil {
		t.Error("Decode into a non-pointer: no error")
	}
}

func assertErr(t *testing.T, err error, want string, kind error) {
	t.Helper()
	got := ""
	if err != nil {
		got = err.Error()
	}
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if kind != nil && !errors.Is(err, kind) {
		t.Errorf("%v does not wrap %v", err, kind)
	}
}
