package promote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/propose"
	"github.com/skillgate/skillgate/internal/decision/executor"
)

// Drafter drafts the proposal of a group the deterministic drafter could
// not map. Its draft is not trusted: the caller passes it to [Validate].
type Drafter interface {
	Draft(ctx context.Context, g Group) (Proposal, error)
}

// Chat asks a model for an answer in a JSON Schema and returns its JSON
// (propose.OpenAI.Complete, the model already used for manifest
// proposals).
type Chat func(ctx context.Context, system, user, schemaName string, schema map[string]any) ([]byte, error)

// ChatLookups is [Chat] where the model may first call lookups
// (propose.OpenAI.CompleteWithLookups: bounded rounds of function calls
// answered by call).
type ChatLookups func(ctx context.Context, system, user, schemaName string, schema map[string]any, lookups []propose.Lookup, call propose.LookupFunc) ([]byte, error)

// LLM drafts with a model behind an OpenAI-compatible API.
type LLM struct {
	Chat Chat
	// Lookups, when set, is used instead of Chat: the model may read a
	// tool's schema or list another provider's tools (from Group.Tools,
	// nothing called) before it answers.
	Lookups ChatLookups
	// Name is the drafter's name proposals carry ("llm:<model>").
	Name string
}

// ErrDraft means the model's answer is not a usable draft.
var ErrDraft = errors.New("unusable draft")

// Bounds of what is sent to and read from the model.
const (
	maxSchemaPrompt = 8 << 10
	maxAnswerBytes  = 256 << 10
	maxArguments    = 64
)

const llmSystem = `You map tools of several providers' MCP servers onto one provider-neutral executor of skillgate.
An executor is what an agent calls; each provider's tool becomes a backend whose arguments are computed from the executor's canonical arguments by CEL expressions.
Rules:
- The executor's arguments are lowercase snake_case names, provider-neutral (never owner/repo/project_id: a repository is one string "owner/name"); never an argument named provider.
- Write the executor's inputSchema as a JSON Schema object (type object, properties, required, additionalProperties false), serialised as a string in inputSchemaJSON.
- For every backend, map every argument its tool requires, and optional ones where the executor has them: name is the tool's argument, expression is CEL over args: args.NAME, args.?NAME (optional: left out when absent), has(args.NAME), string functions such as args.repository.split("/")[0].
- Use only the providers, skills, servers and tools given. Do not invent tools.
- The description says in one sentence what the executor does, without naming a provider.`

// llmAnswer is the model's answer.
type llmAnswer struct {
	Description     string `json:"description"`
	InputSchemaJSON string `json:"inputSchemaJSON"`
	Backends        []struct {
		Provider  string `json:"provider"`
		Skill     string `json:"skill"`
		Server    string `json:"server"`
		Tool      string `json:"tool"`
		Arguments []struct {
			Name       string `json:"name"`
			Expression string `json:"expression"`
		} `json:"arguments"`
	} `json:"backends"`
}

func llmSchema() map[string]any {
	str := map[string]any{"type": "string"}
	arg := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"name", "expression"},
		"properties": map[string]any{"name": str, "expression": str}}
	backend := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"provider", "skill", "server", "tool", "arguments"},
		"properties": map[string]any{"provider": str, "skill": str, "server": str, "tool": str, "arguments": map[string]any{"type": "array", "items": arg}}}
	return map[string]any{"type": "object", "additionalProperties": false, "required": []string{"description", "inputSchemaJSON", "backends"},
		"properties": map[string]any{"description": str, "inputSchemaJSON": str, "backends": map[string]any{"type": "array", "items": backend}}}
}

// Draft implements [Drafter]: one question to the model with the
// executor (its catalog definition when it has one) and each provider's
// tool with its input schema. For a catalog executor the model's
// description and schema are ignored.
func (l LLM) Draft(ctx context.Context, g Group) (Proposal, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Executor: %s\n", g.Executor)
	if g.Known != nil {
		fmt.Fprintf(&b, "It is in the catalog; keep its description and inputSchema exactly:\ndescription: %s\ninputSchema: %s\n", g.Known.Description, g.Known.InputSchema)
	} else {
		b.WriteString("It is new: write its description and inputSchema.\n")
	}
	b.WriteString("\nTools, one backend each:\n")
	for _, o := range g.Offers {
		schema := string(o.Tool.InputSchema)
		if len(schema) > maxSchemaPrompt {
			schema = schema[:maxSchemaPrompt] + "…"
		}
		fmt.Fprintf(&b, "- provider %s, skill %s, server %s, tool %s: %s\n  inputSchema: %s\n", o.Provider, o.Skill, o.Server, o.Tool.CapabilityID,
			oneLine(o.Tool.Description), schema)
	}
	var data []byte
	var err error
	if l.Lookups != nil {
		b.WriteString("\nBefore answering you may call read_tool_schema (any tool of the skills listed by list_provider_tools) and list_provider_tools (a provider's tools).\n")
		data, err = l.Lookups(ctx, llmSystem, b.String(), "promote_provider_mapping", llmSchema(), draftLookups(),
			func(_ context.Context, name string, args json.RawMessage) (string, error) {
				return lookup(g.Tools, name, args)
			})
	} else {
		data, err = l.Chat(ctx, llmSystem, b.String(), "promote_provider_mapping", llmSchema())
	}
	if err != nil {
		return Proposal{}, err
	}
	if len(data) > maxAnswerBytes {
		return Proposal{}, fmt.Errorf("%w: the answer is %d bytes, limit %d", ErrDraft, len(data), maxAnswerBytes)
	}
	var a llmAnswer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return Proposal{}, fmt.Errorf("%w: %v", ErrDraft, err)
	}
	p := Proposal{Serving: g.Serving, Drafter: l.Name}
	if g.Known != nil {
		p.Executor = *g.Known
	} else {
		if !json.Valid([]byte(a.InputSchemaJSON)) {
			return Proposal{}, fmt.Errorf("%w: inputSchemaJSON is not JSON", ErrDraft)
		}
		p.Executor = executor.ExecutorDecl{Name: g.Executor, Description: a.Description, InputSchema: json.RawMessage(a.InputSchemaJSON)}
		p.New = true
	}
	for _, o := range g.Offers {
		p.Evidence = append(p.Evidence, evidence(o.Skill, o.Provider, o.Server, o.Tool.CapabilityID))
	}
	for _, x := range a.Backends {
		if len(x.Arguments) > maxArguments {
			return Proposal{}, fmt.Errorf("%w: backend %s/%s maps %d arguments, limit %d", ErrDraft, x.Server, x.Tool, len(x.Arguments), maxArguments)
		}
		args := map[string]string{}
		for _, m := range x.Arguments {
			args[m.Name] = m.Expression
		}
		p.Backends = append(p.Backends, Backend{Provider: x.Provider, Skill: x.Skill, Server: x.Server, Tool: x.Tool, Arguments: args})
	}
	return p, nil
}

// oneLine folds text into one line of at most 300 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
