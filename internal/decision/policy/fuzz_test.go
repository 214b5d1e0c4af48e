package policy

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParsePolicies feeds hostile policy documents to ParsePolicies. The
// seed corpus is in testdata/fuzz/FuzzParsePolicies. Properties: no panic;
// errors wrap ErrInvalidPolicy and name the document; an accepted set has
// unique ids, indexes without panicking, and its context-argument scan
// never misses a name the text reads with context.args.NAME.
func FuzzParsePolicies(f *testing.F) {
	f.Add([]byte(`@id("a") @constraints("{\"argValues\":{\"m\":[\"r*\"]}}") permit (principal == Agent::"t/a", action == Action::"invoke", resource in Extension::"s:e") when { context.args has m && context.args.m like "r*" };`))
	f.Add([]byte(`forbid (principal in Agent::"t/lead", action in [Action::"invoke"], resource is Capability in Skill::"s") unless { context["args"]["x"] == 1 };`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParsePolicies([]Source{{Name: "f.cedar", Text: data}})
		if err != nil {
			if !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), "f.cedar") {
				t.Fatalf("error: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, p := range set.policies {
			if seen[p.ID] {
				t.Fatalf("duplicate id %q", p.ID)
			}
			seen[p.ID] = true
		}
		newIndex(set)
		if !set.fullArgs {
			text := string(data)
			for i := strings.Index(text, "context.args."); i >= 0; i = strings.Index(text, "context.args.") {
				text = text[i+len("context.args."):]
				if name := identPrefix(text); name != "" {
					if _, ok := set.argNames[name]; !ok && set.Len() > 0 {
						// The name may sit in a comment or a string the
						// parser dropped; only a policy's own text counts.
						for _, p := range set.policies {
							if strings.Contains(string(p.cedar.MarshalCedar()), "context.args."+name) {
								t.Fatalf("argument %q is read but not collected", name)
							}
						}
					}
				}
			}
		}
	})
}
