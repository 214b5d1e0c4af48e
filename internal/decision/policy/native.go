package policy

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/cedar-policy/cedar-go/types"

	"github.com/skillgate/skillgate/internal/decision/policy/internal/cedarinspect"
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
// negation), in order, as a flat program: each instruction's operands come
// before it and the last one is the result. A plan copies the programs of
// its per-call policies into one array (memo.go), so that a call reads
// them from consecutive memory. nil when some condition has a shape it
// does not evaluate.
type nativeCond struct{ code []ninstr }

// ninstr is one instruction: an operation, its operands (indices into the
// program) and its literal or the name it reads.
type ninstr struct {
	op   nop
	k    nkind // nconst: the literal's kind
	b    bool  // nconst: a Boolean literal; neq: negate (!=)
	cmp  cmpOp
	l, r int16
	i    int64  // nconst: a Long literal
	s    string // nconst: a String literal; the name an access or has reads
	pat  *types.Pattern
}

// nop is an instruction's operation.
type nop uint8

const (
	nconst   nop = iota + 1
	nand         // Cedar's &&: the left side must be a Boolean, a false one decides
	nor          // Cedar's ||
	nnot         // !
	neq          // == (or != when b): values of different types are not equal
	ncmp         // <, <=, >, >= over two Longs; anything else is left to Cedar
	nlike        // like over a String
	nargHas      // context.args has s
	narg         // context.args.s
	nprinHas     // principal has s
	nprin        // principal.s
	nresHas      // resource has s
	nres         // resource.s
	nctxHas      // context has s
	nctx         // context.s (session or delegated)
)

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

type cmpOp uint8

const (
	cmpLT cmpOp = iota
	cmpLE
	cmpGT
	cmpGE
)

// maxNativeCode bounds a compiled program; longer conditions are left to
// Cedar (operand indices are int16).
const maxNativeCode = 256

// callEnv is what a call's native evaluation reads.
type callEnv struct {
	args      map[string]any
	principal types.Record // the principal's attributes
	resource  types.Record // the capability's attributes
	sid       string
	hasSID    bool
	exec      string // the executor the call was routed from
	hasExec   bool
	acct      string // the account of the connection the call uses
	hasAcct   bool
	delegated bool
}

// compileNative compiles the conditions of a policy, or returns nil. argNames
// and fullArgs are the policy's (what its text reads from context.args): an
// argument the policy reads but its text scan did not find might be left
// out of the context Cedar sees, so such a read is not compiled.
func compileNative(conds []cedarinspect.Condition, argNames []string, fullArgs bool) *nativeCond {
	c := compiler{argNames: argNames, fullArgs: fullArgs}
	root := int16(-1)
	for i := len(conds) - 1; i >= 0; i-- {
		n, ok := c.expr(conds[i].Body)
		if !ok {
			return nil
		}
		if conds[i].Unless {
			n = c.emit(ninstr{op: nnot, l: n})
		}
		if root >= 0 {
			n = c.emit(ninstr{op: nand, l: n, r: root})
		}
		root = n
	}
	if root < 0 {
		c.emit(ninstr{op: nconst, k: kBool, b: true})
	}
	if len(c.code) > maxNativeCode {
		return nil
	}
	return &nativeCond{code: c.code[:len(c.code):len(c.code)]}
}

type compiler struct {
	argNames []string
	fullArgs bool
	code     []ninstr
}

func (c *compiler) emit(in ninstr) int16 {
	c.code = append(c.code, in)
	return int16(min(len(c.code)-1, maxNativeCode))
}

func (c *compiler) readsArg(name string) bool {
	return c.fullArgs || slices.Contains(c.argNames, name)
}

func (c *compiler) expr(n *cedarinspect.Node) (int16, bool) {
	switch n.Op {
	case cedarinspect.OpValue:
		switch v := n.Value.(type) {
		case types.Boolean:
			return c.emit(ninstr{op: nconst, k: kBool, b: bool(v)}), true
		case types.Long:
			return c.emit(ninstr{op: nconst, k: kLong, i: int64(v)}), true
		case types.String:
			return c.emit(ninstr{op: nconst, k: kString, s: string(v)}), true
		}
	case cedarinspect.OpAnd:
		return c.binary(ninstr{op: nand}, n.Left, n.Right)
	case cedarinspect.OpOr:
		return c.binary(ninstr{op: nor}, n.Left, n.Right)
	case cedarinspect.OpNot:
		a, ok := c.expr(n.Arg)
		return c.emit(ninstr{op: nnot, l: a}), ok
	case cedarinspect.OpEquals:
		return c.binary(ninstr{op: neq}, n.Left, n.Right)
	case cedarinspect.OpNotEquals:
		return c.binary(ninstr{op: neq, b: true}, n.Left, n.Right)
	case cedarinspect.OpLessThan:
		return c.binary(ninstr{op: ncmp, cmp: cmpLT}, n.Left, n.Right)
	case cedarinspect.OpLessThanOrEqual:
		return c.binary(ninstr{op: ncmp, cmp: cmpLE}, n.Left, n.Right)
	case cedarinspect.OpGreaterThan:
		return c.binary(ninstr{op: ncmp, cmp: cmpGT}, n.Left, n.Right)
	case cedarinspect.OpGreaterThanOrEqual:
		return c.binary(ninstr{op: ncmp, cmp: cmpGE}, n.Left, n.Right)
	case cedarinspect.OpLike:
		a, ok := c.expr(n.Arg)
		pat := n.Pattern
		return c.emit(ninstr{op: nlike, l: a, pat: &pat}), ok
	case cedarinspect.OpHas:
		return c.read(n.Arg, n.Name, true)
	case cedarinspect.OpAccess:
		return c.read(n.Arg, n.Name, false)
	default:
	}
	return 0, false
}

