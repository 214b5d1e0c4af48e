package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestDisclosurePromptAndResources: the prompt "skills" and the resource
// skillgate://disclosure give the discovery fragment while nothing is
// loaded and the <skill_content> blocks afterwards; skillgate://session
// names the session and its mounts.
func TestDisclosurePromptAndResources(t *testing.T) {
	e := newEnv(t, storages[0])
	c := e.connect(t, principal("clerk", skill.T4), "disc-1")
	ctx := context.Background()
	prompt := func(args map[string]string) string {
		t.Helper()
		res, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.DisclosurePrompt, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Messages[0].Content.(*mcp.TextContent).Text
	}
	resource := func(uri string) string {
		t.Helper()
		res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		return res.Contents[0].Text
	}
	discovery := "Skills you can load with the load_skill tool: pass a skill's <location> (its category/name). Its instructions are returned and its files appear under /skills/<name>.\n" +
		"<available_skills>\n<skill>\n<name>\narrendamiento\n</name>\n<description>\nDrafts a residential lease (contrato de arrendamiento). Use when a ticket asks for a rental contract.\n</description>\n<location>\ncontratos/arrendamiento\n</location>\n</skill>\n</available_skills>"
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"prompt", prompt(nil), discovery},
		{"resource", resource(mcpserver.DisclosureURI), discovery},
		{"prompt, other category", prompt(map[string]string{"category": "escrituras"}), "No skills are available to you."},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
	if _, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.DisclosurePrompt, Arguments: map[string]string{"budget": "lots"}}); err == nil || !strings.Contains(err.Error(), `budget must be a positive number of characters, got "lots"`) {
		t.Errorf("bad budget: %v", err)
	}

	c.call(t, "load_skill", map[string]any{"skill": "arrendamiento"})
	loaded := "<skill_content name=\"arrendamiento\">\n# Contrato de arrendamiento\n\nUse the LAU 29/1994 structure.\n\n" +
		"Skill directory: /skills/arrendamiento\nRelative paths in this skill are relative to the skill directory.\n<skill_resources>\n</skill_resources>\n</skill_content>"
	if got := prompt(nil); got != loaded {
		t.Errorf("prompt after load = %q\nwant %q", got, loaded)
	}
	var info mcpserver.SessionInfo
	if err := json.Unmarshal([]byte(resource(mcpserver.SessionURI)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Session != "disc-1" || info.Tenant != "acme" || info.Agent != "clerk" || info.Tier != "T4" || len(info.Loaded) != 1 || info.Loaded[0].Mount != "/skills/arrendamiento" {
		t.Errorf("session resource = %+v", info)
	}
}

// failingSource fails every mount, as a broken object store would.
type failingSource struct{}

func (failingSource) Mount(context.Context, string, store.Version) (blob.Store, string, error) {
	return nil, "", errors.New("object store on fire at 10.0.0.7")
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestInternalErrorsHidden: a storage failure reaches the operator's log
// with its cause, and the agent only a fixed message.
func TestInternalErrorsHidden(t *testing.T) {
	fe := mcpservertest.NewEnv(t, examples, failingSource{}, nil)
	var logs syncBuffer
	gw, err := mcpserver.New(mcpserver.Options{Sessions: fe.Manager, Catalog: fe.Registry, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c := (&env{gw: gw}).connect(t, principal("drafter", skill.T3), "")
	got, isErr := c.call(t, "load_skill", map[string]any{"skill": "escrituras/compraventa"})
	if !isErr || got != "Error: internal error; the details are in the skillgate log" {
		t.Errorf("load with a broken store = %q %v", got, isErr)
	}
	if l := logs.String(); !strings.Contains(l, "object store on fire at 10.0.0.7") || !strings.Contains(l, "tool=load_skill") || !strings.Contains(l, "principal=acme/drafter@T3") {
		t.Errorf("log = %s", l)
	}
}
