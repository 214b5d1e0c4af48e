package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestHTTPHostileURIAnswered: over streamable HTTP, a resources/read of a
// URI with a control character is answered with a JSON-RPC error whose data
// is JSON, and the MCP session goes on answering (it used to go silent: the
// SDK could not encode its own not-found error).
func TestHTTPHostileURIAnswered(t *testing.T) {
	f := newFixture(t)
	c, err := f.connect(t, f.token(t, "drafter", skill.T3), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"skill://pub/alpha/\x00x", "skill://pub/alpha/\x1b]0;t\x07"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		cancel()
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			t.Fatalf("resources/read %q: %v, want a JSON-RPC error", uri, err)
		}
		var data struct {
			URI string `json:"uri"`
		}
		if werr.Code != mcp.CodeResourceNotFound || werr.Message != "Resource not found" || json.Unmarshal(werr.Data, &data) != nil || data.URI != uri {
			t.Errorf("resources/read %q: code %d message %q data %s", uri, werr.Code, werr.Message, werr.Data)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		err = c.cs.Ping(ctx, nil)
		cancel()
		if err != nil {
			t.Fatalf("after resources/read %q the session does not answer: %v", uri, err)
		}
	}
	if text, isErr := c.call(t, "skill_list", map[string]any{}); isErr {
		t.Fatalf("skill_list after hostile reads: %s", text)
	}
}
