package policy

import (
	"encoding/json"
	"math"
	"strconv"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/ast"
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
)

// A policy that reads the context is evaluated on every call. Cedar needs
// the context as a record for that, and building one (cloning, sorting and
// hashing each record) costs more than the rest of a decision once the
// outcome of the other policies is kept (memo.go). The conditions of most
// such policies have a few shapes: `context.args has x`, a comparison of an
// argument, a principal or resource attribute or the session with a
// literal, `like`, and `&&`, `||`, `!` over those. nativeCond evaluates
// those shapes on the call's arguments as they are, without a record.
//
// It never decides differently from Cedar: it either gives the value
// Cedar's evaluation would give, or gives up (ok false), and then the
// policy is evaluated by Cedar. It gives up on everything that could be an
// error in Cedar (a missing attribute, a comparison across types, a value
// it does not model), so every error, with its exact message, comes from
// Cedar. The differential tests in native_test.go and memo_test.go hold it
// to that.

// nativeCond is the conjunction of a policy's conditions (an unless as its
// negation), in order; nil when some condition has a shape it does not
// evaluate.
type nativeCond struct{ root nnode }

// nval is a value during native evaluation: a Boolean, Long or String.
type nval struct {
	k nkind
	b bool
	i int64
	s string
}

type nkind uint8

const (
	kBool nkind = iota + 1
	kLong
	kString
)

// callEnv is what a call's native evaluation reads.
type callEnv struct {
	args      map[string]any
	principal types.Record // the principal's attributes
	resource  types.Record // the capability's attributes
	sid       string
	hasSID    bool
	delegated bool
}

// nnode is one compiled expression. eval returns ok false when the value
// is not one nval models, or when Cedar might report an error.
type nnode interface {
	eval(env *callEnv) (v nval, ok bool)
}

// compileNative compiles the conditions of a policy, or returns nil. argNames
// and fullArgs are the policy's (what its text reads from context.args): an
// argument the policy reads but its text scan did not find might be left
// out of the context Cedar sees, so such a read is not compiled.
func compileNative(a *xast.Policy, argNames []string, fullArgs bool) *nativeCond {
	c := compiler{argNames: argNames, fullArgs: fullArgs}
	var root nnode = nconst{nval{k: kBool, b: true}}
	for i := len(a.Conditions) - 1; i >= 0; i-- {
		n, ok := c.expr(a.Conditions[i].Body)
		if !ok {
			return nil
		}
		if a.Conditions[i].Condition == xast.ConditionUnless {
			n = nnot{n}
		}
		if i == len(a.Conditions)-1 {
			root = n
		} else {
			root = nand{n, root}
		}
	}
	return &nativeCond{root: root}
}

// scopeOnly is a permit with the policy's scope and without its
// conditions: it is satisfied exactly when the policy's scope holds.
func scopeOnly(a *xast.Policy) *cedar.Policy {
	return cedar.NewPolicyFromAST((*ast.Policy)(&xast.Policy{Effect: xast.EffectPermit, Principal: a.Principal, Action: a.Action, Resource: a.Resource, Position: a.Position}))
}

type compiler struct {
	argNames []string
	fullArgs bool
}

func (c *compiler) readsArg(name string) bool {
	if c.fullArgs {
		return true
	}
	for _, n := range c.argNames {
		if n == name {
			return true
		}
	}
	return false
}

func (c *compiler) expr(n xast.IsNode) (nnode, bool) {
	switch n := n.(type) {
	case xast.NodeValue:
		v, ok := literal(n.Value)
		return nconst{v}, ok
	case xast.NodeTypeAnd:
		l, lok := c.expr(n.Left)
		r, rok := c.expr(n.Right)
		return nand{l, r}, lok && rok
	case xast.NodeTypeOr:
		l, lok := c.expr(n.Left)
		r, rok := c.expr(n.Right)
		return nor{l, r}, lok && rok
	case xast.NodeTypeNot:
		a, ok := c.expr(n.Arg)
		return nnot{a}, ok
	case xast.NodeTypeEquals:
		return c.binary(n.Left, n.Right, func(l, r nnode) nnode { return neq{l, r, false} })
	case xast.NodeTypeNotEquals:
		return c.binary(n.Left, n.Right, func(l, r nnode) nnode { return neq{l, r, true} })
	case xast.NodeTypeLessThan:
		return c.binary(n.Left, n.Right, func(l, r nnode) nnode { return ncmp{l, r, cmpLT} })
	case xast.NodeTypeLessThanOrEqual:
		return c.binary(n.Left, n.Right, func(l, r nnode) nnode { return ncmp{l, r, cmpLE} })
	case xast.NodeTypeGreaterThan:
		return c.binary(n.Left, n.Right, func(l, r nnode) nnode { return ncmp{l, r, cmpGT} })
	case xast.NodeTypeGreaterThanOrEqual:
		return c.binary(n.Left, n.Right, func(l, r nnode) nnode { return ncmp{l, r, cmpGE} })
	case xast.NodeTypeLike:
		a, ok := c.expr(n.Arg)
		return nlike{a, n.Value}, ok
	case xast.NodeTypeHas:
		return c.has(n.Arg, string(n.Value))
	case xast.NodeTypeAccess:
		return c.access(n.Arg, string(n.Value))
	}
	return nil, false
}

