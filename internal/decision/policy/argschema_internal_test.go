package policy

import (
	"encoding/json"
	"testing"

	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/decision/policy/internal/cedarinspect"
)

// TestArgTypesDescribeArgs checks the argument types `policy check` reads
// from input schemas (argsType) against the context the engine builds from
// arguments that conform to those schemas (argsValue): every such context
// validates against the schema variant, and one that breaks the type does
// not. The two sides of the mapping stay one.
func TestArgTypesDescribeArgs(t *testing.T) {
	rs, err := resolvedSchema()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, schema string
		valid        []string
		invalid      []string
	}{
		{"scalars", `{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"},"b":{"type":"boolean"},"e":{"enum":["a","b"]}},"required":["s","i","b","e"]}`,
			[]string{`{"s":"x","i":3,"b":true,"e":"a"}`, `{"s":"","i":-9007199254740991,"b":false,"e":"b"}`},
			[]string{`{"s":1,"i":3,"b":true,"e":"a"}`, `{"s":"x","i":3,"b":true}`}},
		{"optional and nullable", `{"type":"object","properties":{"s":{"type":["string","null"]},"n":{"type":"integer"}},"required":["s"]}`,
			[]string{`{"s":"x"}`, `{"s":null}`, `{"s":"x","n":2}`},
			[]string{`{"s":"x","n":"2"}`}},
		{"sets", `{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}},"ids":{"type":"array","items":{"type":"integer"}}},"required":["paths"]}`,
			[]string{`{"paths":["/a","/b"]}`, `{"paths":[],"ids":[1,2]}`},
			[]string{`{"paths":"/a"}`}},
		{"records", `{"type":"object","properties":{"opts":{"type":"object","properties":{"dryRun":{"type":"boolean"},"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}}},"required":["dryRun"]}},"required":["opts"]}`,
			[]string{`{"opts":{"dryRun":true}}`, `{"opts":{"dryRun":false,"tags":[{"k":"a"}]}}`},
			[]string{`{"opts":{"dryRun":"yes"}}`, `{"opts":{}}`}},
		{"whole numbers", `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`,
			[]string{`{"n":2}`, `{"n":-4}`},
			[]string{`{"n":"2"}`}},
		{"unknown left out", `{"type":"object","properties":{"u":{"oneOf":[{"type":"string"},{"type":"integer"}]},"s":{"type":"string"}},"required":["s"]}`,
			[]string{`{"s":"x"}`},
			[]string{`{"s":"x","u":"y"}`}}, // u is not in the schema: the variant cannot state it, reads are skipped
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := cedarinspect.NewValidator(argsSchema(rs, argsType(json.RawMessage(tc.schema))))
			check := func(js string) error {
				var a map[string]any
				if err := json.Unmarshal([]byte(js), &a); err != nil {
					t.Fatal(err)
				}
				ctx := types.NewRecord(types.RecordMap{"args": argsValue(a, 0)})
				return v.Request(types.Request{Principal: types.NewEntityUID(TypeAgent, "acme/a"), Action: ActionInvoke,
					Resource: types.NewEntityUID(TypeCapability, "s:e/c"), Context: ctx})
			}
			for _, js := range tc.valid {
				if err := check(js); err != nil {
					t.Errorf("%s: %v", js, err)
				}
			}
			for _, js := range tc.invalid {
				if check(js) == nil {
					t.Errorf("%s passed", js)
				}
			}
		})
	}
}

// TestArgsType checks the mapping's edge cases by signature.
func TestArgsType(t *testing.T) {
	tests := []struct{ schema, want string }{
		{``, `{}`},
		{`{"type":"object"}`, `{}`},
		{`{"type":"string"}`, `0`},
		{`not json`, `0`},
		{`{"type":"object","properties":{"a":{"type":["integer","number"]},"b":{"type":["string","integer"]},"c":{"type":"array"},"d":{"$ref":"#/x"},"e":{"const":true}},"required":["a","b","c","d","e"]}`,
			`{"a":3,"b":0,"c":[0],"d":0,"e":4,}`},
	}
	for _, tc := range tests {
		if got := argsType(json.RawMessage(tc.schema)).signature(); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.schema, got, tc.want)
		}
	}
}

// TestValidateArgumentsBounded checks that the work is capped and the
// cap is reported: one policy over three capabilities with distinct
// argument types, a limit of 2.
func TestValidateArgumentsBounded(t *testing.T) {
	set, err := ParsePolicies([]Source{{Name: "p.cedar", Text: []byte(`forbid (principal, action, resource) when { context.args.x };`)}})
	if err != nil {
		t.Fatal(err)
	}
	var caps []Capability
	for _, prop := range []string{"a", "b", "c"} {
		caps = append(caps, Capability{SkillKey: "s/k", ExtensionID: "e", CapabilityID: prop, Enabled: true, SkillState: SkillEnabled,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"` + prop + `":{"type":"string"}}}`)})
	}
	var got []string
	for _, f := range validateArguments(set, caps, 2) {
		got = append(got, f.String())
	}
	want := []string{
		"p.cedar:1: warning: the policy fails to evaluate for capabilities s/k:e/a and s/k:e/b: reads context.args.x, which they do not take; test it first: context.args has x && …",
		"warning: call arguments were checked for 2 policy and argument-type pairs, the limit; 1 more were not checked",
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}
