package cedarinspect

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

func parse(t *testing.T, text string) *cedar.Policy {
	t.Helper()
	var p cedar.Policy
	if err := p.UnmarshalCedar([]byte(text)); err != nil {
		t.Fatal(err)
	}
	return &p
}

// opNames name the ops in order, for sexpr.
var opNames = [...]string{"other", "value", "var", "&&", "||", "!", "neg", "isEmpty", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*",
	"in", "contains", "containsAll", "containsAny", "getTag", "hasTag", "has", "get", "like", "is", "isIn", "if", "call", "record", "set"}

// sexpr renders a tree as an S-expression of its ops, names and literals.
func sexpr(n *Node) string {
	var args []string
	for _, c := range []*Node{n.Left, n.Right, n.Arg, n.If, n.Then, n.Else, n.Entity} {
		if c != nil {
			args = append(args, sexpr(c))
		}
	}
	for _, c := range n.Args {
		args = append(args, sexpr(c))
	}
	for _, e := range n.Elements {
		args = append(args, e.Key+":"+sexpr(e.Value))
	}
	head := opNames[n.Op]
	switch {
	case n.Op == OpValue:
		head = "v" + n.Value.String()
	case n.Name != "":
		head += "." + n.Name
	case n.Op == OpLike:
		head += "~" + string(n.Pattern.MarshalCedar())
	case n.EntityType != "":
		head += "@" + string(n.EntityType)
	}
	if len(args) == 0 {
		return head
	}
	return "(" + head + " " + strings.Join(args, " ") + ")"
}

// TestScopes checks every scope form.
func TestScopes(t *testing.T) {
	p := parse(t, `permit (principal is Agent in Agent::"a/b", action in [Action::"invoke"], resource in Skill::"s");`)
	pr, ac, re := Scopes(p)
	want := []Scope{
		{Kind: ScopeIsIn, Type: "Agent", Entity: types.NewEntityUID("Agent", "a/b")},
		{Kind: ScopeInSet, Entities: []types.EntityUID{types.NewEntityUID("Action", "invoke")}},
		{Kind: ScopeIn, Entity: types.NewEntityUID("Skill", "s")},
	}
	for i, got := range []Scope{pr, ac, re} {
		if got.Kind != want[i].Kind || got.Type != want[i].Type || got.Entity != want[i].Entity || !slices.Equal(got.Entities, want[i].Entities) {
			t.Errorf("scope %d = %+v, want %+v", i, got, want[i])
		}
	}
	pr, ac, re = Scopes(parse(t, `permit (principal == Agent::"a/b", action == Action::"invoke", resource is Capability);`))
	if pr.Kind != ScopeEq || ac.Kind != ScopeEq || re.Kind != ScopeIs || re.Type != "Capability" {
		t.Errorf("scopes = %+v %+v %+v", pr, ac, re)
	}
	pr, _, _ = Scopes(parse(t, `permit (principal, action, resource);`))
	if pr.Kind != ScopeAll {
		t.Errorf("principal = %+v, want all", pr)
	}
	so := ScopeOnly(parse(t, `forbid (principal == Agent::"a/b", action, resource) when { false };`))
	if got := string(so.MarshalCedar()); got != "permit (\n    principal == Agent::\"a/b\",\n    action,\n    resource\n);" {
		t.Errorf("ScopeOnly = %q", got)
	}
}

