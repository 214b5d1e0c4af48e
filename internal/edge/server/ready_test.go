package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestReadyAndMetrics: /v1/ready says why it is not ready (503) and needs
// no token; /metrics needs a token of tier T0 or T1.
func TestReadyAndMetrics(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, nil, nil)
	path := filepath.Join(t.TempDir(), server.TokensFile)
	tokens, err := server.OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	down := true
	srv, err := server.New(server.Options{Gateway: env.Gateway, Tokens: tokens, Ready: func(context.Context) error {
		if down {
			return errors.New("store: database is locked")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv.MountMetrics(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "skillgate_decisions_total 0\n") }))
	ts := httptest.NewServer(srv)
	defer ts.Close()
	tok := func(tier skill.AgentTier) string {
		s, _, err := server.AddToken(path, capability.Principal{Tenant: "ops", Agent: "m-" + string(tier), Tier: tier}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	get := func(p, token string) (int, string) {
		req, _ := http.NewRequest("GET", ts.URL+p, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	if st, body := get("/v1/ready", ""); st != 503 || body != `{"error":"store: database is locked","status":"not ready"}` {
		t.Fatalf("not ready: %d %s", st, body)
	}
	down = false
	if st, body := get("/v1/ready", ""); st != 200 || body != `{"status":"ready"}` {
		t.Fatalf("ready: %d %s", st, body)
	}
	if st, _ := get("/metrics", ""); st != 401 {
		t.Fatalf("metrics without a token: %d", st)
	}
	if st, body := get("/metrics", tok(skill.T3)); st != 403 || !strings.Contains(body, "forbidden: this needs a token of agent tier T0 or T1; this token is ops/m-T3@T3 (GET /metrics)") {
		t.Fatalf("metrics as T3: %d %s", st, body)
	}
	if st, body := get("/metrics", tok(skill.T1)); st != 200 || body != "skillgate_decisions_total 0" {
		t.Fatalf("metrics as T1: %d %s", st, body)
	}
}
