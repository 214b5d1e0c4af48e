package connection_test

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// TestConnector: a connection made through Start and Complete is stored
// active with the grant bound to the server, and reaches the server; the
// callback works once; a forged, denied or stale callback stores nothing.
func TestConnector(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, time.Hour)
	now := time.Now()
	clock := func() time.Time { return now }
	c := connection.NewConnector(e.client, e.store, &connection.ConnectorOptions{TTL: time.Minute, Now: clock, Logger: e.log})

	st, err := c.Start(ctx, connection.ConnectRequest{Key: work, ServerURL: e.rs.URL, RedirectURI: redirect})
	if err != nil {
		t.Fatal(err)
	}
	if st.Key != work || !st.Expires.Equal(now.Add(time.Minute)) || c.Pending() != 1 {
		t.Fatalf("started %+v, %d pending", st, c.Pending())
	}
	cb, err := e.as.Authorize(ctx, http.DefaultClient, st.URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	forged := url.Values{"state": {"forged"}, "code": {"x"}}
	if _, err := c.Complete(ctx, forged); !errors.Is(err, connection.ErrUnknownFlow) {
		t.Fatalf("forged callback: %v", err)
	}
	info, err := c.Complete(ctx, cb.Query())
	if err != nil {
		t.Fatal(err)
	}
	if info.ConnectionKey != work || info.Kind != credential.KindOAuth || info.State != credential.StateActive || !info.Refreshable || !info.Default {
		t.Fatalf("info %+v", info)
	}
	if _, err := c.Complete(ctx, cb.Query()); !errors.Is(err, connection.ErrUnknownFlow) {
		t.Fatalf("second use of a callback: %v", err)
	}
	got := e.grant(t, work)
	if got.OAuth.Resource != e.rs.URL || !got.Default {
		t.Fatalf("stored %v resource %q default %v", got, got.OAuth.Resource, got.Default)
	}
	w, err := whoami(ctx, e.rs.URL, got.OAuth.AccessToken)
	if err != nil || w.Subject != "alice" {
		t.Fatalf("whoami %+v %v", w, err)
	}

	// Denied at the consent page: the error names the server's answer.
	other := work
	other.Account = "other"
	st, err = c.Start(ctx, connection.ConnectRequest{Key: other, ServerURL: e.rs.URL, RedirectURI: redirect})
	if err != nil {
		t.Fatal(err)
	}
	deny := url.Values{"state": {stateOf(t, st.URL)}, "error": {"access_denied"}}
	if _, err := c.Complete(ctx, deny); !errors.Is(err, oauth.ErrAuthorization) {
		t.Fatalf("denied: %v", err)
	}
	// Stale: past the TTL the callback is unknown.
	st, err = c.Start(ctx, connection.ConnectRequest{Key: other, ServerURL: e.rs.URL, RedirectURI: redirect})
	if err != nil {
		t.Fatal(err)
	}
	cb, err = e.as.Authorize(ctx, http.DefaultClient, st.URL, "bob")
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := c.Complete(ctx, cb.Query()); !errors.Is(err, connection.ErrUnknownFlow) {
		t.Fatalf("stale: %v", err)
	}
	if _, err := e.store.Connection(ctx, other); !errors.Is(err, credential.ErrNoConnection) {
		t.Fatalf("a failed flow stored a connection: %v", err)
	}
	e.noSecret(t, "", *got.OAuth)
}

func stateOf(t *testing.T, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("state")
}
