package propose_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/skillgate/skillgate/internal/admission/propose"
)

// The deterministic proposer picks the tools a skill names, and Validate
// confirms the draft against introspection.
func ExampleDeterministic() {
	in := propose.Input{
		Skill:        "triage",
		SkillMD:      []byte("---\nname: triage\n---\nFind duplicates with `search_issues`.\n"),
		AllowedTools: []string{"mcp__github__create_issue"},
		Tools: []propose.Tool{
			{ExtensionID: "github", CapabilityID: "search_issues"},
			{ExtensionID: "github", CapabilityID: "create_issue"},
			{ExtensionID: "github", CapabilityID: "delete_repo"},
		},
	}
	draft, _ := propose.Deterministic{}.Propose(context.Background(), in)
	p, corrections := propose.Validate(draft, in, nil)
	for _, it := range p.Capabilities {
		fmt.Printf("%s/%s: %s\n", it.ExtensionID, it.CapabilityID, it.Reason)
	}
	fmt.Println(len(corrections), "corrections")
	// Output:
	// github/create_issue: listed in allowed-tools as mcp__github__create_issue
	// github/search_issues: mentioned in SKILL.md line 4
	// 0 corrections
}

// Validate drops what introspection did not report and any risk a proposer
// stated, and says so.
func ExampleValidate() {
	in := propose.Input{Tools: []propose.Tool{{ExtensionID: "fs", CapabilityID: "read_file"}}}
	draft := &propose.Proposal{
		Proposer: "llm:example",
		Capabilities: []propose.Item{
			{ExtensionID: "fs", CapabilityID: "read_file", Constraints: json.RawMessage(`{"pathGlobs":["/srv/docs/**"],"riskLevel":"read"}`)},
			{ExtensionID: "fs", CapabilityID: "delete_tree"},
		},
	}
	accept := func(json.RawMessage) error { return nil } // the real one is the caller's constraint parser
	p, corrections := propose.Validate(draft, in, accept)
	out, _ := json.Marshal(p)
	fmt.Println(string(out))
	for _, c := range corrections {
		fmt.Printf("%s %s/%s %s: %s\n", c.Kind, c.ExtensionID, c.CapabilityID, c.Field, c.Detail)
	}
	// Output:
	// {"proposer":"llm:example","capabilities":[{"extensionId":"fs","capabilityId":"read_file","constraints":{"pathGlobs":["/srv/docs/**"]}}]}
	// invented_capability fs/delete_tree : introspection reported no tool delete_tree on server fs; item dropped
	// risk_field_removed fs/read_file constraints.riskLevel: risk metadata comes from the MCP server or an operator, never from a proposer; removed
}
