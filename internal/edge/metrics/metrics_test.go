package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/edge/metrics"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
)

func TestMetrics(t *testing.T) {
	m := metrics.New(metrics.Sources{
		Upstreams:   func() (int, int) { return 2, 3 },
		Connections: func() int { return 7 },
	})
	for _, r := range []audit.Record{
		{Action: "capability.invoke", Decision: capability.Allow, LatencyNS: 800_000},
		{Action: "capability.invoke", Decision: capability.Allow, LatencyNS: 90_000},
		{Action: "capability.invoke", Decision: capability.Deny, LatencyNS: 20_000},
		{Action: "capability.invoke", Decision: capability.RequireApproval},
		{Action: "install.approve"},
	} {
		m.Observe(r)
	}
	m.Changed("policies")
	m.Changed("policies")
	m.StoreError()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`skillgate_decisions_total{outcome="allow"} 2`,
		`skillgate_decisions_total{outcome="deny"} 1`,
		`skillgate_decisions_total{outcome="require_approval"} 1`,
		`skillgate_call_duration_seconds_count{outcome="allow"} 2`,
		`skillgate_call_duration_seconds_bucket{outcome="allow",le="0.0001"} 1`,
		`skillgate_cache_invalidations_total{what="policies"} 2`,
		`skillgate_store_errors_total 1`,
		`skillgate_upstream_connections 2`,
		`skillgate_upstream_pool_size 3`,
		`skillgate_agent_connections 7`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want+"\n") && !strings.Contains(string(body), want+" ") {
			t.Errorf("metrics lack %q", want)
		}
	}
}
