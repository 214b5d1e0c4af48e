package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestModernListChanged: a 2026-07-28 client that subscribes to tool list
// changes (subscriptions/listen, which the Go SDK client opens when it has
// a ToolListChangedHandler) hears of a registry change over the stateless
// handler.
func TestModernListChanged(t *testing.T) {
	f := newFixture(t)
	secret := f.token(t, "drafter", skill.T3)
	h := http.Header{"Authorization": {"Bearer " + secret}, server.SessionHeader: {"listen-1"}}
	changed := make(chan struct{}, 4)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: f.url + "/mcp", HTTPClient: &http.Client{Transport: headers{h, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	f.env.WriteFile(t, "notas/acta/SKILL.md", "---\nname: acta\ndescription: Drafts minutes.\nmetadata:\n  tier: \"1\"\n---\n# Acta\n")
	if _, err := f.env.Gateway.Rescan(context.Background(), f.env.ScanFunc); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed")
	}
}
