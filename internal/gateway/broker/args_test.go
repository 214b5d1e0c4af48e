package broker

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// slowArgs is decodeArgs without its shortcut for the empty object.
func slowArgs(raw json.RawMessage) (map[string]any, error) {
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the object")
	}
	return args, nil
}

func TestDecodeArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]any
		err  bool
	}{
		{`{}`, map[string]any{}, false},
		{" \t{}\r\n", map[string]any{}, false},
		{"{}\u00a0", nil, true},
		{`{} x`, nil, true},
		{`{"n":1.50,"s":"x"}`, map[string]any{"n": json.Number("1.50"), "s": "x"}, false},
		{`null`, nil, false},
		{`[1]`, nil, true},
		{``, nil, true},
	} {
		got, err := decodeArgs(json.RawMessage(tc.in))
		if (err != nil) != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("decodeArgs(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// FuzzDecodeArgs checks decodeArgs against the plain decoder.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{`{}`, " {} ", "{}\u00a0", `{"a":[1,{"b":null}]}`, `null`, `{}{}`, `{} ]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeArgs(raw)
		want, werr := slowArgs(raw)
		if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decodeArgs %v, %v; decoder %v, %v", raw, got, err, want, werr)
		}
	})
}
