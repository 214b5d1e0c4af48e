package mcpclient_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

func TestDeriveRisk(t *testing.T) {
	t.Parallel()
	const a = "annotations: "
	const m = `_meta["io.skillgate/risk"].`
	tests := []struct {
		name         string
		tool         string
		want         riskWant
		wantConflict []capability.RiskConflict
		wantProblems []capability.Problem
	}{
		{
			name: "no annotations: nothing is known",
			tool: `{"name":"t"}`,
		},
		{
			name: "empty annotations: spec defaults are not metadata",
			tool: `{"name":"t","annotations":{}}`,
		},
		{
			name: "read-only, closed world",
			tool: `{"name":"t","annotations":{"readOnlyHint":true,"openWorldHint":false}}`,
			want: riskWant{"read", "annotations", a + "readOnlyHint=true", "none", "annotations", a + "readOnlyHint=true", "none", "annotations", a + "openWorldHint=false"},
		},
		{
			name: "read-only, open world: no side effects but egress",
			tool: `{"name":"t","annotations":{"readOnlyHint":true,"openWorldHint":true}}`,
			want: riskWant{"read", "annotations", a + "readOnlyHint=true", "none", "annotations", a + "readOnlyHint=true", "network", "annotations", a + "openWorldHint=true"},
		},
		{
			name: "read-only wins over a contradicting destructiveHint",
			tool: `{"name":"t","annotations":{"readOnlyHint":true,"destructiveHint":true}}`,
			want: riskWant{risk: "read", riskSrc: "annotations", riskBasis: a + "readOnlyHint=true", effects: "none", effSrc: "annotations", effBasis: a + "readOnlyHint=true"},
		},
		{
			name: "additive write, open world",
			tool: `{"name":"t","annotations":{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":true}}`,
			want: riskWant{"write", "annotations", a + "readOnlyHint=false, destructiveHint=false", "external", "annotations", a + "readOnlyHint=false, destructiveHint=false, openWorldHint=true", "network", "annotations", a + "openWorldHint=true"},
		},
		{
			name: "destructive, closed world",
			tool: `{"name":"t","annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false}}`,
			want: riskWant{"destructive", "annotations", a + "readOnlyHint=false, destructiveHint=true", "internal", "annotations", a + "readOnlyHint=false, destructiveHint=true, openWorldHint=false", "none", "annotations", a + "openWorldHint=false"},
		},
		{
			name: "destructiveHint=true alone is explicit enough",
			tool: `{"name":"t","annotations":{"destructiveHint":true}}`,
			want: riskWant{risk: "destructive", riskSrc: "annotations", riskBasis: a + "destructiveHint=true"},
		},
		{
			name: "readOnlyHint=false alone (Go SDK default wire form) decides nothing",
			tool: `{"name":"t","annotations":{"readOnlyHint":false,"idempotentHint":false,"title":"T"}}`,
		},
		{
			name: "destructiveHint=false alone: read or write, unknown",
			tool: `{"name":"t","annotations":{"destructiveHint":false,"openWorldHint":false}}`,
			want: riskWant{egress: "none", egressSrc: "annotations", egressBasis: a + "openWorldHint=false"},
		},
		{
			name: "_meta gives all three and wins",
			tool: `{"name":"t","annotations":{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":false},"_meta":{"io.skillgate/risk":{"riskLevel":"destructive","sideEffects":"external","dataEgress":"network"}}}`,
			want: riskWant{"destructive", "server_meta", m + "riskLevel", "external", "server_meta", m + "sideEffects", "network", "server_meta", m + "dataEgress"},
		},
		{
			name: "_meta partial, annotations fill the rest",
			tool: `{"name":"t","annotations":{"readOnlyHint":true,"openWorldHint":true},"_meta":{"io.skillgate/risk":{"dataEgress":"network"}}}`,
			want: riskWant{"read", "annotations", a + "readOnlyHint=true", "none", "annotations", a + "readOnlyHint=true", "network", "server_meta", m + "dataEgress"},
		},
		{
			name: "_meta below what annotations imply is kept and flagged",
			tool: `{"name":"t","annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":true},"_meta":{"io.skillgate/risk":{"riskLevel":"read","sideEffects":"internal","dataEgress":"none"}}}`,
			want: riskWant{"read", "server_meta", m + "riskLevel", "internal", "server_meta", m + "sideEffects", "none", "server_meta", m + "dataEgress"},
			wantConflict: []capability.RiskConflict{
				{Field: "riskLevel", Declared: "read", Implied: "destructive", Basis: a + "readOnlyHint=false, destructiveHint=true"},
				{Field: "sideEffects", Declared: "internal", Implied: "external", Basis: a + "readOnlyHint=false, destructiveHint=true, openWorldHint=true"},
				{Field: "dataEgress", Declared: "none", Implied: "network", Basis: a + "openWorldHint=true"},
			},
		},
		{
			name: "other _meta keys are ignored",
			tool: `{"name":"t","_meta":{"com.example/risk":{"riskLevel":"read"}}}`,
		},
		{
			name: "malformed hints and _meta values are problems and ignored",
			tool: `{"name":"t","annotations":{"readOnlyHint":"true","openWorldHint":null,"idempotentHint":1},"_meta":{"io.skillgate/risk":{"riskLevel":3,"dataEgress":"satellite"}}}`,
			wantProblems: []capability.Problem{
				{Code: "invalid_tool", Field: "annotations.readOnlyHint", Message: "is a string; want a boolean"},
				{Code: "invalid_tool", Field: "annotations.openWorldHint", Message: "is null; want a boolean"},
				{Code: "invalid_tool", Field: "annotations.idempotentHint", Message: "is a number; want a boolean"},
				{Code: "invalid_tool", Field: `_meta["io.skillgate/risk"].riskLevel`, Message: "is a number; want a string"},
				{Code: "invalid_tool", Field: `_meta["io.skillgate/risk"].dataEgress`, Message: `"satellite" is not one of none, network`},
			},
		},
		{
			name: "annotations not an object",
			tool: `{"name":"t","annotations":[]}`,
			wantProblems: []capability.Problem{
				{Code: "invalid_tool", Field: "annotations", Message: "annotations must be a JSON object"},
			},
		},
		{
			name: "risk entry not an object",
			tool: `{"name":"t","_meta":{"io.skillgate/risk":"read"}}`,
			wantProblems: []capability.Problem{
				{Code: "invalid_tool", Field: `_meta["io.skillgate/risk"]`, Message: "the risk entry must be a JSON object"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, problems := mcpclient.DeriveRisk(json.RawMessage(tc.tool))
			if g := gotRisk(got); g != tc.want {
				t.Errorf("risk\n got %+v\nwant %+v", g, tc.want)
			}
			if !reflect.DeepEqual(got.Conflicts, tc.wantConflict) {
				t.Errorf("conflicts\n got %+v\nwant %+v", got.Conflicts, tc.wantConflict)
			}
			if !reflect.DeepEqual(problems, tc.wantProblems) {
				t.Errorf("problems\n got %+v\nwant %+v", problems, tc.wantProblems)
			}
		})
	}
}

func TestRiskOrdering(t *testing.T) {
	t.Parallel()
	if !(capability.RiskRead.Compare(capability.RiskWrite) < 0 && capability.RiskWrite.Compare(capability.RiskDestructive) < 0) {
		t.Error("risk levels out of order")
	}
	if !(capability.SideEffectsNone.Compare(capability.SideEffectsInternal) < 0 && capability.SideEffectsInternal.Compare(capability.SideEffectsExternal) < 0) {
		t.Error("side effects out of order")
	}
	if capability.EgressNone.Compare(capability.EgressNetwork) >= 0 {
		t.Error("egress out of order")
	}
	if capability.RiskLevel("high").Valid() || !capability.RiskDestructive.Valid() {
		t.Error("Valid is wrong")
	}
	var m capability.RiskMetadata
	m.SideEffects.Value = capability.SideEffectsNone
	if got := m.Unknown(); !reflect.DeepEqual(got, []string{"riskLevel", "dataEgress"}) {
		t.Errorf("Unknown() = %v", got)
	}
}