func (c *compiler) binary(in ninstr, l, r *cedarinspect.Node) (int16, bool) {
	var lok, rok bool
	in.l, lok = c.expr(l)
	in.r, rok = c.expr(r)
	return c.emit(in), lok && rok
}

// read compiles `obj has name` (has) or `obj.name` for obj one of
// context.args, context (session or delegated for an access), principal,
// resource.
func (c *compiler) read(obj *cedarinspect.Node, name string, has bool) (int16, bool) {
	pick := func(hasOp, getOp nop) nop {
		if has {
			return hasOp
		}
		return getOp
	}
	switch variable(obj) {
	case "principal":
		return c.emit(ninstr{op: pick(nprinHas, nprin), s: name}), true
	case "resource":
		return c.emit(ninstr{op: pick(nresHas, nres), s: name}), true
	case "context":
		return c.emit(ninstr{op: pick(nctxHas, nctx), s: name}), has || name == "session" || name == "delegated" || name == "executor" || name == "account"
	}
	if isContextArgs(obj) {
		return c.emit(ninstr{op: pick(nargHas, narg), s: name}), c.readsArg(name)
	}
	return 0, false
}

func variable(n *cedarinspect.Node) string {
	if n.Op == cedarinspect.OpVariable {
		return n.Name
	}
	return ""
}

func isContextArgs(n *cedarinspect.Node) bool {
	return n.Op == cedarinspect.OpAccess && n.Name == "args" && variable(n.Arg) == "context"
}

// eval evaluates the conditions; ok false means Cedar must decide.
func (c *nativeCond) eval(env *callEnv) (satisfied, ok bool) {
	return evalCode(c.code, env)
}

// evalCode evaluates a program (its last instruction).
func evalCode(code []ninstr, env *callEnv) (satisfied, ok bool) {
	v, ok := evalAt(code, int16(len(code)-1), env)
	if !ok || v.k != kBool {
		return false, false
	}
	return v.b, true
}

// evalAt evaluates instruction at of code. ok false: the value is not one
// nval models, or Cedar might report an error.
func evalAt(code []ninstr, at int16, env *callEnv) (nval, bool) {
	in := &code[at]
	switch in.op {
	case nconst:
		return nval{k: in.k, b: in.b, i: in.i, s: in.s}, true
	case nand, nor:
		l, ok := evalAt(code, in.l, env)
		if !ok || l.k != kBool {
			return nval{}, false
		}
		if l.b == (in.op == nor) {
			return l, true // false && …, true || …
		}
		r, ok := evalAt(code, in.r, env)
		if !ok || r.k != kBool {
			return nval{}, false
		}
		return r, true
	case nnot:
		v, ok := evalAt(code, in.l, env)
		if !ok || v.k != kBool {
			return nval{}, false
		}
		v.b = !v.b
		return v, true
	case neq:
		l, ok := evalAt(code, in.l, env)
		if !ok {
			return nval{}, false
		}
		r, ok := evalAt(code, in.r, env)
		if !ok {
			return nval{}, false
		}
		eq := l.k == r.k && l.b == r.b && l.i == r.i && l.s == r.s
		return nval{k: kBool, b: eq != in.b}, true
	case ncmp:
		l, ok := evalAt(code, in.l, env)
		if !ok || l.k != kLong {
			return nval{}, false
		}
		r, ok := evalAt(code, in.r, env)
		if !ok || r.k != kLong {
			return nval{}, false
		}
		var b bool
		switch in.cmp {
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
	case nlike:
		v, ok := evalAt(code, in.l, env)
		if !ok || v.k != kString {
			return nval{}, false
		}
		return nval{k: kBool, b: in.pat.Match(types.String(v.s))}, true
	case nargHas:
		// True when the argument is there and the context would hold it
		// (cedarValue converts it).
		v, ok := env.args[in.s]
		return nval{k: kBool, b: ok && inContext(v)}, true
	case narg:
		return argValue(env.args[in.s])
	case nprinHas, nresHas:
		rec := env.principal
		if in.op == nresHas {
			rec = env.resource
		}
		_, ok := rec.Get(types.String(in.s))
		return nval{k: kBool, b: ok}, true
	case nprin, nres:
		rec := env.principal
		if in.op == nres {
			rec = env.resource
		}
		v, ok := rec.Get(types.String(in.s))
		if !ok {
			return nval{}, false
		}
		return literal(v)
	case nctxHas:
		// The context holds args always, session, executor and delegated
		// when set (buildContext).
		var b bool
		switch in.s {
		case "args":
			b = true
		case "session":
			b = env.hasSID
		case "executor":
			b = env.hasExec
		case "account":
			b = env.hasAcct
		case "delegated":
			b = env.delegated
		}
		return nval{k: kBool, b: b}, true
	case nctx:
		switch {
		case in.s == "session" && env.hasSID:
			return nval{k: kString, s: env.sid}, true
		case in.s == "executor" && env.hasExec:
			return nval{k: kString, s: env.exec}, true
		case in.s == "account" && env.hasAcct:
			return nval{k: kString, s: env.acct}, true
		case in.s == "delegated" && env.delegated:
			return nval{k: kBool, b: true}, true
		}
	}
	return nval{}, false
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

// argValue is an argument that converts to a Long, a String or a Boolean
// as cedarValue converts it.
func argValue(v any) (nval, bool) {
	switch v := v.(type) {
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