// TestConditions checks that every node kind converts, with its operands
// in x/exp's order.
func TestConditions(t *testing.T) {
	p := parse(t, `permit (principal, action, resource)
when { context.args has x && context.args.x like "a*" }
unless { principal.n < 1 || principal.n <= 2 || principal.n > 3 || principal.n >= 4 || !(principal.n == 5) || principal.n != 6 }
when { if principal in Agent::"a/b" then -principal.n + 2 * 3 - 1 == 0 else principal is Agent && principal is Agent in Agent::"x" }
when { [1].contains(1) && [1].containsAll([1]) && [1].containsAny([1]) && [1].isEmpty() && {k: true}.k }
when { principal.hasTag("t") && principal.getTag("t") && ip("1.2.3.4").isLoopback() };`)
	if len(opNames) != int(OpSet)+1 {
		t.Fatalf("opNames has %d names for %d ops", len(opNames), OpSet+1)
	}
	var got []string
	for _, c := range Conditions(p) {
		got = append(got, fmt.Sprintf("%v %s", c.Unless, sexpr(c.Body)))
	}
	want := []string{
		`false (&& (has.x (get.args var.context)) (like~"a*" (get.x (get.args var.context))))`,
		`true (|| (|| (|| (|| (|| (< (get.n var.principal) v1) (<= (get.n var.principal) v2)) (> (get.n var.principal) v3)) (>= (get.n var.principal) v4)) (! (== (get.n var.principal) v5))) (!= (get.n var.principal) v6))`,
		`false (if (in var.principal vAgent::"a/b") (== (- (+ (neg (get.n var.principal)) (* v2 v3)) v1) v0) (&& (is@Agent var.principal) (isIn@Agent var.principal vAgent::"x")))`,
		`false (&& (&& (&& (&& (contains (set v1) v1) (containsAll (set v1) (set v1))) (containsAny (set v1) (set v1))) (isEmpty (set v1))) (get.k (record k:vtrue)))`,
		`false (&& (&& (hasTag var.principal vt) (getTag var.principal vt)) (call.isLoopback (call.ip v1.2.3.4)))`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("conditions =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSchema checks the schema's names, a changed context type and the
// validator over it.
func TestSchema(t *testing.T) {
	s, err := ParseSchema("s.cedarschema", []byte(`entity Agent { tier: String, n: Long };
entity Capability;
action invoke appliesTo { principal: Agent, resource: Capability, context: { args: {}, session?: String } };`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.EntityAttributes("Agent"); !slices.Equal(got, []string{"n", "tier"}) {
		t.Errorf("EntityAttributes = %q", got)
	}
	if got := s.EntityAttributes("Nope"); len(got) != 0 {
		t.Errorf("EntityAttributes(Nope) = %q", got)
	}
	invoke := types.NewEntityUID("Action", "invoke")
	if got := s.ContextAttributes(invoke); !slices.Equal(got, []string{"args", "session"}) {
		t.Errorf("ContextAttributes = %q", got)
	}
	if got := s.EntityTypes(); !slices.Equal(got, []string{"Agent", "Capability"}) {
		t.Errorf("EntityTypes = %q", got)
	}
	typed := s.WithContextType(invoke, "args", RecordType(map[string]Attribute{
		"q": {Type: StringType()}, "n": {Type: LongType(), Optional: true}, "b": {Type: BoolType()}, "s": {Type: SetType(StringType())}}))
	req := func(args types.RecordMap) types.Request {
		return types.Request{Principal: types.NewEntityUID("Agent", "a"), Action: invoke, Resource: types.NewEntityUID("Capability", "c"),
			Context: types.NewRecord(types.RecordMap{"args": types.NewRecord(args)})}
	}
	ok := types.RecordMap{"q": types.String("x"), "b": types.True, "s": types.NewSet(types.String("y"))}
	if err := NewValidator(typed).Request(req(ok)); err != nil {
		t.Errorf("typed request: %v", err)
	}
	if err := NewValidator(typed).Request(req(types.RecordMap{"q": types.Long(1), "b": types.True, "s": types.NewSet()})); err == nil {
		t.Error("a Long where the schema says String passed")
	}
	if err := NewValidator(s).Request(req(ok)); err == nil {
		t.Error("the untyped schema (args: {}) took undeclared arguments; WithContextType changed s")
	}
	pol := parse(t, `permit (principal, action, resource) when { principal.nope == 1 };`)
	if err := NewValidator(s).Policy("p1", pol); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Policy = %v, want the unknown attribute", err)
	}
	if err := NewValidator(s).Entity(types.Entity{UID: types.NewEntityUID("Agent", "a"), Attributes: types.NewRecord(types.RecordMap{"tier": types.String("T1"), "n": types.Long(1)})}); err != nil {
		t.Errorf("Entity: %v", err)
	}
}
