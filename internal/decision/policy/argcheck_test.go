package policy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// withSchema gives a fixture capability an input schema.
func withSchema(schema string) func(*policy.Capability) {
	return func(c *policy.Capability) { c.InputSchema = json.RawMessage(schema) }
}

// argFixtures are capabilities with the argument types of real tools:
// fs/write_file takes a path, fs/write_files paths (an array), search
// takes a number limit, fetch a free-form union.
func argFixtures() []policy.Capability {
	return []policy.Capability{
		capRecord("fs", "write_file", withSchema(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"mode":{"type":["string","null"]},"opts":{"type":"object","properties":{"dryRun":{"type":"boolean"}},"required":["dryRun"]}},"required":["path","content"]}`)),
		capRecord("fs", "write_files", withSchema(`{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}},"content":{"type":"string"}},"required":["paths","content"]}`)),
		capRecord("web", "search", withSchema(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"},"ratio":{"type":"number"},"target":{"oneOf":[{"type":"string"},{"type":"array"}]}},"required":["query","limit","ratio","target"]}`)),
		capRecord("web", "ping", withSchema(`{"type":"object"}`)),
		capRecord("web", "off", withSchema(`{"type":"object","properties":{"path":{"type":"array"}},"required":["path"]}`), func(c *policy.Capability) { c.Enabled = false }),
	}
}

