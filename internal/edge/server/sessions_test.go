package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestStatelessRequestsStoreNoSession: 20 MCP requests that each start a
// connection and only list (what the MCP Inspector CLI does, one process
// per call; half through the Go SDK, half as raw POSTs without a session)
// leave no stored session; a connection that loads a skill is stored.
func TestStatelessRequestsStoreNoSession(t *testing.T) {
	f := newFixture(t)
	secret := f.token(t, "drafter", skill.T3)
	for range 10 {
		c, err := f.connect(t, secret, "")
		if err != nil {
			t.Fatal(err)
		}
		if text, isErr := c.call(t, "skill_list", map[string]any{}); isErr {
			t.Fatalf("skill_list: %s", text)
		}
		c.cs.Close()
	}
	for i := range 10 {
		req, _ := http.NewRequest(http.MethodPost, f.url+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("raw initialize %d: %d %s", i, resp.StatusCode, body)
		}
	}
	stored := func() []store.Session {
		t.Helper()
		ss, err := f.env.DB.Sessions(context.Background(), store.SessionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	if ss := stored(); len(ss) != 0 {
		t.Fatalf("20 requests that loaded nothing stored %d sessions", len(ss))
	}

	c, err := f.connect(t, secret, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := c.call(t, "load_skill", map[string]any{"skill": "escrituras/compraventa"}); isErr {
		t.Fatalf("load_skill: %s", text)
	}
	if ss := stored(); len(ss) != 1 || ss[0].ID != "kept" || len(ss[0].Skills) != 1 {
		t.Fatalf("after load_skill, stored sessions: %+v; want kept with its skill", ss)
	}
}
