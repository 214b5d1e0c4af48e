package capability_test

import (
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// TestSeverityOrder pins the one severity order of the three risk sets:
// known values in their documented order, and every value outside a set
// (the empty one included) above the most severe known value, equal to any
// other unknown value, and not valid. Policy grants, approval needs, the
// broker's merge of duplicate records and the installer's --force check all
// compare through it, so an unknown value is never covered by a grant for
// a known one nor treated as less risky.
func TestSeverityOrder(t *testing.T) {
	t.Parallel()
	sign := func(n int) int { return max(-1, min(n, 1)) }
	risk := []struct {
		a, b  capability.RiskLevel
		want  int
		valid bool // a.Valid()
	}{
		{"read", "read", 0, true},
		{"read", "write", -1, true},
		{"write", "destructive", -1, true},
		{"destructive", "read", 1, true},
		{"", "destructive", 1, false},
		{"bogus", "destructive", 1, false},
		{"Destructive", "destructive", 1, false},
		{"bogus", "", 0, false},
		{"read", "bogus", -1, true},
		{"destructive", "", -1, true},
	}
	for _, c := range risk {
		if got := sign(c.a.Compare(c.b)); got != c.want {
			t.Errorf("RiskLevel(%q).Compare(%q) = %d; want %d", c.a, c.b, got, c.want)
		}
		if got := sign(c.b.Compare(c.a)); got != -c.want {
			t.Errorf("RiskLevel(%q).Compare(%q) = %d; want %d", c.b, c.a, got, -c.want)
		}
		if c.a.Valid() != c.valid {
			t.Errorf("RiskLevel(%q).Valid() = %t; want %t", c.a, !c.valid, c.valid)
		}
	}
	side := []struct {
		a, b  capability.SideEffects
		want  int
		valid bool
	}{
		{"none", "internal", -1, true},
		{"internal", "external", -1, true},
		{"external", "none", 1, true},
		{"external", "external", 0, true},
		{"", "external", 1, false},
		{"network", "external", 1, false},
	}
	for _, c := range side {
		if got := sign(c.a.Compare(c.b)); got != c.want {
			t.Errorf("SideEffects(%q).Compare(%q) = %d; want %d", c.a, c.b, got, c.want)
		}
		if c.a.Valid() != c.valid {
			t.Errorf("SideEffects(%q).Valid() = %t; want %t", c.a, !c.valid, c.valid)
		}
	}
	egress := []struct {
		a, b  capability.DataEgress
		want  int
		valid bool
	}{
		{"none", "network", -1, true},
		{"network", "none", 1, true},
		{"none", "none", 0, true},
		{"", "network", 1, false},
		{"internet", "network", 1, false},
	}
	for _, c := range egress {
		if got := sign(c.a.Compare(c.b)); got != c.want {
			t.Errorf("DataEgress(%q).Compare(%q) = %d; want %d", c.a, c.b, got, c.want)
		}
		if c.a.Valid() != c.valid {
			t.Errorf("DataEgress(%q).Valid() = %t; want %t", c.a, !c.valid, c.valid)
		}
	}
}

func TestRiskCheck(t *testing.T) {
	t.Parallel()
	op := func(v string) capability.RiskField[capability.RiskLevel] {
		return capability.RiskField[capability.RiskLevel]{Value: capability.RiskLevel(v), Source: capability.SourceOperator, Basis: "why"}
	}
	tests := []struct {
		name string
		risk capability.Risk
		want string
	}{
		{"all unknown", capability.Risk{}, ""},
		{"known", capability.Risk{RiskLevel: op("write")}, ""},
		{"bad level", capability.Risk{RiskLevel: op("huge")}, `risk.riskLevel "huge" is not read, write or destructive`},
		{"bad side effects", capability.Risk{SideEffects: capability.RiskField[capability.SideEffects]{Value: "lots", Source: capability.SourceOperator}},
			`risk.sideEffects "lots" is not none, internal or external`},
		{"bad egress", capability.Risk{DataEgress: capability.RiskField[capability.DataEgress]{Value: "wifi", Source: capability.SourceOperator}},
			`risk.dataEgress "wifi" is not none or network`},
		{"value without source", capability.Risk{RiskLevel: capability.RiskField[capability.RiskLevel]{Value: "read"}},
			"risk.riskLevel: a value needs a source and a source a value"},
		{"source without value", capability.Risk{DataEgress: capability.RiskField[capability.DataEgress]{Source: capability.SourceAnnotations}},
			"risk.dataEgress: a value needs a source and a source a value"},
		{"bad source", capability.Risk{RiskLevel: capability.RiskField[capability.RiskLevel]{Value: "read", Source: "llm"}},
			`risk.riskLevel.source "llm" is not server_meta, annotations or operator`},
	}
	for _, tc := range tests {
		err := tc.risk.Check()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: Check() = %q; want %q", tc.name, got, tc.want)
		}
	}
	if got := (capability.Risk{RiskLevel: op("read")}).Unknown(); len(got) != 2 || got[0] != "sideEffects" || got[1] != "dataEgress" {
		t.Errorf("Unknown() = %q; want [sideEffects dataEgress]", got)
	}
}

func TestCallApprovalStricter(t *testing.T) {
	for _, tc := range []struct{ a, b, want capability.CallApproval }{
		{"", capability.CallApprovalNever, ""},
		{capability.CallApprovalNever, "", ""},
		{"", capability.CallApprovalAlways, capability.CallApprovalAlways},
		{capability.CallApprovalAlways, capability.CallApprovalNever, capability.CallApprovalAlways},
		{capability.CallApprovalNever, capability.CallApprovalNever, capability.CallApprovalNever},
	} {
		if got := tc.a.Stricter(tc.b); got != tc.want {
			t.Errorf("%q.Stricter(%q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
