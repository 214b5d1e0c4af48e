package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// Cost bounds of a mapping expression, in CEL cost units (about one unit
// per operation, strings and lists costed by size).
const (
	// CostLimit is the most one expression may cost on one call. An
	// expression whose estimated worst case exceeds it is refused when it
	// is compiled; one that would exceed it on a call is stopped there.
	CostLimit = 1_000_000
	// MaxArgBytes is the size the cost estimate assumes of every string
	// and list of the canonical arguments: a call's arguments are bounded
	// by the transports' request limit well below it.
	MaxArgBytes = 64 << 10
)

// ArgsVar is the CEL variable holding the executor's canonical arguments.
const ArgsVar = "args"

// celEnv is the one environment every mapping compiles in: args (a map
// from argument name to value; each access is then typed from the
// executor's schema, see [CompileMapping]), the string extension (split,
// substring, indexOf, lowerAscii …) and optional values (args.?body).
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable(ArgsVar, cel.MapType(cel.StringType, cel.DynType)),
		ext.Strings(),
		cel.OptionalTypes(),
	)
})

// Mapping writes a tool's arguments from an executor's canonical
// arguments: one compiled CEL program per tool argument. It is immutable
// and safe for concurrent use.
type Mapping struct {
	tool   string        // "server/tool", for messages
	fields []mappedField // sorted by name
	schema *jsonschema.Schema
	flat   *flatSchema // the schema's fast check, nil when it has none
}

type mappedField struct {
	name string
	prg  cel.Program // with the runtime cost limit and interrupt checks
	// fast is the same program without them, for arguments within the
	// sizes the cost estimate assumed: there the estimate, at most
	// CostLimit, already bounds the cost (see boundedArgs).
	fast     cel.Program
	optional bool
	// direct names the executor argument when the expression is exactly
	// args.NAME, args["NAME"] or args.?NAME: the fast path copies it
	// without evaluating (TestFastPathDifferential holds it to CEL).
	direct string // the expression yields an optional; none omits the argument
}

// Fields returns the tool arguments the mapping writes, sorted.
func (m *Mapping) Fields() []string {
	s := make([]string, len(m.fields))
	for i, f := range m.fields {
		s[i] = f.name
	}
	return s
}

// CompileMapping compiles and checks the mapping of executor ex onto tool
// t: arguments maps each tool argument to a CEL expression over args. It
// refuses, naming the argument at fault and the fix:
//   - an argument the tool does not have (when its schema is closed);
//   - a required tool argument without a mapping, or mapped to an optional;
//   - an expression that does not compile, or references an executor
//     argument the executor does not have, or uses args other than as
//     args.NAME, args.?NAME or args["NAME"];
//   - an expression whose type cannot be the JSON type the tool's
//     inputSchema declares for the argument (an int for a string);
//   - an expression whose estimated worst-case cost exceeds [CostLimit].
//
// Errors wrap [ErrInvalidMapping].
func CompileMapping(ex *Executor, t capability.Tool, arguments map[string]string) (*Mapping, error) {
	return NewCompiler().CompileMapping(ex, t, arguments)
}

// Compiler compiles mappings, sharing one compiled program among the
// identical expressions of many backends (a provider's
// args.repository.split("/")[0] in each of its executors): what a program
// is depends on its source alone, while the checks that depend on the
// executor and the tool run for each. Sharing keeps a large catalog's
// programs few, and so in the processor's caches. It is safe for
// concurrent use.
type Compiler struct {
	mu    sync.Mutex
	progs map[string]*program
}

// program is one expression compiled, its cost estimated, once.
type program struct {
	ast       *cel.Ast
	prg, fast cel.Program
	est       uint64
	err       error // the compile error, the message without arguments.NAME
}

// NewCompiler returns a compiler with nothing compiled yet.
func NewCompiler() *Compiler { return &Compiler{progs: map[string]*program{}} }

// compile compiles src once.
func (c *Compiler) compile(env *cel.Env, src string) *program {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.progs[src]; ok {
		return p
	}
	p := &program{}
	c.progs[src] = p
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		p.err = fmt.Errorf("the expression %q does not compile: %s", src, oneLine(iss.Err().Error()))
		return p
	}
	p.ast = ast
	est, err := env.EstimateCost(ast, sizeEstimator{})
	if err != nil {
		p.err = fmt.Errorf("the expression %q: its cost cannot be estimated: %s", src, oneLine(err.Error()))
		return p
	}
	p.est = est.Max
	if p.est > CostLimit {
		return p // refused by the caller, after its other checks
	}
	if p.prg, err = env.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(64), cel.EvalOptions(cel.OptOptimize)); err == nil {
		p.fast, err = env.Program(ast, cel.EvalOptions(cel.OptOptimize))
	}
	if err != nil {
		p.err = fmt.Errorf("the expression %q: %s", src, oneLine(err.Error()))
	}
	return p
}