func (c *compiler) binary(l, r xast.IsNode, mk func(l, r nnode) nnode) (nnode, bool) {
	ln, lok := c.expr(l)
	rn, rok := c.expr(r)
	if !lok || !rok {
		return nil, false
	}
	return mk(ln, rn), true
}

// has compiles `obj has name` for obj one of context.args, context,
// principal, resource.
func (c *compiler) has(obj xast.IsNode, name string) (nnode, bool) {
	switch variable(obj) {
	case "principal":
		return nattrHas{resource: false, name: types.String(name)}, true
	case "resource":
		return nattrHas{resource: true, name: types.String(name)}, true
	case "context":
		return nctxHas{name}, true
	}
	if isContextArgs(obj) {
		return nargHas{name}, c.readsArg(name)
	}
	return nil, false
}

// access compiles `obj.name` for obj one of context.args, context (session
// or delegated), principal, resource.
func (c *compiler) access(obj xast.IsNode, name string) (nnode, bool) {
	switch variable(obj) {
	case "principal":
		return nattr{resource: false, name: types.String(name)}, true
	case "resource":
		return nattr{resource: true, name: types.String(name)}, true
	case "context":
		return nctx{name}, name == "session" || name == "delegated"
	}
	if isContextArgs(obj) {
		return narg{name}, c.readsArg(name)
	}
	return nil, false
}

func variable(n xast.IsNode) string {
	if v, ok := n.(xast.NodeTypeVariable); ok {
		return string(v.Name)
	}
	return ""
}

func isContextArgs(n xast.IsNode) bool {
	a, ok := n.(xast.NodeTypeAccess)
	return ok && a.Value == "args" && variable(a.Arg) == "context"
}

// literal converts a Cedar value nval models.
func literal(v types.Value) (nval, bool) {
	switch v := v.(type) {
	case types.Boolean:
		return nval{k: kBool, b: bool(v)}, true
	case types.Long:
		return nval{k: kLong, i: int64(v)}, true
	case types.String:
		return nval{k: kString, s: string(v)}, true
	}
	return nval{}, false
}

// eval evaluates the conditions; ok false means Cedar must decide.
func (c *nativeCond) eval(env *callEnv) (satisfied, ok bool) {
	v, ok := c.root.eval(env)
	if !ok || v.k != kBool {
		return false, false
	}
	return v.b, true
}

type nconst struct{ v nval }

func (n nconst) eval(*callEnv) (nval, bool) { return n.v, true }

// nand is Cedar's &&: the left side must be a Boolean, a false one
// decides without evaluating the right side.
type nand struct{ l, r nnode }

func (n nand) eval(env *callEnv) (nval, bool) {
	l, ok := n.l.eval(env)
	if !ok || l.k != kBool {
		return nval{}, false
	}
	if !l.b {
		return l, true
	}
	r, ok := n.r.eval(env)
	if !ok || r.k != kBool {
		return nval{}, false
	}
	return r, true
}

// nor is Cedar's ||.
type nor struct{ l, r nnode }

func (n nor) eval(env *callEnv) (nval, bool) {
	l, ok := n.l.eval(env)
	if !ok || l.k != kBool {
		return nval{}, false
	}
	if l.b {
		return l, true
	}
	r, ok := n.r.eval(env)
	if !ok || r.k != kBool {
		return nval{}, false
	}
	return r, true
}

type nnot struct{ a nnode }

func (n nnot) eval(env *callEnv) (nval, bool) {
	v, ok := n.a.eval(env)
	if !ok || v.k != kBool {
		return nval{}, false
	}
	v.b = !v.b
	return v, true
}

// neq is == (or != when neg): values of different types are not equal.
type neq struct {
	l, r nnode
	neg  bool
}

