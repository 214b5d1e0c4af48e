package server_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/store/postgres"
	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
)

// TestSharedTokens: a token added through one connection to a PostgreSQL
// store is accepted by a verifier on another once it reloads (as a
// replica does on the store's notification), and stops being accepted
// once removed; Verify reads the store only for a secret it does not
// know, and then a token added a moment before, even right after another
// unknown secret's read, is found.
func TestSharedTokens(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	open := func() *postgres.DB {
		db, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	cli, replica := server.SharedTokens(open()), server.SharedTokens(open())
	v, err := server.OpenTokenSet(ctx, replica)
	if err != nil {
		t.Fatal(err)
	}
	if v.Path() != "shared tokens.json" || v.Len() != 0 {
		t.Fatalf("empty set: %s, %d tokens", v.Path(), v.Len())
	}
	p := capability.Principal{Tenant: "acme", Agent: "drafter", Tier: skill.T3}
	secret, tok, err := cli.Add(ctx, p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		change func() error
		moved  bool
		ok     bool
	}{
		{"added elsewhere", func() error { return nil }, true, true},
		{"nothing changed", func() error { return nil }, false, true},
		{"removed elsewhere", func() error { return cli.Remove(ctx, tok.ID) }, true, false},
	}
	for _, st := range steps {
		if err := st.change(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		moved, err := v.Reload(ctx)
		if moved != st.moved || err != nil {
			t.Errorf("%s: Reload = %v %v, want %v", st.name, moved, err, st.moved)
		}
		got, ok, err := v.Verify(secret)
		if ok != st.ok || err != nil || ok && got.Principal() != p {
			t.Errorf("%s: Verify = %+v %v %v, want ok %v", st.name, got, ok, err, st.ok)
		}
	}
	// A token added a moment ago elsewhere works at its first request,
	// before any reload, even just after unknown secrets made the
	// verifier read the set (the reads for unknown secrets are spaced, not
	// skipped).
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok, err := v.Verify("sgt_unknown"); ok || err != nil {
				t.Errorf("an unknown secret: Verify = %v %v", ok, err)
			}
		}()
	}
	wg.Wait()
	for i := range 3 {
		fresh, _, err := cli.Add(ctx, p, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := v.Verify(fresh); !ok || err != nil {
			t.Errorf("token %d just added: Verify = %v %v", i, ok, err)
		}
	}
	if err := cli.Remove(ctx, tok.ID); !errors.Is(err, server.ErrTokenNotFound) {
		t.Errorf("removing twice: %v", err)
	}
	if toks, err := replica.List(ctx); err != nil || len(toks) != 3 {
		t.Errorf("List = %v %v", toks, err)
	}
}
