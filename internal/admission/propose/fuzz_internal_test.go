package propose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fuzzTools is the inventory the fuzz targets validate against.
var fuzzTools = []Tool{
	{ExtensionID: "github", CapabilityID: "search_issues"},
	{ExtensionID: "github", CapabilityID: "create_issue"},
	{ExtensionID: "fs", CapabilityID: "read_file"},
	{ExtensionID: "everything", CapabilityID: "add"},
}

// anyParser accepts any constraints, so the fuzzer reaches the code that
// keeps them.
func anyParser(json.RawMessage) error { return nil }

// hasRiskKey reports whether the JSON value data holds a risk field at any
// depth.
func hasRiskKey(t *testing.T, data json.RawMessage) bool {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("kept JSON does not decode: %v: %q", err, data)
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if isRiskKey(k) || walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// hasTopRiskKey reports whether the JSON object data has a risk field of
// its own.
func hasTopRiskKey(t *testing.T, data json.RawMessage) bool {
	t.Helper()
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return false
	}
	for k := range obj {
		if isRiskKey(k) {
			return true
		}
	}
	return false
}

// FuzzParseOutput feeds hostile model output to parseOutput and Validate.
// The seed corpus is in testdata/fuzz/FuzzParseOutput. Properties: neither
// panics; a parse error wraps ErrMalformedOutput and stays short; a
// validated proposal marshals, names only inventory tools, once each,
// sorted, and carries no risk field among its constraint fields or
// anywhere in its policy hints.
func FuzzParseOutput(f *testing.F) {
	f.Add([]byte(`{"capabilities":[{"extensionId":"github","capabilityId":"search_issues","reason":"r","constraints":"{\"paths\":[\"a\"]}"}],"policyHints":["h"]}`))
	f.Fuzz(func(t *testing.T, content []byte) {
		p, err := parseOutput(content)
		if err != nil {
			if !errors.Is(err, ErrMalformedOutput) {
				t.Fatalf("error does not wrap ErrMalformedOutput: %v", err)
			}
			if len(err.Error()) > 1024 {
				t.Fatalf("error message is %d bytes", len(err.Error()))
			}
			return
		}
		v, cs := Validate(p, Input{Tools: fuzzTools}, anyParser)
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("validated proposal does not marshal: %v", err)
		}
		if _, err := json.Marshal(cs); err != nil {
			t.Fatalf("corrections do not marshal: %v", err)
		}
		known := map[toolKey]bool{}
		for _, tl := range fuzzTools {
			known[toolKey{tl.ExtensionID, tl.CapabilityID}] = true
		}
		seen := map[toolKey]bool{}
		for _, it := range v.Capabilities {
			k := toolKey{it.ExtensionID, it.CapabilityID}
			if !known[k] || seen[k] {
				t.Fatalf("kept %v (known %v, seen %v)", k, known[k], seen[k])
			}
			seen[k] = true
			if len(it.Reason) > MaxReasonBytes {
				t.Fatalf("reason of %d bytes", len(it.Reason))
			}
			if it.Constraints != nil && hasTopRiskKey(t, it.Constraints) {
				t.Fatalf("risk field kept in constraints %s", it.Constraints)
			}
		}
		if !slices.IsSortedFunc(v.Capabilities, func(a, b Item) int {
			return compareKey(toolKey{a.ExtensionID, a.CapabilityID}, toolKey{b.ExtensionID, b.CapabilityID})
		}) {
			t.Fatal("capabilities not sorted")
		}
		if v.PolicyHints != nil && hasRiskKey(t, v.PolicyHints) {
			t.Fatalf("risk field kept in policy hints %s", v.PolicyHints)
		}
		for _, c := range cs {
			switch c.Kind {
			case KindInventedCapability, KindRiskFieldRemoved, KindBadConstraints, KindDuplicate, KindUnknownField:
			default:
				t.Fatalf("correction kind %q", c.Kind)
			}
			if len(c.ExtensionID) > 200 || len(c.CapabilityID) > 200 || len(c.Field) > 200 || len(c.Detail) > 1024 {
				t.Fatalf("correction too long: %+v", c)
			}
		}
		// Validating a validated proposal changes nothing more.
		v2, cs2 := Validate(&Proposal{Proposer: v.Proposer, Capabilities: v.Capabilities, PolicyHints: v.PolicyHints}, Input{Tools: fuzzTools}, anyParser)
		if len(cs2) != 0 || len(v2.Capabilities) != len(v.Capabilities) {
			t.Fatalf("second Validate corrected again: %+v", cs2)
		}
	})
}

// FuzzDeterministic feeds hostile SKILL.md text and allowed-tools entries to
// the deterministic proposer. The seed corpus is in
// testdata/fuzz/FuzzDeterministic. Properties: it never panics, it proposes
// only inventory tools, once each, sorted, each with a reason, and its
// proposal passes Validate untouched.
func FuzzDeterministic(f *testing.F) {
	f.Add([]byte("---\nname: x\n---\nUse `add` and github/search_issues.\n"), "mcp__fs__read_file Bash(git:*)")
	f.Fuzz(func(t *testing.T, md []byte, allowed string) {
		in := Input{SkillMD: md, AllowedTools: strings.Fields(allowed), Tools: fuzzTools}
		p, err := Deterministic{}.Propose(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Capabilities) == 0 {
			t.Fatal("no capability proposed from a non-empty inventory")
		}
		for _, it := range p.Capabilities {
			if it.Reason == "" {
				t.Fatalf("%+v has no reason", it)
			}
		}
		v, cs := Validate(p, in, nil)
		if len(cs) != 0 || len(v.Capabilities) != len(p.Capabilities) {
			t.Fatalf("Validate corrected a deterministic proposal: %+v", cs)
		}
		for i := range v.Capabilities {
			a, b := v.Capabilities[i], p.Capabilities[i]
			if a.ExtensionID != b.ExtensionID || a.CapabilityID != b.CapabilityID || a.Reason != b.Reason {
				t.Fatalf("order or content changed at %d", i)
			}
		}
	})
}