// CompileMapping is [CompileMapping] with c's shared programs.
func (c *Compiler) CompileMapping(ex *Executor, t capability.Tool, arguments map[string]string) (*Mapping, error) {
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("%w: the CEL environment: %v", ErrInvalidMapping, err)
	}
	toolName := t.Name()
	raw := t.InputSchema
	if len(raw) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	shape, err := shapeOf(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %s: inputSchema %v", ErrInvalidMapping, toolName, err)
	}
	schema, err := compileSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %s: inputSchema does not compile: %s", ErrInvalidMapping, toolName, oneLine(err.Error()))
	}
	m := &Mapping{tool: toolName, schema: schema}
	if f, ok := flatOf(raw); ok {
		m.flat = f
	}
	names := make([]string, 0, len(arguments))
	for k := range arguments {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		f, err := c.compileField(env, ex, toolName, shape, name, arguments[name])
		if err != nil {
			return nil, fmt.Errorf("%w: arguments.%s: %w", ErrInvalidMapping, name, err)
		}
		m.fields = append(m.fields, f)
	}
	var missing []string
	for _, r := range shape.required {
		i := slices.IndexFunc(m.fields, func(f mappedField) bool { return f.name == r })
		switch {
		case i < 0:
			missing = append(missing, r)
		case m.fields[i].optional:
			return nil, fmt.Errorf("%w: arguments.%s: tool %s requires %s, but the expression may yield no value (an optional); map it to a value, e.g. args.?x.orValue(\"\")", ErrInvalidMapping, r, toolName, r)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: tool %s requires %s, which no mapping writes: add arguments.%s: <a CEL expression over args>", ErrInvalidMapping, toolName, strings.Join(missing, ", "), missing[0])
	}
	return m, nil
}

// compileField compiles one expression and checks it; the error says what
// is wrong without the "arguments.NAME" prefix.
func (c *Compiler) compileField(env *cel.Env, ex *Executor, toolName string, shape objectShape, name, src string) (mappedField, error) {
	want, known := shape.props[name]
	if !known && shape.closed {
		return mappedField{}, fmt.Errorf("tool %s has no argument %q (its arguments: %s); remove it", toolName, name, shape.names())
	}
	p := c.compile(env, src)
	if p.ast == nil {
		return mappedField{}, p.err
	}
	ast := p.ast
	direct, err := checkRefs(ast.NativeRep().Expr(), ex)
	if err != nil {
		return mappedField{}, err
	}
	out := ast.OutputType()
	optional := false
	if out.Kind() == types.OpaqueKind && out.TypeName() == "optional_type" {
		optional = true
		out = out.Parameters()[0]
	}
	var got []string
	gotName := out.String()
	if jt, ok := jsonTypeOf(out); ok {
		got = []string{jt}
	} else if out.Kind() != types.DynKind && out.Kind() != types.AnyKind {
		return mappedField{}, fmt.Errorf("the expression %q yields %s, which has no JSON form; convert it (string(x))", src, gotName)
	} else if direct != "" {
		// args.NAME is dyn to CEL; the executor's schema knows its type.
		got = ex.shape.props[direct]
		gotName = "args." + direct + " (" + strings.Join(got, " or ") + ")"
	}
	if len(want) > 0 && len(got) > 0 && !slices.ContainsFunc(got, func(g string) bool { return fits(g, want) }) {
		return mappedField{}, fmt.Errorf("the expression %q yields %s, but tool %s's inputSchema wants %s to be %s; convert it (%s)", src, gotName, toolName, name, strings.Join(want, " or "), conversion(want))
	}
	if p.err != nil {
		return mappedField{}, p.err
	}
	if p.est > CostLimit {
		return mappedField{}, fmt.Errorf("the expression %q may cost up to %s, over the limit of %d (for arguments of up to %d bytes); do less work per argument byte (no nested loops over the arguments, no replace or join that multiplies them)", src, costString(p.est), CostLimit, MaxArgBytes)
	}
	return mappedField{name: name, prg: p.prg, fast: p.fast, optional: optional, direct: direct}, nil
}

func costString(c uint64) string {
	if c == math.MaxUint64 {
		return "an unbounded cost"
	}
	return fmt.Sprint(c)
}

