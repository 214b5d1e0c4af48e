package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
)

func TestResultMapping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, msg string }{
		{`size(result)`, `invalid result mapping: result "size(result)" yields int; it must yield the text for the agent, a string`},
		{`result.content[`, `invalid result mapping: result "result.content[": ERROR`},
		{`nope`, `undeclared reference to 'nope'`},
	} {
		if _, err := executor.CompileResult(tc.src); !errors.Is(err, executor.ErrInvalidResult) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("CompileResult(%s) = %v, want %q", tc.src, err, tc.msg)
		}
	}
	texts, err := executor.CompileResult(`result.content.filter(c, c.type == "text").map(c, c.text).join("\n")`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct{ in, want, msg string }{
		{`{"content":[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]}`, `{"content":[{"text":"a\nb","type":"text"}]}`, ""},
		{`{"content":[{"type":"text","text":"not found"}],"isError":true}`, `{"content":[{"text":"not found","type":"text"}],"isError":true}`, ""},
		{`[1]`, "", "result mapping failed: the result is not a JSON object"},
		{`{"content":"x"}`, "", "result mapping failed: result"},
	} {
		got, err := texts.Apply(ctx, json.RawMessage(tc.in))
		if tc.msg != "" {
			if !errors.Is(err, executor.ErrResultFailed) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Apply(%s) error = %v, want %q", tc.in, err, tc.msg)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("Apply(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	// A result expression that would cost more than the limit is stopped.
	square, err := executor.CompileResult(`string(size(result.items.map(a, result.items.map(b, a + b))))`)
	if err != nil {
		t.Fatal(err)
	}
	items := make([]int, 3000)
	raw, _ := json.Marshal(map[string]any{"items": items})
	if _, err := square.Apply(ctx, raw); !errors.Is(err, executor.ErrResultFailed) || !strings.Contains(err.Error(), "cost") {
		t.Errorf("an expensive result expression: %v", err)
	}
	if _, err := texts.Apply(ctx, json.RawMessage(`{"content":[],"pad":"`+strings.Repeat("x", executor.MaxResultBytes)+`"}`)); !errors.Is(err, executor.ErrResultFailed) ||
		!strings.Contains(err.Error(), "larger than") {
		t.Errorf("a huge result: %v", err)
	}
}

func TestBackendsWithResult(t *testing.T) {
	t.Parallel()
	cat := executor.Builtin()
	src := "apiVersion: skillgate.dev/v1\nkind: Backends\nprovider: github\nbackends:\n  - executor: create_issue\n    server: gh\n    tool: create_issue\n    arguments:\n      title: args.title\n    result: 'result.content.map(c, c.text).join(\"\")'\n"
	f, err := executor.ParseBackends("backends.yaml", []byte(src), cat)
	if err != nil {
		t.Fatal(err)
	}
	if f.Backends[0].Result == "" {
		t.Fatal("the result expression was not read")
	}
	bad := strings.Replace(src, `result.content.map(c, c.text).join("")`, `size(result)`, 1)
	if f, err = executor.ParseBackends("backends.yaml", []byte(bad), cat); err != nil {
		t.Fatal(err)
	}
	if f.Backends[0].Result != "size(result)" {
		t.Fatalf("result %q", f.Backends[0].Result)
	}
}
