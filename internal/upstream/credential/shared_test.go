package credential_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"filippo.io/age"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store/postgres"
	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// openShared opens a credential store kept in the PostgreSQL database dsn,
// with the data directory dir and the identity id.
func openShared(t *testing.T, dsn, dir, id string) (*credential.Store, error) {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return credential.Open(context.Background(), dir, credential.Options{Identity: id, Shared: db})
}

// TestSharedStore: two hosts (two data directories, two connections) on
// one PostgreSQL store with the same key see each other's credentials
// after a reload, lose none of concurrent sets, and leave nothing in their
// data directories; a host with another key is refused, never emptied.
func TestSharedStore(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a, err := openShared(t, dsn, dirA, id.String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := openShared(t, dsn, dirB, id.String())
	if err != nil {
		t.Fatal(err)
	}
	acme := capability.Principal{Tenant: "acme", Agent: "drafter"}
	if err := a.Set(ctx, "GITHUB_TOKEN", credential.Scope{Tenant: "acme"}, "ghp_one"); err != nil {
		t.Fatal(err)
	}
	if moved, err := b.Reload(ctx); !moved || err != nil {
		t.Fatalf("B's reload after A's set: %v %v", moved, err)
	}
	if v, ok := b.Resolve(acme, "GITHUB_TOKEN"); v != "ghp_one" || !ok {
		t.Fatalf("B resolves %q %v", v, ok)
	}
	if moved, err := b.Reload(ctx); moved || err != nil {
		t.Fatalf("a reload with nothing changed: %v %v", moved, err)
	}
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			s := []*credential.Store{a, b}[i%2]
			if err := s.Set(ctx, fmt.Sprintf("TOKEN_%d", i), credential.Scope{Tenant: "acme"}, "v"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	all, err := a.List(ctx)
	if err != nil || len(all) != 11 {
		t.Fatalf("after concurrent sets: %d entries %v, want 11", len(all), err)
	}
	if err := b.Remove(ctx, "NOPE", credential.Scope{Tenant: "acme"}); !errors.Is(err, credential.ErrNotFound) {
		t.Fatalf("remove of an absent entry: %v", err)
	}
	for _, dir := range []string{dirA, dirB} {
		if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
			t.Errorf("%s holds %v; the store is in the database", dir, m)
		}
	}
	// Connections travel in the same shared document.
	work := credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "github", Account: "work"}
	if err := a.PutConnection(ctx, credential.Connection{ConnectionKey: work, Secret: "shared-conn-secret"}); err != nil {
		t.Fatal(err)
	}
	if err := b.MarkConnection(ctx, work, credential.StateExpired, "refresh failed"); err != nil {
		t.Fatal(err)
	}
	if c, err := a.Connection(ctx, work); err != nil || c.State != credential.StateExpired || c.Secret != "shared-conn-secret" || !c.Default {
		t.Fatalf("A reads B's mark: %v %v", c, err)
	}
	if got, err := b.ResolveConnection(acme, "github", ""); err != nil || got.Account != "work" {
		t.Fatalf("B resolves %v %v", got, err)
	}
	other, _ := age.GenerateX25519Identity()
	if _, err := openShared(t, dsn, t.TempDir(), other.String()); !errors.Is(err, credential.ErrUnreadable) {
		t.Fatalf("another key: %v", err)
	}
	again, err := a.List(ctx)
	if err != nil || !reflect.DeepEqual(again, all) {
		t.Fatalf("after the refused open: %v %v", again, err)
	}
}
