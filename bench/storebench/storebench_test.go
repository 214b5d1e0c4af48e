// Package storebench compares a cached policy decision with the engine's
// store on SQLite and on PostgreSQL (bench/store.sh runs it): the
// decision's hot path must not touch the store, so both take the same
// time, and the store calls per decision (store-calls/op) are 0.
package storebench

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/postgres"
	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// counting is a store that counts the calls the policy engine makes.
type counting struct {
	store.DB
	calls atomic.Int64
}

func (c *counting) Policies(ctx context.Context) ([]store.StoredPolicy, error) {
	c.calls.Add(1)
	return c.DB.Policies(ctx)
}

func (c *counting) Grants(ctx context.Context) ([]store.Grant, error) {
	c.calls.Add(1)
	return c.DB.Grants(ctx)
}

func (c *counting) UseGrant(ctx context.Context, id string, at time.Time) (store.Grant, error) {
	c.calls.Add(1)
	return c.DB.UseGrant(ctx, id, at)
}

func (c *counting) ReleaseGrant(ctx context.Context, id string) error {
	c.calls.Add(1)
	return c.DB.ReleaseGrant(ctx, id)
}

func (c *counting) Installs(ctx context.Context, f store.InstallFilter) ([]store.Install, error) {
	c.calls.Add(1)
	return c.DB.Installs(ctx, f)
}

func (c *counting) TakeTokens(ctx context.Context, key string, perSecond float64, burst, want int, now time.Time) (int, float64, error) {
	c.calls.Add(1)
	return c.DB.TakeTokens(ctx, key, perSecond, burst, want, now)
}

// stores opens the stores to compare: SQLite always, PostgreSQL when
// SKILLGATE_TEST_POSTGRES names a server.
func stores(b *testing.B) map[string]func(b *testing.B) store.DB {
	return map[string]func(b *testing.B) store.DB{
		"sqlite": func(b *testing.B) store.DB {
			db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "skillgate.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return db
		},
		"postgres": func(b *testing.B) store.DB {
			db, err := postgres.Open(context.Background(), pgtest.NewDatabase(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return db
		},
	}
}

// BenchmarkCachedDecision is one hot request (an agent calling a read
// tool with the same arguments, allowed by a stored policy with a typed
// argument constraint) decided again and again by an engine whose store
// is SQLite or PostgreSQL.
func BenchmarkCachedDecision(b *testing.B) {
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			db := &counting{DB: stores(b)[name](b)}
			if err := db.PutPolicy(ctx, store.StoredPolicy{ID: "t3-read", Text: `permit (principal is Agent, action == Action::"invoke", resource) when { principal.tier == "T3" && resource.riskLevel == "read" };`}); err != nil {
				b.Fatal(err)
			}
			e := policy.New(&policy.Options{Store: db, Buckets: db})
			caps := []policy.Capability{{SkillKey: "tools/gh", SkillTrust: policy.TrustImported, SkillTier: 1, InvokableBy: skill.AllAgentTiers,
				SkillState: policy.SkillEnabled, ExtensionID: "gh", CapabilityID: "search_issues", Enabled: true,
				RiskLevel: capability.RiskRead, SideEffects: capability.SideEffectsNone, DataEgress: capability.EgressNone}}
			if err := e.SetCapabilities(caps); err != nil {
				b.Fatal(err)
			}
			if err := e.Reload(ctx); err != nil {
				b.Fatal(err)
			}
			p := capability.Principal{Tenant: "acme", Agent: "drafter", Tier: "T3"}
			ref := capability.Ref{Skill: "tools/gh", ExtensionID: "gh", CapabilityID: "search_issues"}
			var args map[string]any
			if err := json.Unmarshal([]byte(`{"q":"is:open","limit":10}`), &args); err != nil {
				b.Fatal(err)
			}
			if d := e.Evaluate(ctx, p, ref, args); d.Effect != capability.Allow {
				b.Fatalf("%+v", d)
			}
			before := db.calls.Load()
			samples := make([]time.Duration, 0, 1<<16)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				d := e.Evaluate(ctx, p, ref, args)
				if len(samples) < cap(samples) {
					samples = append(samples, time.Since(t0))
				}
				if d.Effect != capability.Allow {
					b.Fatal(d)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(db.calls.Load()-before)/float64(b.N), "store-calls/op")
			slices.Sort(samples)
			if len(samples) > 0 {
				b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds()), "p99-ns")
			}
		})
	}
}
