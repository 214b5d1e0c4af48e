package propose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Lookups: a model may ask questions before it answers (function calling
// of the OpenAI chat API). The functions are the caller's, and must have
// no side effects: they read what the caller already holds.

// Bounds of a conversation with lookups.
const (
	// MaxLookupRounds bounds the rounds of function calls before the model
	// must answer (the last request forbids calls: tool_choice none).
	MaxLookupRounds = 4
	// MaxLookupCalls bounds the function calls of one round.
	MaxLookupCalls = 8
	// MaxLookupResultBytes bounds one function's result as sent back.
	MaxLookupResultBytes = 16 << 10
	// maxLookupArgBytes bounds the arguments a model sends one call.
	maxLookupArgBytes = 4 << 10
)

// ErrLookup means the model's function calls broke the bounds or the
// protocol (a call of an unknown function, calls after the last round).
var ErrLookup = errors.New("lookup failed")

// Lookup is a function the model may call: its name, what it answers and
// the JSON Schema of its arguments.
type Lookup struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// LookupFunc answers one call of the lookup named name with arguments
// args (JSON, unvalidated: the function checks them). An error is sent
// to the model as the answer, not returned.
type LookupFunc func(ctx context.Context, name string, args json.RawMessage) (string, error)

type toolsRequest struct {
	Model          string         `json:"model"`
	Messages       []toolsMessage `json:"messages"`
	Tools          []toolSpec     `json:"tools,omitempty"`
	ToolChoice     string         `json:"tool_choice,omitempty"`
	ResponseFormat responseFormat `json:"response_format"`
}

type toolsMessage struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolSpec struct {
	Type     string       `json:"type"`
	Function functionSpec `json:"function"`
}

type functionSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type toolsResponse struct {
	Choices []struct {
		Message *struct {
			Content   *string    `json:"content"`
			Refusal   *string    `json:"refusal"`
			ToolCalls []toolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

func str(s string) *string { return &s }

// CompleteWithLookups is [OpenAI.Complete] where the model may first call
// the lookups: at most [MaxLookupRounds] rounds of at most
// [MaxLookupCalls] calls, each answered by call (its result cut to
// [MaxLookupResultBytes]); the request after the last round forbids
// calls. The answer is then read as Complete reads it. Errors are
// Complete's, or wrap [ErrLookup].
func (o *OpenAI) CompleteWithLookups(ctx context.Context, system, user, schemaName string, schema map[string]any, lookups []Lookup, call LookupFunc) ([]byte, error) {
	msgs := []toolsMessage{{Role: "system", Content: str(system)}, {Role: "user", Content: str(user)}}
	specs := make([]toolSpec, len(lookups))
	known := map[string]bool{}
	for i, l := range lookups {
		specs[i] = toolSpec{Type: "function", Function: functionSpec{Name: l.Name, Description: l.Description, Parameters: l.Parameters}}
		known[l.Name] = true
	}
	for round := 0; ; round++ {
		req := toolsRequest{Model: o.model, Messages: msgs, Tools: specs,
			ResponseFormat: responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: schemaName, Strict: true, Schema: schema}}}
		if round == MaxLookupRounds {
			req.ToolChoice = "none"
		}
		body, err := marshalJSON(req)
		if err != nil {
			return nil, fmt.Errorf("%w: encoding the request: %w", ErrInputTooLarge, err)
		}
		resp, err := o.roundTrip(ctx, body)
		if err != nil {
			return nil, err
		}
		if len(resp.Choices) == 0 || resp.Choices[0].Message == nil {
			return nil, fmt.Errorf("%w: %s: no choices[0].message in the answer", ErrMalformedResponse, o.shown)
		}
		choice := resp.Choices[0]
		m := choice.Message
		if r := m.Refusal; r != nil && strings.TrimSpace(*r) != "" {
			return nil, fmt.Errorf("%w: %s", ErrRefused, o.scrub(cleanText(*r, maxErrorBodyBytes)))
		}
		if len(m.ToolCalls) == 0 {
			content := ""
			if m.Content != nil {
				content = *m.Content
			}
			if strings.TrimSpace(content) == "" {
				return nil, fmt.Errorf("%w: empty content (finish_reason %q)", ErrMalformedOutput, choice.FinishReason)
			}
			data := stripFence(bytes.TrimSpace([]byte(content)))
			if err := checkJSON(data); err != nil {
				return nil, outputErr(fmt.Errorf("%w: %w", ErrMalformedOutput, err), choice.FinishReason)
			}
			return data, nil
		}
		switch {
		case round == MaxLookupRounds:
			return nil, fmt.Errorf("%w: the model still called functions after %d rounds, when calls were refused", ErrLookup, MaxLookupRounds)
		case len(m.ToolCalls) > MaxLookupCalls:
			return nil, fmt.Errorf("%w: the model called %d functions at once, limit %d", ErrLookup, len(m.ToolCalls), MaxLookupCalls)
		}
		msgs = append(msgs, toolsMessage{Role: "assistant", Content: m.Content, ToolCalls: m.ToolCalls})
		for _, c := range m.ToolCalls {
			if !known[c.Function.Name] {
				return nil, fmt.Errorf("%w: the model called %q, which is not one of its functions", ErrLookup, cleanText(c.Function.Name, 64))
			}
			var answer string
			if len(c.Function.Arguments) > maxLookupArgBytes {
				answer = fmt.Sprintf("error: arguments of %d bytes, limit %d", len(c.Function.Arguments), maxLookupArgBytes)
			} else if res, err := call(ctx, c.Function.Name, json.RawMessage(c.Function.Arguments)); err != nil {
				answer = "error: " + err.Error()
			} else {
				answer = res
			}
			if len(answer) > MaxLookupResultBytes {
				answer = truncateUTF8(answer, MaxLookupResultBytes) + "…"
			}
			msgs = append(msgs, toolsMessage{Role: "tool", ToolCallID: c.ID, Content: str(answer)})
		}
	}
}

// roundTrip posts one request under the configured timeout and decodes
// the chat completion.
func (o *OpenAI) roundTrip(ctx context.Context, body []byte) (*toolsResponse, error) {
	rctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	data, err := o.post(rctx, body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("LLM proposer: %w", ctx.Err())
		}
		if errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: no complete answer from %s within %v", ErrTimeout, o.shown, o.timeout)
		}
		return nil, err
	}
	var resp toolsResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("%w: %s: body is not a chat completion: %s", ErrMalformedResponse, o.shown, o.scrub(cleanText(err.Error(), maxErrorBodyBytes)))
	}
	return &resp, nil
}
