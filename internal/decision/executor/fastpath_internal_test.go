package executor

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// TestFastPathDifferential holds the fast path to what it shortcuts, on
// the real tools of the GitHub and GitLab servers and on values of every
// JSON type: a flat schema accepts exactly what the jsonschema library
// accepts, appendArgs writes exactly what encoding/json writes, and a
// direct copy yields what evaluating args.NAME in CEL yields.
func TestFastPathDifferential(t *testing.T) {
	values := []any{"x", "", "a\"b<c>&\u00e9\n", int64(0), int64(-7), uint64(1 << 63), 1.5, 2.0, true, false, nil,
		[]any{}, []any{"a", "b"}, []any{int64(1), "a"}, []any{[]any{"n"}}, map[string]any{}, map[string]any{"k": "v"}}
	flat := 0
	for _, file := range []string{"testdata/server-github-2025.4.8.tools.json", "testdata/server-gitlab-2025.4.25.tools.json", "testdata/bench-github-create.schema.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if json.Unmarshal(data, &list) != nil || len(list.Tools) == 0 {
			list.Tools = append(list.Tools[:0], struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}{"bench", data})
		}
		for _, tool := range list.Tools {
			fs, ok := flatOf(tool.InputSchema)
			if !ok {
				continue
			}
			flat++
			schema, err := compileSchema(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			sh, err := shapeOf(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			props := append([]string{"not_a_property"}, keys(sh.props)...)
			// Every property with every value, the required ones set to
			// each value in turn, and each required one left out.
			for _, p := range props {
				for _, v := range values {
					out := map[string]any{}
					for _, r := range sh.required {
						out[r] = "r"
					}
					out[p] = v
					check(t, tool.Name, fs, schema.Validate(out) == nil, out)
				}
			}
			for _, r := range sh.required {
				out := map[string]any{}
				for _, r2 := range sh.required {
					if r2 != r {
						out[r2] = "r"
					}
				}
				check(t, tool.Name, fs, schema.Validate(out) == nil, out)
			}
		}
	}
	if flat < 20 {
		t.Fatalf("only %d of the real tools have a flat schema; the fast path would rarely serve", flat)
	}
	// appendArgs against encoding/json.
	for i, v := range values {
		m := &Mapping{fields: []mappedField{{name: "a"}, {name: "b\u00e9"}, {name: "z"}}}
		out := map[string]any{"a": v, "z": values[(i+3)%len(values)]}
		if i%2 == 0 {
			out["b\u00e9"] = v
		}
		got, err := m.appendArgs(nil, out)
		want, _ := json.Marshal(out)
		if err != nil || string(got) != string(want) {
			t.Errorf("appendArgs(%v) = %s, %v; encoding/json writes %s", out, got, err, want)
		}
	}
}

func check(t *testing.T, tool string, fs *flatSchema, lib bool, out map[string]any) {
	t.Helper()
	if got := fs.valid(out); got != lib {
		t.Errorf("%s: flat schema says valid=%v, jsonschema says %v, for %v", tool, got, lib, out)
	}
}

func keys[V any](m map[string]V) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	return s
}

// TestDirectCopyDifferential: copying args.NAME yields what CEL yields.
func TestDirectCopyDifferential(t *testing.T) {
	ex := Builtin().Lookup("create_issue")
	tool := capability.Tool{ExtensionID: "s", CapabilityID: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}
	direct, err := CompileMapping(ex, tool, map[string]string{"a": "args.title", "b": "args.?labels", "c": `args["body"]`})
	if err != nil {
		t.Fatal(err)
	}
	evaluated, err := CompileMapping(ex, tool, map[string]string{"a": "args.title + ''", "b": "has(args.labels) ? optional.of(args.labels.map(l, l)) : optional.none()", "c": `args["body"] + ''`})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range direct.fields {
		if f.direct == "" {
			t.Fatalf("%s is not copied directly", f.name)
		}
	}
	for i, args := range []map[string]any{
		{"title": "T", "labels": []any{"a", "b"}, "body": "B\n<x>"},
		{"title": "", "body": ""},
		{"title": "é", "labels": []any{}, "body": "\u2028"},
	} {
		got, err1 := direct.Apply(args)
		want, err2 := evaluated.Apply(args)
		if fmt.Sprint(err1) != fmt.Sprint(err2) || string(got) != string(want) {
			t.Errorf("case %d: direct %s, %v; CEL %s, %v", i, got, err1, want, err2)
		}
	}
	// An absent required argument: the same error as CEL's.
	_, err = direct.Apply(map[string]any{"labels": []any{}, "body": "b"})
	if err == nil || err.Error() != "argument mapping failed: s/t: arguments.a: no such key: title" {
		t.Fatalf("absent: %v", err)
	}
}