// TestValidateArguments checks what `policy check` says about reads of
// call arguments, with context.args typed from each capability's input
// schema: exact warnings naming the policy, the capabilities, the
// argument and the fix, and silence where the read cannot fail (a has
// guard, a matching type) or cannot be typed (oneOf).
func TestValidateArguments(t *testing.T) {
	const fs = "tools/fs:fs/write_file"
	tests := []struct {
		name, text string
		want       []string
	}{
		{"array read with like", `@id("no-etc")
forbid (principal, action, resource == Capability::"tools/fs:fs/write_files") when { context.args.paths like "/etc/*" };`,
			[]string{`p.cedar:1: warning: policy "no-etc" fails to evaluate for capability tools/fs:fs/write_files: context.args.paths is a Set of String, and like needs a String; test its elements with .contains("…") or .containsAny([…]), or constrain the argument with @constraints`}},
		{"argument a capability does not take", `@id("no-etc") forbid (principal, action, resource in Skill::"tools/fs") when { context.args.path like "/etc/*" };`,
			[]string{`p.cedar:1: warning: policy "no-etc" fails to evaluate for capability tools/fs:fs/write_files: reads context.args.path, which it does not take; test it first: context.args has path && …`}},
		{"guarded", `@id("no-etc") forbid (principal, action, resource in Skill::"tools/fs") when { context.args has path && context.args.path like "/etc/*" };
forbid (principal, action, resource) when { context.args has paths && context.args.paths.contains("/etc/passwd") };`, nil},
		{"optional and nested", `@id("opt") permit (principal, action, resource in Skill::"tools/fs") when { context.args.mode == "x" || context.args has opts && context.args.opts.dryRun && context.args.opts.force };`,
			[]string{
				`p.cedar:1: warning: policy "opt" fails to evaluate for capability ` + fs + `: context.args.mode is optional in its input schema and a call may leave it out; test it first: context.args has mode && …`,
				`p.cedar:1: warning: policy "opt" fails to evaluate for capability ` + fs + `: reads context.args.opts.force, which its input schema does not declare; test it first: context.args.opts has force && …`,
				`p.cedar:1: warning: policy "opt" fails to evaluate for capability tools/fs:fs/write_files: reads context.args.mode, which it does not take; test it first: context.args has mode && …`,
			}},
		{"several capabilities", "\n\nforbid (principal, action, resource) when { context.args.query like \"*secret*\" };\nforbid (principal, action, resource) when { context.args.nothing };",
			[]string{`p.cedar:3: warning: the policy fails to evaluate for capabilities tools/fs:fs/write_file, tools/fs:fs/write_files and tools/web:web/ping: reads context.args.query, which they do not take; test it first: context.args has query && …`,
				`p.cedar:4: warning: the policy fails to evaluate for 4 capabilities (tools/fs:fs/write_file, tools/fs:fs/write_files, tools/web:web/ping and 1 more): reads context.args.nothing, which they do not take; test it first: context.args has nothing && …`}},
		{"numbers", `@id("lim") permit (principal, action, resource == Capability::"tools/web:web/search") when { context.args.limit > 3 && context.args.ratio < 2 && context.args.query < 4 };`,
			[]string{
				`p.cedar:1: warning: policy "lim" fails to evaluate for capability tools/web:web/search: context.args.ratio is a JSON Schema number, which arrives as a decimal when it is not whole, and < needs a Long; Cedar cannot test for a whole number, so prefer a capability whose schema declares it "integer"`,
				`p.cedar:1: warning: policy "lim" fails to evaluate for capability tools/web:web/search: context.args.query is a String, and < needs a Long; compare it with == or like instead`,
			}},
		{"unknown type skipped", `permit (principal, action, resource == Capability::"tools/web:web/search") when { context.args.target like "x" && context.args.target.contains(1) };`, nil},
		{"disabled and out of scope", `permit (principal, action, resource == Capability::"tools/web:web/off") when { context.args.nope };
permit (principal, action, resource in Skill::"other/skill") when { context.args.nope };`, nil},
		{"other operators", `@id("ops") forbid (principal, action, resource == Capability::"tools/fs:fs/write_file") when { context.args.path.contains("x") || context.args.content || context.args.opts.dryRun like "t" };`,
			[]string{
				`p.cedar:1: warning: policy "ops" fails to evaluate for capability ` + fs + `: context.args.path is a String, and .contains() needs a Set; match a String with like "*…*" or ==`,
				`p.cedar:1: warning: policy "ops" fails to evaluate for capability ` + fs + `: context.args.content is a String, and || needs a Bool; make a condition of it with == or like`,
				`p.cedar:1: warning: policy "ops" fails to evaluate for capability ` + fs + `: context.args.opts is optional in its input schema and a call may leave it out; test it first: context.args has opts && …`,
				`p.cedar:1: warning: policy "ops" fails to evaluate for capability ` + fs + `: context.args.opts.dryRun is a Bool, and like needs a String; compare it with == instead`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(tc.text)}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range policy.ValidateArguments(set, argFixtures()) {
				got = append(got, f.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestArgumentWarningsMatchEvaluation checks the warnings against the
// engine: a forbid warned about for a capability fails to evaluate on
// arguments valid under its input schema, and the call is denied; one
// that is not warned about decides normally.
func TestArgumentWarningsMatchEvaluation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, policy string
		cap          capability.Ref
		args         string
		warned       bool
	}{
		{"like on an array", `context.args.paths like "/etc/*"`, ref("fs", "write_files"), `{"paths":["/srv/a"],"content":""}`, true},
		{"argument not taken", `context.args.path like "/etc/*"`, ref("fs", "write_files"), `{"paths":["/srv/a"],"content":""}`, true},
		{"optional left out", `context.args.mode == "x"`, ref("fs", "write_file"), `{"path":"/srv/a","content":""}`, true},
		{"number not whole", `context.args.ratio > 3`, ref("web", "search"), `{"query":"q","limit":1,"ratio":0.5,"target":"t"}`, true},
		{"guarded", `context.args has path && context.args.path like "/etc/*"`, ref("fs", "write_files"), `{"paths":["/srv/a"],"content":""}`, false},
		{"matching type", `context.args.paths.contains("/etc/passwd")`, ref("fs", "write_files"), `{"paths":["/srv/a"],"content":""}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := "@id(\"all\") permit (principal, action, resource);\n@id(\"f\") forbid (principal, action, resource == Capability::\"" + tc.cap.String() + "\") when { " + tc.policy + " };\n"
			set, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(text)}})
			if err != nil {
				t.Fatal(err)
			}
			warned := len(policy.ValidateArguments(set, argFixtures())) > 0
			e := policy.New(nil)
			if err := e.SetPolicies(set); err != nil {
				t.Fatal(err)
			}
			if err := e.SetCapabilities(argFixtures()); err != nil {
				t.Fatal(err)
			}
			d := e.Evaluate(context.Background(), agent("a", "T3"), tc.cap, args(t, tc.args))
			failed := d.Effect == capability.Deny && len(d.Reasons) == 1 && strings.Contains(d.Reasons[0].Message, "failed to evaluate")
			if warned != tc.warned || failed != tc.warned {
				t.Errorf("warned %v, failed to evaluate %v (%+v); want both %v", warned, failed, d, tc.warned)
			}
		})
	}
}
