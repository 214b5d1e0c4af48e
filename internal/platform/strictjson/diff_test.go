package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// The reference for what strictjson accepts is encoding/json plus two facts
// its token stream tells: whether a key repeats within an object and how
// deep the document nests. refFacts computes them independently of the
// package's own scanner.
type refFacts struct {
	valid bool // utf8.Valid and json.Valid
	dup   bool
	depth int
}

func reference(data []byte) refFacts {
	f := refFacts{valid: utf8.Valid(data) && json.Valid(data)}
	if !f.valid {
		return f
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		obj     bool
		wantKey bool
		keys    map[string]bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return f
		}
		if err != nil {
			panic(fmt.Sprintf("json.Valid accepted %q but Token failed: %v", data, err))
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].obj {
			top := &stack[n-1]
			if top.wantKey {
				k := tok.(string)
				if top.keys[k] {
					f.dup = true
				}
				top.keys[k] = true
				top.wantKey = false
				continue
			}
			top.wantKey = true
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{obj: d == '{', wantKey: d == '{', keys: map[string]bool{}})
			f.depth = max(f.depth, len(stack))
		}
	}
}

// checkAgainstReference asserts that Check, Object and Decode agree with
// encoding/json on data.
func checkAgainstReference(t *testing.T, data []byte) {
	t.Helper()
	const maxDepth = 8
	ref := reference(data)
	err := strictjson.Check(data, maxDepth)
	wantOK := ref.valid && !ref.dup && ref.depth <= maxDepth
	if (err == nil) != wantOK {
		t.Fatalf("Check(%q) = %v; reference: %+v", data, err, ref)
	}
	if err != nil {
		var e *strictjson.Error
		if !errors.As(err, &e) {
			t.Fatalf("Check(%q): %T is not *strictjson.Error", data, err)
		}
		switch {
		case !utf8.Valid(data):
			if e.Kind != strictjson.ErrInvalidUTF8 {
				t.Fatalf("Check(%q) = %v; want ErrInvalidUTF8", data, err)
			}
		case !ref.valid:
			if e.Kind != strictjson.ErrSyntax && e.Kind != strictjson.ErrTrailingData {
				t.Fatalf("Check(%q) = %v; want a syntax error", data, err)
			}
		case ref.dup && ref.depth > maxDepth:
			if e.Kind != strictjson.ErrDuplicateKey && e.Kind != strictjson.ErrTooDeep {
				t.Fatalf("Check(%q) = %v", data, err)
			}
		case ref.dup:
			if e.Kind != strictjson.ErrDuplicateKey {
				t.Fatalf("Check(%q) = %v; want ErrDuplicateKey", data, err)
			}
		default:
			if e.Kind != strictjson.ErrTooDeep {
				t.Fatalf("Check(%q) = %v; want ErrTooDeep", data, err)
			}
		}
		_ = err.Error() // words any error without panicking
	}

	// Object: on a document without repeated keys, the members are what
	// encoding/json decodes into a map, in document order.
	members, oerr := strictjson.Object(data)
	if ref.valid && !ref.dup {
		var m map[string]json.RawMessage
		jerr := json.Unmarshal(data, &m)
		isObject := strictjson.Kind(data) == "an object"
		if (oerr == nil) != isObject || (jerr == nil) != (isObject || strictjson.IsNull(data)) {
			t.Fatalf("Object(%q) = %v; json.Unmarshal: %v", data, oerr, jerr)
		}
		if oerr == nil {
			if len(members) != len(m) {
				t.Fatalf("Object(%q): %d members; encoding/json: %d", data, len(members), len(m))
			}
			for _, mb := range members {
				if want, ok := m[mb.Key]; !ok || !bytes.Equal(mb.Value, want) {
					t.Fatalf("Object(%q): %q = %s; encoding/json: %s", data, mb.Key, mb.Value, want)
				}
			}
		}
	} else if oerr == nil && !ref.valid {
		t.Fatalf("Object(%q) accepted invalid JSON", data)
	}

	// Decode: whatever it accepts, json.Unmarshal decodes to the same value.
	var got, want outer
	if derr := strictjson.Decode(data, &got, maxDepth); derr == nil {
		if jerr := json.Unmarshal(data, &want); jerr != nil {
			t.Fatalf("Decode(%q) accepted what json.Unmarshal refuses: %v", data, jerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q):\n got %+v\nwant %+v", data, got, want)
		}
	}
}

