package propose_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/propose"
)

// parsePathsConstraints stands in for the constraint parser the install
// pipeline passes: a closed object with "pathGlobs" and "allowedDomains" lists.
func parsePathsConstraints(c json.RawMessage) error {
	var v struct {
		Paths   []string `json:"pathGlobs"`
		Domains []string `json:"allowedDomains"`
	}
	dec := json.NewDecoder(bytes.NewReader(c))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("constraints: %w", err)
	}
	return nil
}

func TestValidate(t *testing.T) {
	t.Parallel()
	in := propose.Input{Tools: testTools}
	const riskDetail = "risk metadata comes from the MCP server or an operator, never from a proposer; removed"
	tests := []struct {
		name   string
		p      *propose.Proposal
		parse  func(json.RawMessage) error
		want   string
		wantCs string
	}{
		{
			name:   "nil proposal",
			want:   `{"proposer":"","capabilities":[]}`,
			wantCs: `null`,
		},
		{
			name: "a clean proposal is sorted and kept",
			p: &propose.Proposal{Proposer: "llm:m", Capabilities: []propose.Item{
				{ExtensionID: "github", CapabilityID: "search_issues", Reason: "step 1", Constraints: json.RawMessage(` {"pathGlobs": ["/srv/docs/**"]} `)},
				{ExtensionID: "fs", CapabilityID: "read_file", Reason: "step 2"},
			}, PolicyHints: json.RawMessage(`["only reads"]`)},
			parse: parsePathsConstraints,
			want: `{"proposer":"llm:m","capabilities":[` +
				`{"extensionId":"fs","capabilityId":"read_file","reason":"step 2"},` +
				`{"extensionId":"github","capabilityId":"search_issues","reason":"step 1","constraints":{"pathGlobs":["/srv/docs/**"]}}],` +
				`"policyHints":["only reads"]}`,
			wantCs: `null`,
		},
		{
			name: "invented tools, wrong case and a duplicate",
			p: &propose.Proposal{Capabilities: []propose.Item{
				{ExtensionID: "github", CapabilityID: "delete_repo"},
				{ExtensionID: "GitHub", CapabilityID: "search_issues"},
				{ExtensionID: "", CapabilityID: "nameless"},
				{ExtensionID: "fs", CapabilityID: "read_file", Reason: "first"},
				{ExtensionID: "fs", CapabilityID: "read_file", Reason: "second"},
			}},
			want: `{"proposer":"","capabilities":[{"extensionId":"fs","capabilityId":"read_file","reason":"first"}]}`,
			wantCs: `[` +
				`{"kind":"invented_capability","capabilityId":"nameless","detail":"introspection reported no tool nameless on server \"\"; item dropped"},` +
				`{"kind":"invented_capability","extensionId":"GitHub","capabilityId":"search_issues","detail":"introspection reported no tool search_issues on server GitHub; item dropped"},` +
				`{"kind":"duplicate","extensionId":"fs","capabilityId":"read_file","detail":"proposed more than once; the first occurrence was kept"},` +
				`{"kind":"invented_capability","extensionId":"github","capabilityId":"delete_repo","detail":"introspection reported no tool delete_repo on server github; item dropped"}]`,
		},
		{
			name: "constraints the parser refuses, that are not JSON, too large, or with no parser",
			p: &propose.Proposal{Capabilities: []propose.Item{
				{ExtensionID: "fs", CapabilityID: "read_file", Constraints: json.RawMessage(`{"pathGlobs":["a"],"rate":"10/m"}`)},
				{ExtensionID: "fs", CapabilityID: "write_file", Constraints: json.RawMessage(`{"pathGlobs":`)},
				{ExtensionID: "github", CapabilityID: "create_issue", Constraints: json.RawMessage(`{"pathGlobs":["` + strings.Repeat("a", propose.MaxConstraintsBytes) + `"]}`)},
				{ExtensionID: "github", CapabilityID: "search_issues", Constraints: json.RawMessage(`{"pathGlobs":["a"],"pathGlobs":["b"]}`)},
				{ExtensionID: "everything", CapabilityID: "echo", Constraints: json.RawMessage(`null`)},
			}},
			parse: parsePathsConstraints,
			want: `{"proposer":"","capabilities":[` +
				`{"extensionId":"everything","capabilityId":"echo"},` +
				`{"extensionId":"fs","capabilityId":"read_file"},` +
				`{"extensionId":"fs","capabilityId":"write_file"},` +
				`{"extensionId":"github","capabilityId":"create_issue"},` +
				`{"extensionId":"github","capabilityId":"search_issues"}]}`,
			wantCs: `[` +
				`{"kind":"bad_constraints","extensionId":"fs","capabilityId":"read_file","field":"constraints","detail":"constraints: json: unknown field \"rate\"; constraints dropped"},` +
				`{"kind":"bad_constraints","extensionId":"fs","capabilityId":"write_file","field":"constraints","detail":"not JSON: unexpected EOF; constraints dropped"},` +
				`{"kind":"bad_constraints","extensionId":"github","capabilityId":"create_issue","field":"constraints","detail":"larger than 16384 bytes; constraints dropped"},` +
				`{"kind":"bad_constraints","extensionId":"github","capabilityId":"search_issues","field":"constraints","detail":"pathGlobs: key appears twice; constraints dropped"}]`,
		},
		{
			name: "no constraint parser: constraints are dropped, not trusted",
			p: &propose.Proposal{Capabilities: []propose.Item{
				{ExtensionID: "fs", CapabilityID: "read_file", Constraints: json.RawMessage(`{"pathGlobs":["a"]}`)},
			}},
			want:   `{"proposer":"","capabilities":[{"extensionId":"fs","capabilityId":"read_file"}]}`,
			wantCs: `[{"kind":"bad_constraints","extensionId":"fs","capabilityId":"read_file","field":"constraints","detail":"no constraint parser is configured; constraints dropped"}]`,
		},
		{
			name: "risk among constraint fields and anywhere in policy hints is removed; argument names are kept",
			p: &propose.Proposal{Capabilities: []propose.Item{
				{ExtensionID: "fs", CapabilityID: "read_file", Constraints: json.RawMessage(`{"pathGlobs":["a"],"sideEffects":"none","risk_level":"read","argValues":{"readOnly":["true"]}}`)},
				{ExtensionID: "fs", CapabilityID: "write_file", Constraints: json.RawMessage(`{"destructiveHint":false}`)},
			}, PolicyHints: json.RawMessage(`[{"riskLevel":"read","note":"<fine>"},"plain"]`)},
			parse: func(json.RawMessage) error { return nil },
			want: `{"proposer":"","capabilities":[` +
				`{"extensionId":"fs","capabilityId":"read_file","constraints":{"argValues":{"readOnly":["true"]},"pathGlobs":["a"]}},` +
				`{"extensionId":"fs","capabilityId":"write_file","constraints":{}}],` +
				`"policyHints":[{"note":"\u003cfine\u003e"},"plain"]}`,
			wantCs: `[` +
				`{"kind":"risk_field_removed","field":"policyHints[0].riskLevel","detail":"` + riskDetail + `"},` +
				`{"kind":"risk_field_removed","extensionId":"fs","capabilityId":"read_file","field":"constraints.risk_level","detail":"` + riskDetail + `"},` +
				`{"kind":"risk_field_removed","extensionId":"fs","capabilityId":"read_file","field":"constraints.sideEffects","detail":"` + riskDetail + `"},` +
				`{"kind":"risk_field_removed","extensionId":"fs","capabilityId":"write_file","field":"constraints.destructiveHint","detail":"` + riskDetail + `"}]`,
		},
		{
			name: "the raw output's risk and unknown fields are reported, Raw kept as evidence",
			p: &propose.Proposal{Proposer: "llm:m",
				Capabilities: []propose.Item{{ExtensionID: "github", CapabilityID: "search_issues", Reason: "r"}},
				Raw: json.RawMessage(`{"capabilities":[{"extensionId":"github","capabilityId":"search_issues","reason":"r","constraints":null,` +
					`"riskLevel":"read","confidence":0.9,"extra":{"annotations":{"readOnlyHint":true}}}],"policyHints":[],"overallRisk":"low"}`),
			},
			want: `{"proposer":"llm:m","capabilities":[{"extensionId":"github","capabilityId":"search_issues","reason":"r"}],` +
				`"raw":{"capabilities":[{"extensionId":"github","capabilityId":"search_issues","reason":"r","constraints":null,"riskLevel":"read","confidence":0.9,"extra":{"annotations":{"readOnlyHint":true}}}],"policyHints":[],"overallRisk":"low"}}`,
			wantCs: `[` +
				`{"kind":"risk_field_removed","field":"overallRisk","detail":"` + riskDetail + `"},` +
				`{"kind":"unknown_field","extensionId":"github","capabilityId":"search_issues","field":"confidence","detail":"not a field of a proposed capability (capabilities[0]); ignored"},` +
				`{"kind":"unknown_field","extensionId":"github","capabilityId":"search_issues","field":"extra","detail":"not a field of a proposed capability (capabilities[0]); ignored"},` +
				`{"kind":"risk_field_removed","extensionId":"github","capabilityId":"search_issues","field":"extra.annotations","detail":"` + riskDetail + `"},` +
				`{"kind":"risk_field_removed","extensionId":"github","capabilityId":"search_issues","field":"riskLevel","detail":"` + riskDetail + `"}]`,
		},
		{
			name: "raw output that is not JSON is kept as a string; bad policy hints are dropped",
			p: &propose.Proposal{
				Capabilities: []propose.Item{{ExtensionID: "fs", CapabilityID: "read_file", Reason: " line\x1b[2J\nbreak\u2028 "}},
				PolicyHints:  json.RawMessage(`{"a":1,"a":2}`),
				Raw:          json.RawMessage("not json \xff"),
			},
			want:   `{"proposer":"","capabilities":[{"extensionId":"fs","capabilityId":"read_file","reason":"line [2J break"}],"raw":"not json �"}`,
			wantCs: `[{"kind":"unknown_field","field":"policyHints","detail":"a: key appears twice; policy hints dropped"}]`,
		},
		{
			name: "hostile ids in corrections are quoted and shortened",
			p: &propose.Proposal{Capabilities: []propose.Item{
				{ExtensionID: "evil\n", CapabilityID: strings.Repeat("x", 200)},
			}},
			want: `{"proposer":"","capabilities":[]}`,
			wantCs: `[{"kind":"invented_capability","extensionId":"\"evil\\n\"","capabilityId":"\"` + strings.Repeat("x", 128) + `…\"",` +
				`"detail":"introspection reported no tool \"` + strings.Repeat("x", 128) + `…\" on server \"evil\\n\"; item dropped"}]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var before string
			if tc.p != nil {
				before = fmt.Sprintf("%+v", tc.p.Capabilities)
			}
			got, cs := propose.Validate(tc.p, in, tc.parse)
			if g := mustJSON(t, got); g != tc.want {
				t.Errorf("proposal\n got %s\nwant %s", g, tc.want)
			}
			if g := mustJSON(t, cs); g != tc.wantCs {
				t.Errorf("corrections\n got %s\nwant %s", g, tc.wantCs)
			}
			if tc.p != nil && fmt.Sprintf("%+v", tc.p.Capabilities) != before {
				t.Error("Validate modified its input")
			}
		})
	}
}
