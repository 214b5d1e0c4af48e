package broker_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// Tenants and agents of BenchmarkConnections: 256 principals, each
// tenant with its own grant, so its own upstream session.
const (
	benchTenants = 64
	benchAgents  = 4
)

// BenchmarkConnections measures what a tenant's connection costs a call
// to a remote MCP server behind OAuth, against the anchor that does the
// same work the way operators did before connections: the same access
// token kept as the tenant's static secret and sent by a declared
// Authorization: Bearer ${REMOTE_TOKEN} header. Both paths go through a
// broker (scope, schema, policy, audit) and a pool to the same server,
// which introspects every token at the authorization server; the only
// difference is where the token comes from (the connection index and its
// account, in the audit record and the policy's context, or a secret).
//
// 64 tenants of 4 agents each call in a shuffled order (spread traffic,
// every tenant's session in use). "paired" calls the same principal on
// both paths in each round, in alternating order, and reports each path's
// p50 and p99 and the median of the per-round differences; "parallel"
// runs 8 callers at once on one path then the other, in alternating
// blocks, and reports each path's calls per second.
//
// Run it with bench/connections.sh.
func BenchmarkConnections(b *testing.B) {
	ctx := b.Context()
	f := newConnFixture(b)
	var principals []capability.Principal
	for i := range benchTenants {
		tenant := fmt.Sprintf("t%02d", i)
		k := credential.ConnectionKey{Scope: credential.Scope{Tenant: tenant}, Provider: "remote", Account: "work"}
		f.connect(k, "user-"+tenant)
		// The anchor's secret is the very token the connection holds.
		c, err := f.store.Connection(ctx, k)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.store.Set(ctx, "REMOTE_TOKEN", k.Scope, c.OAuth.AccessToken); err != nil {
			b.Fatal(err)
		}
		for a := range benchAgents {
			principals = append(principals, capability.Principal{Tenant: tenant, Agent: fmt.Sprintf("agent%d", a), Tier: "T2"})
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(principals), func(i, j int) { principals[i], principals[j] = principals[j], principals[i] })

	c, err := f.store.Connection(ctx, f.work)
	if err != nil {
		b.Fatal(err)
	}
	viaConn := benchBroker(b, f.store, f.skill)
	viaSecret := benchBroker(b, f.store, remoteSkill(b, mcpclient.ServerDecl{ID: "remote", Transport: capability.TransportHTTP, URL: f.rs.URL,
		Headers: map[string]string{"Authorization": "Bearer ${REMOTE_TOKEN}"}}, c.OAuth.AccessToken))
	paths := []struct {
		name string
		b    *broker.Broker
	}{{"secret", viaSecret}, {"connection", viaConn}}
	callOn := func(br *broker.Broker, p capability.Principal) error {
		res, err := call(br, ctx, gatewayCaller(p), "whoami", json.RawMessage(`{}`))
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("%s: %s", p, textOf(res))
		}
		return nil
	}
	// Every principal's first call on each path, unmeasured: each
	// tenant's session is opened.
	for _, p := range principals {
		for _, path := range paths {
			if err := callOn(path.b, p); err != nil {
				b.Fatal(err)
			}
		}
	}

	b.Run("paired", func(b *testing.B) {
		lat := [2][]time.Duration{}
		var diff []time.Duration
		i := 0
		for b.Loop() {
			p := principals[i%len(principals)]
			var took [2]time.Duration
			for j := range 2 {
				k := (i + j) % 2 // alternate which path goes first
				start := time.Now()
				if err := callOn(paths[k].b, p); err != nil {
					b.Fatal(err)
				}
				took[k] = time.Since(start)
			}
			lat[0], lat[1] = append(lat[0], took[0]), append(lat[1], took[1])
			diff = append(diff, took[1]-took[0])
			i++
		}
		for k, path := range paths {
			slices.Sort(lat[k])
			b.ReportMetric(micros(lat[k][len(lat[k])/2]), path.name+"-p50-µs")
			b.ReportMetric(micros(lat[k][len(lat[k])*99/100]), path.name+"-p99-µs")
		}
		slices.Sort(diff)
		b.ReportMetric(micros(diff[len(diff)/2]), "connection-over-secret-paired-p50-µs")
	})

	b.Run("parallel", func(b *testing.B) {
		const workers, block = 8, 256
		var spent [2]time.Duration
		var calls [2]int
		round := 0
		for b.Loop() {
			for j := range 2 {
				k := (round + j) % 2
				start := time.Now()
				var wg sync.WaitGroup
				errs := make(chan error, workers)
				for w := range workers {
					wg.Go(func() {
						for n := w; n < block; n += workers {
							if err := callOn(paths[k].b, principals[(round*block+n)%len(principals)]); err != nil {
								errs <- err
								return
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
				spent[k] += time.Since(start)
				calls[k] += block
			}
			round++
		}
		for k, path := range paths {
			b.ReportMetric(float64(calls[k])/spent[k].Seconds(), path.name+"-calls/s")
		}
	})
}

// benchBroker is a broker over skill, with a pool whose credentials
// (secrets and connections) come from store, and a policy that permits
// every call; its audit records go to a SQLite file, as a server's do.
func benchBroker(b *testing.B, store *credential.Store, skill broker.Skill) *broker.Broker {
	b.Helper()
	ctx := b.Context()
	eng := policy.New(&policy.Options{})
	if err := eng.Reload(ctx); err != nil {
		b.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{})
	b.Cleanup(func() { w.Close() })
	return connBroker(b, store, skill, broker.Options{Decider: broker.NewPolicyDecider(eng), Audit: w}, mcpclient.PoolOptions{})
}

// micros is d in microseconds.
func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
