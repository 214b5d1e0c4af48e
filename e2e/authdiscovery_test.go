package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestInspectorServeToken: the MCP Inspector CLI, a standard MCP client,
// lists the tools of `skillgate serve` over streamable HTTP with a token
// from `skillgate token add` in its Authorization header, without any OAuth
// flow; without a token the 401 names the protected resource metadata
// (RFC 9728), which says that a bearer token in the header is wanted and
// names no authorization server.
func TestInspectorServeToken(t *testing.T) {
	insp := inspector(t)
	f := newFixture(t)
	secret := f.tokenSecret(t, "drafter", "T3", "acme")
	srv := f.serve(t)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, insp, "--cli", srv.url+"/mcp", "--transport", "http",
		"--header", "Authorization: Bearer "+secret, "--method", "tools/list")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), `"skill_list"`) {
		t.Fatalf("mcp-inspector tools/list with a token: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}

	resp, err := http.Post(srv.url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	metaURL := srv.url + "/.well-known/oauth-protected-resource/mcp"
	if got, want := resp.Header.Get("WWW-Authenticate"), `Bearer realm="skillgate", resource_metadata="`+metaURL+`"`; resp.StatusCode != 401 || got != want {
		t.Fatalf("without a token: %d %q, want 401 %q", resp.StatusCode, got, want)
	}
	resp, err = http.Get(metaURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var md map[string]any
	if err := json.Unmarshal(body, &md); err != nil || resp.StatusCode != 200 {
		t.Fatalf("metadata: %d %s", resp.StatusCode, body)
	}
	if md["resource"] != srv.url+"/mcp" || md["authorization_servers"] != nil {
		t.Errorf("metadata %s", body)
	}
}
