package app

import (
	"context"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
)

// TestReplicasLeadership: two servers on one PostgreSQL store elect one
// leader; a token added through one is accepted by the other within
// seconds (token reload); when the leader stops, the other takes over.
func TestReplicasLeadership(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	type replica struct {
		app    *App
		srv    *Server
		cancel context.CancelFunc
		ran    chan error
	}
	start := func() *replica {
		a := New(Options{Data: t.TempDir(), Store: dsn, Version: "test"})
		t.Cleanup(a.Close)
		rctx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		srv, err := a.OpenServer(rctx, ServeOptions{Addr: "127.0.0.1:0", Storage: &Storage{Kind: "local"}, Limits: server.DefaultLimits()})
		if err != nil {
			t.Fatal(err)
		}
		r := &replica{app: a, srv: srv, cancel: cancel, ran: make(chan error, 1)}
		go func() { r.ran <- srv.Run(rctx) }()
		return r
	}
	stop := func(r *replica) {
		r.cancel()
		select {
		case err := <-r.ran:
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}
	}
	one, two := start(), start()
	if !eventually(10*time.Second, func() bool { return one.srv.Leading() != two.srv.Leading() }) {
		t.Fatalf("no single leader: %v and %v", one.srv.Leading(), two.srv.Leading())
	}
	// Never both for a while.
	for range 20 {
		if one.srv.Leading() && two.srv.Leading() {
			t.Fatal("two leaders")
		}
		time.Sleep(50 * time.Millisecond)
	}

	ts, err := one.app.TokenSet(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ts.Add(ctx, capability.Principal{Tenant: "acme", Agent: "ops", Tier: skill.T1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { n, _ := two.srv.Tokens(); return n == 1 }) {
		t.Error("the other replica did not reload the token added through the first")
	}

	leader, follower := one, two
	if two.srv.Leading() {
		leader, follower = two, one
	}
	stop(leader)
	if !eventually(10*time.Second, follower.srv.Leading) {
		t.Error("the follower did not take over when the leader stopped")
	}
	stop(follower)
}
