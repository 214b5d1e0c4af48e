package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
)

// TestSchemaPublished checks that docs/schemas/skillgate.cedarschema is
// the schema skillgate validates with.
func TestSchemaPublished(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schemas", "skillgate.cedarschema"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != policy.SchemaText {
		t.Fatal("docs/schemas/skillgate.cedarschema differs from policy/skillgate.cedarschema: cp policy/skillgate.cedarschema docs/schemas/")
	}
}

// TestValidatePolicies checks what schema validation reports: policies
// that can never apply are errors, policies that may fail to evaluate are
// warnings, and reads of call arguments are not reported.
func TestValidatePolicies(t *testing.T) {
	const see = " (see docs/schemas/skillgate.cedarschema)"
	const capAttrs = "its attributes are capability, egress, extension, riskLevel, sideEffects, skill, skillTier, trust" + see
	tests := []struct {
		name, text string
		want       []string
	}{
		{"valid", `@id("r") permit (principal, action == Action::"invoke", resource) when { resource.riskLevel == "read" && principal.tierLevel <= 3 };`, nil},
		{"default", policy.DefaultPolicyText, nil},
		{"scopes", `permit (principal in Agent::"acme/lead", action, resource in Skill::"tools/github");
forbid (principal, action, resource in Extension::"acme/notes:fs") when { resource.skill == "x" && resource.skillTier > 1 && principal.tenant == "acme" };`, nil},
		{"arguments", `permit (principal, action, resource) when { context.args has path && context.args.path like "/srv/*" };
permit (principal, action, resource) when { context.args.limit > 3 && context has delegated };`, nil},
		{"misspelt attribute", `@id("w") permit (principal, action, resource) when { resource.riskLvel == "read" };`,
			[]string{`p.cedar:1: error: policy "w": Capability has no attribute riskLvel (did you mean riskLevel?); ` + capAttrs}},
		{"unknown entity type", "\n\npermit (principal is User, action, resource);",
			[]string{`p.cedar:3: error: unknown entity type User; skillgate's types are Agent, Capability, Extension, Skill, Action` + see}},
		{"unknown resource type", `permit (principal, action, resource == Widget::"x");`,
			[]string{`p.cedar:1: error: unknown entity type Widget; skillgate's types are Agent, Capability, Extension, Skill, Action` + see}},
		{"unknown action", `permit (principal, action == Action::"invok", resource);`,
			[]string{`p.cedar:1: error: unknown action Action::"invok"; the only action is Action::"invoke"`}},
		{"context attribute", `permit (principal, action, resource) when { context.path == "x" };`,
			[]string{`p.cedar:1: error: the context has no attribute path; it has account, args, delegated, executor, session (call arguments are context.args.NAME)` + see}},
		{"optional attributes", `forbid (principal, action, resource) when { principal.parent.tier == "T1" || context.session like "x" };`,
			[]string{`p.cedar:1: warning: Agent.parent may be absent and the policy then fails to evaluate; test it first: … has parent && …`,
				`p.cedar:1: warning: context.session may be absent and the policy then fails to evaluate; test it first: … has session && …`}},
		{"type mismatch", `permit (principal, action, resource) when { resource.skillTier like "1" };`,
			[]string{`p.cedar:1: warning: unexpected type: expected String but saw Long; the policy fails to evaluate (or never matches) where this happens`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(tc.text)}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range policy.ValidatePolicies(set) {
				got = append(got, f.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestParseErrorsReadable checks that syntax errors say file:line:col,
// what was found and expected, and the usual fix.
func TestParseErrorsReadable(t *testing.T) {
	tests := []struct{ text, want string }{
		{`permit (principal, action = Action::"invoke", resource);`,
			`p.cedar:1:29: expected "," but found "="; compare with ==, not =`},
		{`permit (principal action, resource);`,
			`p.cedar:1:25: expected "," but found "action"; the scope is (principal …, action …, resource …) separated by commas, and compares with ==`},
		{`permit (principal, action, resource) when { resource.riskLevel == "read };`,
			`p.cedar:1:67: a string is not closed; end it with "`},
		{`permit (principal, action, resource) when { resource.riskLevel == "read" }`,
			`p.cedar:2:1: expected ";" but the text ended; end each policy with ;`},
		{`allow (principal, action, resource);`,
			`p.cedar:1:7: a policy starts with permit or forbid (after any @annotations), not "allow"`},
		{`permit (principal, action, resource) when resource.riskLevel == "read";`,
			`p.cedar:1:51: expected "{" but found "resource"; conditions go in braces: when { … } or unless { … }`},
		{`permit (principal, action, resource) when { resource.riskLevel === "read" };`,
			`p.cedar:1:68: found "\"read\"" where a value was expected: a string, a number, true or false, principal, action, resource, context, or an entity such as Agent::"acme/drafter" (compare with ==, not = or ===)`},
	}
	for _, tc := range tests {
		_, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(tc.text + "\n")}})
		if err == nil || !errors.Is(err, policy.ErrInvalidPolicy) || err.Error() != "invalid policy: "+tc.want {
			t.Errorf("%s\n got %v\nwant invalid policy: %s", tc.text, err, tc.want)
		}
	}
}
