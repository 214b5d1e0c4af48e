package connection_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/skillgate/skillgate/internal/storage/store/postgres"
	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
	"github.com/skillgate/skillgate/internal/testkit/remotemcp"
	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// TestReplicasRefreshOnce: two replicas share one credential store in
// PostgreSQL and both decide at once to refresh a grant (each read it due,
// with the same access token); the authorization server sees one refresh,
// and both replicas then send the one new access token, which the MCP
// server accepts.
func TestReplicasRefreshOnce(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := t.Context()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	as := oauthserver.New(t, &oauthserver.Options{AccessTokenLifetime: time.Hour, Scopes: []string{"tools"}})
	rs := remotemcp.New(t, &remotemcp.Options{AuthServer: as, Scopes: []string{"tools"}, RequireScopes: true})
	replica := func() *credential.Store {
		db, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		st, err := credential.Open(ctx, t.TempDir(), credential.Options{Identity: id.String(), Shared: db})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := replica(), replica()
	client := func() *oauth.Client {
		return oauth.New(&oauth.Options{AllowPrivateNetworks: true, AllowInsecureHTTP: true, Timeout: 5 * time.Second})
	}
	conn := connection.NewConnector(client(), a, nil)
	st, err := conn.Start(ctx, connection.ConnectRequest{Key: work, ServerURL: rs.URL, RedirectURI: redirect})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := as.Authorize(ctx, http.DefaultClient, st.URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Complete(ctx, cb.Query()); err != nil {
		t.Fatal(err)
	}
	first, err := b.Connection(ctx, work)
	if err != nil {
		t.Fatal(err)
	}
	// Both clocks stand a minute before the expiry: inside the lead. Each
	// replica reads the grant, finds it due and refreshes the token it
	// read, both at once.
	due := func() time.Time { return first.OAuth.Expiry.Add(-time.Minute) }
	before := as.Stats().RefreshGrants
	var wg sync.WaitGroup
	counts := make([]int, 2)
	errs := make([]error, 2)
	refreshers := make([]*connection.Refresher, 2)
	read := make([]string, 2)
	for i, s := range []*credential.Store{a, b} {
		refreshers[i] = connection.New(s, client(), &connection.Options{Now: due, Jitter: -1})
		cur, err := s.Connection(ctx, work)
		if err != nil || !refreshers[i].Due(cur.Info(), due()) || cur.OAuth.AccessToken != first.OAuth.AccessToken {
			t.Fatalf("replica %d reads %v (%v): want the first grant, due", i, cur, err)
		}
		read[i] = cur.OAuth.AccessToken
	}
	for i, r := range refreshers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var refreshed bool
			refreshed, errs[i] = r.Refresh(context.WithoutCancel(ctx), work, read[i])
			if refreshed {
				counts[i] = 1
			}
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("refresh errors: %v, %v", errs[0], errs[1])
	}
	if n := as.Stats().RefreshGrants - before; n != 1 || counts[0]+counts[1] != 1 {
		t.Fatalf("the server saw %d refreshes; the replicas report %v: want one", n, counts)
	}
	var tokens []string
	for _, s := range []*credential.Store{a, b} {
		c, err := s.Connection(ctx, work)
		if err != nil {
			t.Fatal(err)
		}
		if c.OAuth.AccessToken == first.OAuth.AccessToken || c.Refreshed.IsZero() {
			t.Fatalf("a replica still holds the first grant: %v", c)
		}
		tokens = append(tokens, c.OAuth.AccessToken)
	}
	if tokens[0] != tokens[1] {
		t.Fatal("the replicas hold different access tokens")
	}
	if w, err := whoami(ctx, rs.URL, tokens[0]); err != nil || w.Subject != "alice" {
		t.Fatalf("the refreshed token: %+v %v", w, err)
	}
}
