package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/policy"
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
		capability("fs", "write_file", withSchema(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"mode":{"type":["string","null"]},"opts":{"type":"object","properties":{"dryRun":{"type":"boolean"}},"required":["dryRun"]}},"required":["path","content"]}`)),
		capability("fs", "write_files", withSchema(`{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}},"content":{"type":"string"}},"required":["paths","content"]}`)),
		capability("web", "search", withSchema(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"},"ratio":{"type":"number"},"target":{"oneOf":[{"type":"string"},{"type":"array"}]}},"required":["query","limit","ratio","target"]}`)),
		capability("web", "ping", withSchema(`{"type":"object"}`)),
		capability("web", "off", withSchema(`{"type":"object","properties":{"path":{"type":"array"}},"required":["path"]}`), func(c *policy.Capability) { c.Enabled = false }),
	}
}

func TestValidateArgumentsExplore(t *testing.T) {
	for _, text := range []string{
		`@id("no-etc") forbid (principal, action, resource in Skill::"tools/fs") when { context.args.path like "/etc/*" };`,
		`@id("no-etc2") forbid (principal, action, resource in Skill::"tools/fs") when { context.args has path && context.args.path like "/etc/*" };`,
		`@id("paths") forbid (principal, action, resource == Capability::"tools/fs:fs/write_files") when { context.args.paths like "/etc/*" };`,
		`@id("lim") permit (principal, action, resource in Extension::"tools/web:web") when { context.args.limit > 3 && context.args.ratio < 2 && context.args.target like "x" };`,
		`@id("opt") permit (principal, action, resource) when { context.args.mode == "x" && context.args.opts.dryRun && context.args.opts.x == 1 };`,
	} {
		set, err := policy.ParsePolicies([]policy.Source{{Name: "p.cedar", Text: []byte(text)}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range policy.ValidateArguments(set, argFixtures()) {
			got = append(got, f.String())
		}
		t.Log("\n" + strings.Join(got, "\n"))
	}
}
