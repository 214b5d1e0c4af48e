// Package metrics exposes what `skillgate serve` does as Prometheus
// metrics: capability decisions by outcome, call latency, upstream
// connections, agent connections, changes that emptied the capability
// path's caches, and store errors. The counters are fed from the audit
// records the capability path writes (every decision has one), so the
// hot path pays one map-free increment per call.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
)

// Sources are the live values the metrics read when scraped; nil fields
// are left out.
type Sources struct {
	// Upstreams counts the pooled upstream connections, alive or not.
	Upstreams func() (alive, total int)
	// Connections counts the agents connected.
	Connections func() int
	// Leader reports whether this process is the leader of the replicas
	// on its store (it does their periodic work); nil leaves the gauge out.
	Leader func() bool
}

// Metrics is one registry of skillgate's metrics.
type Metrics struct {
	reg          *prometheus.Registry
	decisions    *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	changes      *prometheus.CounterVec
	storeErrors  prometheus.Counter
	decisionsBy  map[capability.Effect]prometheus.Counter
	latencyBy    map[capability.Effect]prometheus.Observer
	otherEffects prometheus.Counter
}

// New returns the metrics, reading src when scraped.
func New(src Sources) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skillgate_decisions_total",
		Help: "Capability calls decided, by outcome (allow, deny, require_approval).",
	}, []string{"outcome"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "skillgate_call_duration_seconds",
		Help: "Time from a capability call's arrival to its audit record: the decision for refusals, the upstream's answer for allowed calls.",
		// 50 µs to ~26 s.
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 20),
	}, []string{"outcome"})
	m.changes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skillgate_cache_invalidations_total",
		Help: "Changes applied to the capability path, each emptying its caches, by what changed (registry, policies, credentials, installs).",
	}, []string{"what"})
	m.storeErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "skillgate_store_errors_total",
		Help: "Errors reading or writing the store (readiness checks that failed, audit records not written).",
	})
	m.reg.MustRegister(m.decisions, m.latency, m.changes, m.storeErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.decisionsBy = map[capability.Effect]prometheus.Counter{}
	m.latencyBy = map[capability.Effect]prometheus.Observer{}
	for _, e := range []capability.Effect{capability.Allow, capability.Deny, capability.RequireApproval} {
		m.decisionsBy[e] = m.decisions.WithLabelValues(string(e))
		m.latencyBy[e] = m.latency.WithLabelValues(string(e))
	}
	m.otherEffects = m.decisions.WithLabelValues("other")
	if src.Upstreams != nil {
		for _, g := range []struct {
			alive bool
			help  string
		}{{true, "Pooled upstream MCP server connections that are alive."}, {false, "Pooled upstream MCP server connections, alive or not (one per target and credential set)."}} {
			name := "skillgate_upstream_connections"
			if !g.alive {
				name = "skillgate_upstream_pool_size"
			}
			alive := g.alive
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: g.help}, func() float64 {
				a, t := src.Upstreams()
				if alive {
					return float64(a)
				}
				return float64(t)
			}))
		}
	}
	if src.Connections != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "skillgate_agent_connections", Help: "Agents connected over MCP.",
		}, func() float64 { return float64(src.Connections()) }))
	}
	if src.Leader != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "skillgate_leader", Help: "1 while this process is the leader of the replicas on its store (rescans, audit checkpoints, pruning idle sessions), else 0.",
		}, func() float64 {
			if src.Leader() {
				return 1
			}
			return 0
		}))
	}
	return m
}

// Observe counts an audit record of the capability path: a
// capability.invoke record is one decision, with its latency.
func (m *Metrics) Observe(r audit.Record) {
	if r.Action != "capability.invoke" {
		return
	}
	c, ok := m.decisionsBy[r.Decision]
	if !ok {
		m.otherEffects.Inc()
		return
	}
	c.Inc()
	if r.LatencyNS > 0 {
		m.latencyBy[r.Decision].Observe(time.Duration(r.LatencyNS).Seconds())
	}
}

// Changed counts a change applied to the capability path.
func (m *Metrics) Changed(what string) { m.changes.WithLabelValues(what).Inc() }

// StoreError counts an error of the store.
func (m *Metrics) StoreError() { m.storeErrors.Inc() }

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