// checkRefs checks every use of args in e: it must be a field access with
// a constant name (args.x, args.?x, has(args.x), args["x"], args[?"x"])
// naming an argument of the executor. It returns that name when e is
// exactly args.x, args["x"] or args.?x (whose type the executor's schema
// gives).
func checkRefs(e celast.Expr, ex *Executor) (direct string, err error) {
	covered := map[int64]bool{}
	var bad error
	check := func(n string) {
		if _, ok := ex.shape.props[n]; !ok && bad == nil {
			bad = fmt.Errorf("executor %s has no argument %q (its arguments: %s)", ex.Name, n, ex.shape.names())
		}
	}
	isArgs := func(x celast.Expr) bool { return x.Kind() == celast.IdentKind && x.AsIdent() == ArgsVar }
	constName := func(x celast.Expr) (string, bool) {
		if x.Kind() != celast.LiteralKind {
			return "", false
		}
		s, ok := x.AsLiteral().(types.String)
		return string(s), ok
	}
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(x celast.Expr) {
		switch x.Kind() {
		case celast.SelectKind:
			if s := x.AsSelect(); isArgs(s.Operand()) {
				covered[s.Operand().ID()] = true
				check(s.FieldName())
			}
		case celast.CallKind:
			c := x.AsCall()
			switch c.FunctionName() {
			case operators.Index, operators.OptIndex, operators.OptSelect:
				if a := c.Args(); len(a) == 2 && isArgs(a[0]) {
					if n, ok := constName(a[1]); ok {
						covered[a[0].ID()] = true
						check(n)
					}
				}
			}
		case celast.IdentKind:
			if x.AsIdent() == ArgsVar && !covered[x.ID()] && bad == nil {
				bad = errors.New(`use args only as args.NAME, args.?NAME (optional) or has(args.NAME), with a constant NAME`)
			}
		}
	}))
	if bad != nil {
		return "", bad
	}
	switch e.Kind() {
	case celast.SelectKind:
		if s := e.AsSelect(); isArgs(s.Operand()) && !s.IsTestOnly() {
			return s.FieldName(), nil
		}
	case celast.CallKind:
		if c := e.AsCall(); (c.FunctionName() == operators.Index || c.FunctionName() == operators.OptSelect) && len(c.Args()) == 2 && isArgs(c.Args()[0]) {
			n, _ := constName(c.Args()[1])
			return n, nil
		}
	}
	return "", nil
}

// jsonTypeOf returns the JSON Schema type of values of CEL type t, false
// for dyn and for types without a JSON form.
func jsonTypeOf(t *cel.Type) (string, bool) {
	switch t.Kind() {
	case types.StringKind:
		return "string", true
	case types.IntKind, types.UintKind:
		return "integer", true
	case types.DoubleKind:
		return "number", true
	case types.BoolKind:
		return "boolean", true
	case types.ListKind:
		return "array", true
	case types.MapKind:
		return "object", true
	case types.NullTypeKind:
		return "null", true
	}
	return "", false
}

// fits reports whether a value of JSON type got satisfies one of want.
func fits(got string, want []string) bool {
	for _, w := range want {
		if w == got || w == "number" && got == "integer" {
			return true
		}
	}
	return false
}

// conversion suggests the CEL conversion to one of the JSON types.
func conversion(want []string) string {
	switch want[0] {
	case "string":
		return "string(x)"
	case "integer":
		return "int(x)"
	case "number":
		return "int(x) or double(x)"
	case "boolean":
		return "a comparison, x == \"true\""
	case "array":
		return "a list, [x]"
	case "object":
		return "a map, {\"key\": x}"
	}
	return "a value of that type"
}

// sizeEstimator tells the cost estimator how large the canonical
// arguments may be: every string and list under args at most
// [MaxArgBytes].
type sizeEstimator struct{}

// EstimateSize implements checker.CostEstimator.
func (sizeEstimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if p := n.Path(); len(p) > 0 && p[0] == ArgsVar {
		return &checker.SizeEstimate{Min: 0, Max: MaxArgBytes}
	}
	return nil
}

// EstimateCallCost implements checker.CostEstimator: the library's own
// estimates.
func (sizeEstimator) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// Apply writes the tool's arguments from canonical arguments (as decoded
// from JSON; numbers may be json.Number) and validates them against the
// tool's input schema. See [Mapping.ApplyContext].
func (m *Mapping) Apply(args map[string]any) (json.RawMessage, error) {
	return m.ApplyContext(context.Background(), args)
}

