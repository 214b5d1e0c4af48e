package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// BenchmarkCall compares a call through the broker (scope lookup, schema
// validation, policy decision, audit record, pooled upstream) with the same
// call on the pooled connection directly; the difference is what the
// broker adds, without the agent's MCP hop.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	sk := skillFor(b, "tools/alpha")
	sk.Tier, sk.InvokableBy = 2, []string{"T0", "T1", "T2", "T3"}
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits()})
	defer pool.Close()
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{})
	defer w.Close()
	eng := policy.New(&policy.Options{})
	if err := eng.Reload(ctx); err != nil {
		b.Fatal(err)
	}
	br, err := broker.New(broker.Options{
		Load:    func(context.Context) ([]broker.Skill, error) { return []broker.Skill{sk}, nil },
		Decider: broker.NewPolicyDecider(eng), Upstream: pool, Audit: w,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := br.Reload(ctx); err != nil {
		b.Fatal(err)
	}
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"}
	var target mcpclient.Target
	for _, c := range br.Capabilities() {
		if c.Capability.CapabilityID == "echo" {
			target = c.Target()
		}
	}
	args := json.RawMessage(`{"text":"hi"}`)
	run := func(b *testing.B, call func() error) {
		for range 20 {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for b.Loop() {
			start := time.Now()
			if err := call(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
	}
	wait := make(chan error, 1)
	b.Run("pool", func(b *testing.B) {
		run(b, func() error {
			pool.Call(ctx, p, target, "echo", args, func(_ json.RawMessage, err error) { wait <- err })
			return <-wait
		})
	})
	b.Run("broker", func(b *testing.B) {
		run(b, func() error {
			br.Call(ctx, gatewayCaller(p), "echo", args, func(res json.RawMessage) {
				if bytes.Contains(res, []byte(`"isError":true`)) {
					wait <- fmt.Errorf("refused: %s", res)
					return
				}
				wait <- nil
			})
			return <-wait
		})
	})
}
