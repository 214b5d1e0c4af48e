package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeReadyAndMetrics: `skillgate serve` answers GET /v1/ready without
// a token, and GET /metrics to an operator's token with skillgate's
// metrics; an agent's token is refused.
func TestServeReadyAndMetrics(t *testing.T) {
	f := newFixture(t)
	token := func(agent, tier string) string {
		var tok struct {
			Secret string `json:"secret"`
		}
		if err := json.Unmarshal([]byte(f.run(t, "token", "add", "--agent", agent, "--tier", tier, "--tenant", "ops", "--json")), &tok); err != nil {
			t.Fatal(err)
		}
		return tok.Secret
	}
	ops, agent := token("prometheus", "T1"), token("drafter", "T3")
	srv := f.serve(t)
	get := func(path, tok string) (int, string) {
		req, _ := http.NewRequest("GET", srv.url+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := get("/v1/ready", ""); st != 200 || strings.TrimSpace(body) != `{"status":"ready"}` {
		t.Fatalf("ready: %d %s", st, body)
	}
	if st, _ := get("/metrics", agent); st != http.StatusForbidden {
		t.Fatalf("metrics for an agent: %d", st)
	}
	st, body := get("/metrics", ops)
	if st != 200 {
		t.Fatalf("metrics: %d %s", st, body)
	}
	for _, want := range []string{`skillgate_decisions_total{outcome="allow"} 0`, "skillgate_upstream_pool_size 0", "skillgate_agent_connections 0", "process_resident_memory_bytes"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
