package e2e

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestServeReadyAndMetrics: `skillgate serve` answers GET /v1/ready without
// a token, and GET /metrics to an operator's token with skillgate's
// metrics; an agent's token is refused.
func TestServeReadyAndMetrics(t *testing.T) {
	f := newFixture(t)
	ops, agent := f.tokenSecret(t, "prometheus", "T1", "ops"), f.tokenSecret(t, "drafter", "T3", "ops")
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

// TestServeReadyChecksBucket: with --skills-store s3, /v1/ready answers
// 503 naming the bucket while the bucket does not answer, and /v1/health
// still 200.
func TestServeReadyChecksBucket(t *testing.T) {
	f := newFixture(t)
	// A loopback port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	srv := startServeEnv(t, []string{"--data", f.data, "serve", "--addr", "127.0.0.1:0", "--skills-store", "s3", "--s3-endpoint", dead, "--s3-bucket", "gone"},
		[]string{"SKILLGATE_S3_ACCESS_KEY=k", "SKILLGATE_S3_SECRET_KEY=s"}, func(line string) { t.Log("skillgate serve: " + line) })
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/v1/health", 200, `"status":"ok"`},
		{"/v1/ready", http.StatusServiceUnavailable, `bucket: `},
	} {
		resp, err := http.Get(srv.url + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.path, resp.StatusCode, b, tc.status, tc.want)
		}
	}
}