// TestDifferentialValid runs the reference comparison over documents
// encoding/json wrote from random values, so every one is valid, plus
// variants with a key repeated, a key's case changed and extra nesting.
func TestDifferentialValid(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		v := randomOuter(r)
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := strictjson.Check(data, 8); err != nil {
			t.Fatalf("%d: Check(%s): %v", i, data, err)
		}
		var got outer
		if err := strictjson.Decode(data, &got, 8); err != nil {
			t.Fatalf("%d: Decode(%s): %v", i, data, err)
		}
		var want outer
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d: Decode(%s):\n got %+v\nwant %+v", i, data, got, want)
		}
		checkAgainstReference(t, data)
		for _, variant := range mutate(r, data) {
			checkAgainstReference(t, variant)
		}
	}
}

// mutate returns data with one key repeated, one key's first letter's case
// changed, and wrapped in arrays.
func mutate(r *rand.Rand, data []byte) [][]byte {
	s := string(data)
	var out [][]byte
	if i := strings.Index(s, `{"`); i >= 0 {
		j := i + 1 + strings.Index(s[i+1:], `":`)
		key := s[i+1 : j+1]
		out = append(out, []byte(s[:i+1]+key+`:0,`+s[i+1:]))
		up := strings.ToUpper(key[:2]) + key[2:]
		out = append(out, []byte(s[:i+1]+up+s[j+1:]))
	}
	n := r.IntN(12)
	out = append(out, []byte(strings.Repeat("[", n)+s+strings.Repeat("]", n)))
	return out
}

func randomOuter(r *rand.Rand) outer {
	str := func() string {
		const alphabet = "aZ09 \"\\/<>&\té\u2028\x01"
		rs := []rune(alphabet)
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteRune(rs[r.IntN(len(rs))])
		}
		return b.String()
	}
	in := func() inner { return inner{Value: str(), N: r.IntN(100) - 50} }
	var o outer
	o.Name, o.Plain, o.Promoted, o.Dash = str(), str(), str(), str()
	if r.IntN(2) == 0 {
		v := in()
		o.In = &v
	}
	for range r.IntN(3) {
		o.List = append(o.List, in())
	}
	if r.IntN(2) == 0 {
		o.ByKey = map[string]inner{}
		for range r.IntN(3) {
			o.ByKey[str()] = in()
		}
	}
	if r.IntN(2) == 0 {
		o.Raw = json.RawMessage(`{"k":[1,"` + strconv.Itoa(r.IntN(9)) + `"]}`)
	}
	switch r.IntN(3) {
	case 0:
		o.Any = map[string]any{str(): []any{1.5, str(), nil, true}}
	case 1:
		o.Any = str()
	}
	for range r.IntN(3) {
		o.Grid = append(o.Grid, []int{r.IntN(9), r.IntN(9)})
	}
	return o
}

// FuzzCheck compares Check, Object and Decode with encoding/json on any
// input. The seed corpus is in testdata/fuzz/FuzzCheck.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"name":"n","in":{"value":"v","n":1},"list":[{"n":2}]}`,
		`{"a":1,"a":2}`, `{"Name":"x"}`, `[[[[[[[[[[1]]]]]]]]]]`, `{"a":{"b":"\u0062"}}`,
		`{"k":1,"\u006b":2}`, `{} {}`, `"\ud800"`, "\"\xff\"", `-0.0e+1`, `{"any":{"x":[{"y":null}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAgainstReference)
}
