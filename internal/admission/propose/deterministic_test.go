package propose_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/propose"
)

// testTools is a small inventory of three servers, deliberately unsorted.
var testTools = []propose.Tool{
	{ExtensionID: "github", CapabilityID: "search_issues", Description: "Search issues"},
	{ExtensionID: "fs", CapabilityID: "write_file"},
	{ExtensionID: "everything", CapabilityID: "echo"},
	{ExtensionID: "github", CapabilityID: "create_issue"},
	{ExtensionID: "fs", CapabilityID: "read_file"},
	{ExtensionID: "everything", CapabilityID: "add"},
	{ExtensionID: "everything", CapabilityID: "printEnv"},
	{ExtensionID: "github", CapabilityID: "search_issues"}, // listed twice
	{ExtensionID: "", CapabilityID: "nameless"},            // no server id: ignored
}

// mustJSON marshals v or fails the test.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	const body = "---\nname: triage\nallowed-tools: mcp__fs__write_file\ndescription: Triage issues. Uses read_file.\n---\n" +
		"# Triage\n" + // line 6
		"1. Find duplicates with `search_issues`.\n" + // line 7
		"2. Then call github.create_issue: once.\n" + // line 8
		"3. echo the result and add a note.\n" + // line 9: plain words, not tools
		"4. Print it with printEnv, then `add` the totals.\r\n" + // line 10
		"5. See fs/read_file and read_file_x and xsearch_issues.\n" // line 11
	tests := []struct {
		name    string
		allowed []string
		md      string
		tools   []propose.Tool
		want    string
	}{
		{
			name:    "allowed-tools in Claude Code's mcp form, with built-ins that name no MCP tool",
			allowed: []string{"mcp__github__search_issues", "Bash(git:*)", "Read"},
			tools:   testTools,
			want:    `{"proposer":"deterministic","capabilities":[{"extensionId":"github","capabilityId":"search_issues","reason":"listed in allowed-tools as mcp__github__search_issues"}]}`,
		},
		{
			name:    "allowed-tools as server/tool, server.tool, server:tool and a bare name",
			allowed: []string{"github/create_issue", "fs.read_file", "github:search_issues", "write_file", "write_file"},
			tools:   testTools,
			want: `{"proposer":"deterministic","capabilities":[` +
				`{"extensionId":"fs","capabilityId":"read_file","reason":"listed in allowed-tools as fs.read_file"},` +
				`{"extensionId":"fs","capabilityId":"write_file","reason":"listed in allowed-tools as write_file"},` +
				`{"extensionId":"github","capabilityId":"create_issue","reason":"listed in allowed-tools as github/create_issue"},` +
				`{"extensionId":"github","capabilityId":"search_issues","reason":"listed in allowed-tools as github:search_issues"}]}`,
		},
		{
			name:    "a whole server, and an argument pattern",
			allowed: []string{"mcp__everything", "mcp__github__search_issues(repo:*)"},
			tools:   testTools,
			want: `{"proposer":"deterministic","capabilities":[` +
				`{"extensionId":"everything","capabilityId":"add","reason":"listed in allowed-tools as mcp__everything"},` +
				`{"extensionId":"everything","capabilityId":"echo","reason":"listed in allowed-tools as mcp__everything"},` +
				`{"extensionId":"everything","capabilityId":"printEnv","reason":"listed in allowed-tools as mcp__everything"},` +
				`{"extensionId":"github","capabilityId":"search_issues","reason":"listed in allowed-tools as mcp__github__search_issues(repo:*)"}]}`,
		},
		{
			name:    "wildcard forms",
			allowed: []string{"mcp__fs__*", "github/*"},
			tools:   testTools[:5],
			want: `{"proposer":"deterministic","capabilities":[` +
				`{"extensionId":"fs","capabilityId":"read_file","reason":"listed in allowed-tools as mcp__fs__*"},` +
				`{"extensionId":"fs","capabilityId":"write_file","reason":"listed in allowed-tools as mcp__fs__*"},` +
				`{"extensionId":"github","capabilityId":"create_issue","reason":"listed in allowed-tools as github/*"},` +
				`{"extensionId":"github","capabilityId":"search_issues","reason":"listed in allowed-tools as github/*"}]}`,
		},
		{
			name:  "mentions in the body; frontmatter and plain words do not count",
			md:    body,
			tools: testTools,
			want: `{"proposer":"deterministic","capabilities":[` +
				`{"extensionId":"everything","capabilityId":"add","reason":"mentioned in SKILL.md line 10"},` +
				`{"extensionId":"everything","capabilityId":"printEnv","reason":"mentioned in SKILL.md line 10"},` +
				`{"extensionId":"fs","capabilityId":"read_file","reason":"mentioned in SKILL.md line 11"},` +
				`{"extensionId":"github","capabilityId":"create_issue","reason":"mentioned in SKILL.md line 8"},` +
				`{"extensionId":"github","capabilityId":"search_issues","reason":"mentioned in SKILL.md line 7"}]}`,
		},
		{
			name:    "allowed-tools wins over a mention for the reason",
			allowed: []string{"mcp__github__search_issues"},
			md:      "Use search_issues, then github/create_issue.\n",
			tools:   testTools,
			want: `{"proposer":"deterministic","capabilities":[` +
				`{"extensionId":"github","capabilityId":"create_issue","reason":"mentioned in SKILL.md line 1"},` +
				`{"extensionId":"github","capabilityId":"search_issues","reason":"listed in allowed-tools as mcp__github__search_issues"}]}`,
		},
		{
			name:  "a bare name shared by two servers selects both",
			md:    "---\nname: x\n---\nCall `lookup`.\n",
			tools: []propose.Tool{{ExtensionID: "b", CapabilityID: "lookup"}, {ExtensionID: "a", CapabilityID: "lookup"}},
			want: `{"proposer":"deterministic","capabilities":[` +
				`{"extensionId":"a","capabilityId":"lookup","reason":"mentioned in SKILL.md line 4"},` +
				`{"extensionId":"b","capabilityId":"lookup","reason":"mentioned in SKILL.md line 4"}]}`,
		},
		{
			name:    "nothing named: every tool",
			allowed: []string{"Bash(git:*)", "Read"},
			md:      "---\nname: x\n---\nSummarise the document and echo nothing.\n",
			tools:   testTools[:3],
			want: `{"proposer":"deterministic","capabilities":[` +
				`{"extensionId":"everything","capabilityId":"echo","reason":"no tool named; all tools proposed"},` +
				`{"extensionId":"fs","capabilityId":"write_file","reason":"no tool named; all tools proposed"},` +
				`{"extensionId":"github","capabilityId":"search_issues","reason":"no tool named; all tools proposed"}]}`,
		},
		{
			name:    "no tools at all",
			allowed: []string{"mcp__github__search_issues"},
			md:      body,
			want:    `{"proposer":"deterministic","capabilities":[]}`,
		},
		{
			name:    "a hostile allowed-tools entry is quoted in the reason",
			allowed: []string{"mcp__github__search_issues(\x1b[31m)"},
			tools:   testTools,
			want:    `{"proposer":"deterministic","capabilities":[{"extensionId":"github","capabilityId":"search_issues","reason":"listed in allowed-tools as \"mcp__github__search_issues(\\x1b[31m)\""}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := propose.Deterministic{}.Propose(context.Background(), propose.Input{
				Skill: "triage", SkillMD: []byte(tc.md), AllowedTools: tc.allowed, Tools: tc.tools,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(t, p); got != tc.want {
				t.Errorf("proposal\n got %s\nwant %s", got, tc.want)
			}
			// A deterministic proposal passes validation untouched.
			v, cs := propose.Validate(p, propose.Input{Tools: tc.tools}, nil)
			if len(cs) != 0 || mustJSON(t, v) != tc.want {
				t.Errorf("Validate changed a deterministic proposal: %s %+v", mustJSON(t, v), cs)
			}
		})
	}
}

func TestDeterministicCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := propose.Deterministic{}.Propose(ctx, propose.Input{Tools: testTools})
	if !errors.Is(err, context.Canceled) || err.Error() != "deterministic proposer: context canceled" {
		t.Fatalf("err = %v; want deterministic proposer: context canceled", err)
	}
}
