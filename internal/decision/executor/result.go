package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// ResultVar is the CEL variable holding the backend tool's result in a
// result mapping: the MCP CallToolResult as JSON (content,
// structuredContent, isError).
const ResultVar = "result"

// MaxResultBytes bounds a result a result mapping reads; a larger one
// fails the call with the reason.
const MaxResultBytes = 4 << 20

// resultEnv is the environment result mappings compile in: result, the
// string extension and optional values.
var resultEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable(ResultVar, cel.MapType(cel.StringType, cel.DynType)),
		ext.Strings(),
		cel.OptionalTypes(),
	)
})

// ResultMapping turns a backend tool's result into the executor's: a CEL
// expression over result yielding the text the agent gets, the same
// whatever provider served the call. It runs under [CostLimit] and stops
// when the call's context ends. It is immutable and safe for concurrent
// use.
type ResultMapping struct {
	src string
	prg cel.Program
}

// CompileResult compiles a result expression. It must type-check as a
// string (or dyn, checked on each call).
func CompileResult(src string) (*ResultMapping, error) {
	env, err := resultEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(src)
	if iss.Err() != nil {
		return nil, fmt.Errorf("%w: result %q: %v", ErrInvalidResult, src, iss.Err())
	}
	if t := ast.OutputType(); !t.IsExactType(cel.StringType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("%w: result %q yields %s; it must yield the text for the agent, a string (for example result.content.map(c, c.text).join(\"\\n\"))", ErrInvalidResult, src, t)
	}
	prg, err := env.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(64))
	if err != nil {
		return nil, fmt.Errorf("%w: result %q: %v", ErrInvalidResult, src, err)
	}
	return &ResultMapping{src: src, prg: prg}, nil
}

// Source is the expression as written.
func (r *ResultMapping) Source() string { return r.src }

// Apply maps raw, a tools/call result, to the executor's result: one text
// content, marked isError when the tool's was. Errors wrap
// [ErrResultFailed].
func (r *ResultMapping) Apply(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) > MaxResultBytes {
		return nil, fmt.Errorf("%w: the result is larger than %d bytes", ErrResultFailed, MaxResultBytes)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return nil, fmt.Errorf("%w: the result is not a JSON object", ErrResultFailed)
	}
	out, _, err := r.prg.ContextEval(ctx, map[string]any{ResultVar: v})
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: result: %w", ErrResultFailed, ctx.Err())
		}
		return nil, fmt.Errorf("%w: result %q: %v", ErrResultFailed, r.src, err)
	}
	text, ok := out.Value().(string)
	if !ok {
		return nil, fmt.Errorf("%w: result %q yielded %s, not a string", ErrResultFailed, r.src, out.Type())
	}
	res := struct {
		Content []map[string]string `json:"content"`
		IsError bool                `json:"isError,omitempty"`
	}{Content: []map[string]string{{"type": "text", "text": text}}}
	res.IsError, _ = v["isError"].(bool)
	return json.Marshal(res)
}