// ApplyContext is [Mapping.Apply] stopped when ctx ends. An expression
// yielding an empty optional (args.?body of a call without body) leaves
// its argument out. Errors wrap [ErrMappingFailed] and name the tool
// argument: an evaluation error, the cost limit reached, or arguments the
// tool's schema refuses.
func (m *Mapping) ApplyContext(ctx context.Context, args map[string]any) (json.RawMessage, error) {
	cargs, _ := celArgs(args)
	act := argsActivation{cargs}
	bounded := boundedArgs(cargs, 0)
	out := make(map[string]any, len(m.fields))
	for _, f := range m.fields {
		if f.direct != "" && bounded {
			if a, ok := cargs[f.direct]; ok {
				out[f.name] = a
				continue
			}
			if f.optional {
				continue
			}
			// Absent and not optional: CEL words the error.
		}
		var v ref.Val
		var err error
		if bounded {
			v, _, err = f.fast.Eval(act)
		} else {
			v, _, err = f.prg.ContextEval(ctx, act)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: arguments.%s: %s", ErrMappingFailed, m.tool, f.name, oneLine(err.Error()))
		}
		j, present, err := toJSON(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: arguments.%s: %v", ErrMappingFailed, m.tool, f.name, err)
		}
		if present {
			out[f.name] = j
		}
	}
	if m.flat == nil || !m.flat.valid(out) {
		if err := m.schema.Validate(out); err != nil {
			return nil, fmt.Errorf("%w: %s: the mapped arguments do not satisfy the tool's inputSchema: %s", ErrMappingFailed, m.tool, oneLine(err.Error()))
		}
	}
	b, err := m.appendArgs(make([]byte, 0, 128), out)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMappingFailed, m.tool, err)
	}
	return b, nil
}

// argsActivation binds args and nothing else: one pointer-shaped value,
// so passing it as an interpreter.Activation allocates nothing.
type argsActivation struct{ args map[string]any }

// ResolveName implements interpreter.Activation.
func (a argsActivation) ResolveName(name string) (any, bool) {
	if name == ArgsVar {
		return a.args, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (argsActivation) Parent() interpreter.Activation { return nil }

var _ interpreter.Activation = argsActivation{}

// boundedArgs reports whether every string, list and map of v is within
// the size the cost estimate assumes ([MaxArgBytes]), and v nests at most
// 32 levels: then an expression's estimated worst case, which
// CompileMapping holds to [CostLimit], bounds its cost on v, and it needs
// no runtime tracking. Larger arguments run with the runtime limit.
func boundedArgs(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case string:
		return len(x) <= MaxArgBytes
	case map[string]any:
		if len(x) > MaxArgBytes {
			return false
		}
		for k, e := range x {
			if len(k) > MaxArgBytes || !boundedArgs(e, depth+1) {
				return false
			}
		}
	case []any:
		if len(x) > MaxArgBytes {
			return false
		}
		for _, e := range x {
			if !boundedArgs(e, depth+1) {
				return false
			}
		}
	}
	return true
}

// celArgs returns args with every json.Number as int64 (or float64 when
// it is not an integer), and every int, int32 and float32 widened: the
// number types CEL and the fast path know. Maps and lists are
// copied only when they hold a number; changed reports a copy.
func celArgs(args map[string]any) (_ map[string]any, changed bool) {
	var out map[string]any
	for k, v := range args {
		if c, changed := celValue(v); changed {
			if out == nil {
				out = make(map[string]any, len(args))
				for k2, v2 := range args {
					out[k2] = v2
				}
			}
			out[k] = c
		}
	}
	if out == nil {
		return args, false
	}
	return out, true
}

func celValue(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		f, _ := x.Float64()
		return f, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float32:
		return float64(x), true
	case map[string]any:
		return celArgs(x)
	case []any:
		var out []any
		for i, e := range x {
			if c, changed := celValue(e); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = c
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// toJSON converts a CEL value to the Go value encoding/json writes;
// present is false for an empty optional.
func toJSON(v ref.Val) (any, bool, error) {
	switch x := v.(type) {
	case *types.Optional:
		if !x.HasValue() {
			return nil, false, nil
		}
		return toJSON(x.GetValue())
	case types.String:
		return string(x), true, nil
	case types.Int:
		return int64(x), true, nil
	case types.Uint:
		return uint64(x), true, nil
	case types.Double:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, false, fmt.Errorf("%v has no JSON form", float64(x))
		}
		return float64(x), true, nil
	case types.Bool:
		return bool(x), true, nil
	case types.Null:
		return nil, true, nil
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, false, fmt.Errorf("a map key of type %s; JSON keys are strings", k.Type().TypeName())
			}
			e, present, err := toJSON(x.Get(k))
			if err != nil {
				return nil, false, err
			}
			if present {
				out[string(ks)] = e
			}
		}
		return out, true, nil
	case traits.Lister:
		n, _ := x.Size().(types.Int)
		out := make([]any, 0, int(n))
		it := x.Iterator()
		for it.HasNext() == types.True {
			e, present, err := toJSON(it.Next())
			if err != nil {
				return nil, false, err
			}
			if present {
				out = append(out, e)
			}
		}
		return out, true, nil
	}
	return nil, false, fmt.Errorf("a value of type %s has no JSON form", v.Type().TypeName())
}