func (n neq) eval(env *callEnv) (nval, bool) {
	l, ok := n.l.eval(env)
	if !ok {
		return nval{}, false
	}
	r, ok := n.r.eval(env)
	if !ok {
		return nval{}, false
	}
	eq := l.k == r.k && l.b == r.b && l.i == r.i && l.s == r.s
	return nval{k: kBool, b: eq != n.neg}, true
}

type cmpOp uint8

const (
	cmpLT cmpOp = iota
	cmpLE
	cmpGT
	cmpGE
)

// ncmp compares two Longs; anything else is left to Cedar.
type ncmp struct {
	l, r nnode
	op   cmpOp
}

func (n ncmp) eval(env *callEnv) (nval, bool) {
	l, ok := n.l.eval(env)
	if !ok || l.k != kLong {
		return nval{}, false
	}
	r, ok := n.r.eval(env)
	if !ok || r.k != kLong {
		return nval{}, false
	}
	var b bool
	switch n.op {
	case cmpLT:
		b = l.i < r.i
	case cmpLE:
		b = l.i <= r.i
	case cmpGT:
		b = l.i > r.i
	default:
		b = l.i >= r.i
	}
	return nval{k: kBool, b: b}, true
}

type nlike struct {
	a   nnode
	pat types.Pattern
}

func (n nlike) eval(env *callEnv) (nval, bool) {
	v, ok := n.a.eval(env)
	if !ok || v.k != kString {
		return nval{}, false
	}
	return nval{k: kBool, b: n.pat.Match(types.String(v.s))}, true
}

// nargHas is `context.args has name`: true when the argument is there and
// the context would hold it (cedarValue converts it).
type nargHas struct{ name string }

func (n nargHas) eval(env *callEnv) (nval, bool) {
	v, ok := env.args[n.name]
	return nval{k: kBool, b: ok && inContext(v)}, true
}

// inContext reports whether cedarValue(v, 1) succeeds, without building
// the value for the common kinds.
func inContext(v any) bool {
	switch v.(type) {
	case string, bool, int, int64, []any, []string, map[string]any:
		return true
	case float64, json.Number:
		_, ok := cedarValue(v, 1)
		return ok
	}
	return false
}

// narg is `context.args.name` for an argument that converts to a Long, a
// String or a Boolean as cedarValue converts it.
type narg struct{ name string }

func (n narg) eval(env *callEnv) (nval, bool) {
	switch v := env.args[n.name].(type) {
	case string:
		return nval{k: kString, s: v}, true
	case bool:
		return nval{k: kBool, b: v}, true
	case float64:
		if v == math.Trunc(v) && v >= -9.2e18 && v <= 9.2e18 {
			return nval{k: kLong, i: int64(v)}, true
		}
	case int:
		return nval{k: kLong, i: int64(v)}, true
	case int64:
		return nval{k: kLong, i: v}, true
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return nval{k: kLong, i: i}, true
		}
	}
	return nval{}, false
}

// nattrHas is `principal has name` or `resource has name`.
type nattrHas struct {
	resource bool
	name     types.String
}

func (n nattrHas) eval(env *callEnv) (nval, bool) {
	rec := env.principal
	if n.resource {
		rec = env.resource
	}
	_, ok := rec.Get(n.name)
	return nval{k: kBool, b: ok}, true
}

// nattr is `principal.name` or `resource.name`.
type nattr struct {
	resource bool
	name     types.String
}

func (n nattr) eval(env *callEnv) (nval, bool) {
	rec := env.principal
	if n.resource {
		rec = env.resource
	}
	v, ok := rec.Get(n.name)
	if !ok {
		return nval{}, false
	}
	return literal(v)
}

// nctxHas is `context has name`: the context holds args always, session
// and delegated when set (buildContext).
type nctxHas struct{ name string }

func (n nctxHas) eval(env *callEnv) (nval, bool) {
	var b bool
	switch n.name {
	case "args":
		b = true
	case "session":
		b = env.hasSID
	case "delegated":
		b = env.delegated
	}
	return nval{k: kBool, b: b}, true
}

// nctx is context.session or context.delegated.
type nctx struct{ name string }

func (n nctx) eval(env *callEnv) (nval, bool) {
	switch {
	case n.name == "session" && env.hasSID:
		return nval{k: kString, s: env.sid}, true
	case n.name == "delegated" && env.delegated:
		return nval{k: kBool, b: true}, true
	}
	return nval{}, false
}
