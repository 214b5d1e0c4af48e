package promote_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/admission/propose"
)

// chatRequest is what the test model reads of a request.
type chatRequest struct {
	Tools []struct {
		Function struct{ Name string } `json:"function"`
	} `json:"tools"`
	ToolChoice string `json:"tool_choice"`
	Messages   []struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolCallID string  `json:"tool_call_id"`
	} `json:"messages"`
}

// fakeModel serves the OpenAI chat API on loopback, answering the n-th
// request with answer(n, request).
func fakeModel(t *testing.T, answer func(n int, r chatRequest) string) (*propose.OpenAI, *[]chatRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen []chatRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req chatRequest
		if err := json.Unmarshal(b, &req); err != nil {
			t.Errorf("request: %v", err)
		}
		mu.Lock()
		seen = append(seen, req)
		n := len(seen)
		mu.Unlock()
		io.WriteString(w, answer(n, req))
	}))
	t.Cleanup(srv.Close)
	llm, err := propose.NewOpenAI(propose.OpenAIConfig{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return llm, &seen
}

func toolCalls(calls ...[3]string) string {
	var cs []map[string]any
	for _, c := range calls {
		cs = append(cs, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
	}
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"finish_reason": "tool_calls",
		"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": cs}}}})
	return string(b)
}

func final(content string) string {
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}}})
	return string(b)
}

// withHeld is branchGroup with every tool of the two skills held for
// lookups.
func withHeld(t *testing.T) promote.Group {
	_, g := branchGroup(t)
	for _, s := range skills(t) {
		for _, tl := range s.Tools {
			prov := "github"
			if s.Key == "vcs/gl" {
				prov = "gitlab"
			}
			g.Tools = append(g.Tools, promote.Offer{Provider: prov, Skill: s.Key, Server: tl.ExtensionID, Tool: tl})
		}
	}
	return g
}

// TestLLMDraftLooksUp: the model reads a tool's schema and lists a
// provider's tools before it answers; the lookups answer from the tools
// detection holds, and the answer is validated as any draft.
func TestLLMDraftLooksUp(t *testing.T) {
	cat, _ := branchGroup(t)
	g := withHeld(t)
	answer := `{"description":"Create a branch in a repository.",` +
		`"inputSchemaJSON":"{\"type\":\"object\",\"properties\":{\"repository\":{\"type\":\"string\"},\"branch\":{\"type\":\"string\"},\"from\":{\"type\":\"string\"}},\"required\":[\"repository\",\"branch\"],\"additionalProperties\":false}",` +
		`"backends":[` +
		`{"provider":"github","skill":"vcs/gh","server":"gh","tool":"create_branch","arguments":[{"name":"owner","expression":"args.repository.split(\"/\")[0]"},{"name":"repo","expression":"args.repository.split(\"/\")[1]"},{"name":"branch","expression":"args.branch"},{"name":"from_branch","expression":"args.?from"}]},` +
		`{"provider":"gitlab","skill":"vcs/gl","server":"gl","tool":"create_branch","arguments":[{"name":"project_id","expression":"args.repository"},{"name":"branch","expression":"args.branch"},{"name":"ref","expression":"args.?from"}]}]}`
	llm, seen := fakeModel(t, func(n int, r chatRequest) string {
		if n == 1 {
			return toolCalls([3]string{"c1", "read_tool_schema", `{"skill":"vcs/gl","server":"gl","tool":"create_branch"}`},
				[3]string{"c2", "list_provider_tools", `{"provider":"gitlab"}`},
				[3]string{"c3", "read_tool_schema", `{"skill":"vcs/gl","server":"gl","tool":"delete_everything"}`})
		}
		return final(answer)
	})
	p, err := promote.LLM{Chat: llm.Complete, Lookups: llm.CompleteWithLookups, Name: llm.Name()}.Draft(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 2 {
		t.Fatalf("%d requests, want 2", len(*seen))
	}
	var fns []string
	for _, f := range (*seen)[0].Tools {
		fns = append(fns, f.Function.Name)
	}
	if !reflect.DeepEqual(fns, []string{"read_tool_schema", "list_provider_tools"}) {
		t.Errorf("functions offered: %v", fns)
	}
	answers := map[string]string{}
	for _, m := range (*seen)[1].Messages {
		if m.Role == "tool" && m.Content != nil {
			answers[m.ToolCallID] = *m.Content
		}
	}
	if !strings.Contains(answers["c1"], `"project_id":{"type":"string","description":"Project ID or URL-encoded path"}`) ||
		!strings.Contains(answers["c2"], "skill vcs/gl, server gl, tool create_merge_request: Create a new merge request in a GitLab project") || strings.Contains(answers["c2"], "vcs/gh") ||
		answers["c3"] != "error: skill vcs/gl offers no tool gl/delete_everything" {
		t.Errorf("lookup answers: %q", answers)
	}
	v, err := promote.Validate(cat, p, skills(t), promote.Serving{})
	if err != nil || len(v.Backends) != 2 || v.Drafter != "llm:m" {
		t.Fatalf("validated: %+v %v", v, err)
	}
}

// TestLLMDraftLookupBound: a model that keeps calling gets the last
// request with calls refused (tool_choice none), then the draft fails.
func TestLLMDraftLookupBound(t *testing.T) {
	g := withHeld(t)
	llm, seen := fakeModel(t, func(int, chatRequest) string {
		return toolCalls([3]string{"c", "list_provider_tools", `{"provider":"github"}`})
	})
	_, err := promote.LLM{Chat: llm.Complete, Lookups: llm.CompleteWithLookups, Name: llm.Name()}.Draft(context.Background(), g)
	if !errors.Is(err, propose.ErrLookup) || err.Error() != "lookup failed: the model still called functions after 4 rounds, when calls were refused" {
		t.Fatalf("err %v", err)
	}
	if n := len(*seen); n != propose.MaxLookupRounds+1 || (*seen)[n-1].ToolChoice != "none" || (*seen)[n-2].ToolChoice != "" {
		t.Errorf("%d requests, the last tool_choice %q", n, (*seen)[n-1].ToolChoice)
	}
}
