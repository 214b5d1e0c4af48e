package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/postgres"
	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
)

// listen starts db.Listen and returns the payloads it delivers.
func listen(t *testing.T, db *postgres.DB) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		db.Listen(ctx, func(what string) { got <- what }, nil)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return got
}

// next returns the next payload, failing after 5 s.
func next(t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case w := <-got:
		return w
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5 s")
		return ""
	}
}

// TestListen: each change replicas cache announces what it changed, once
// committed, to a listener on another connection; a grant's use does not.
func TestListen(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	a, b := open(t, dsn), open(t, dsn)
	got := listen(t, b)
	// The listener connects in the background: wait until it hears.
	deadline := time.Now().Add(5 * time.Second)
	for ready := false; !ready; {
		if err := a.Notify(ctx, "hello"); err != nil {
			t.Fatal(err)
		}
		select {
		case w := <-got:
			ready = w == "hello"
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("listener never heard")
		}
	}
	for len(got) > 0 {
		<-got
	}
	g := store.Grant{ID: "g1", Principal: "acme/*", Capability: "*", Level: "write", Uses: 1, CreatedAt: time.Now()}
	tests := []struct {
		name   string
		change func() error
		want   string
	}{
		{"stored policy", func() error {
			return a.PutPolicy(ctx, store.StoredPolicy{ID: "p1", Text: "permit (principal, action, resource);"})
		}, "policies"},
		{"policy removed", func() error { return a.DeletePolicy(ctx, "p1") }, "policies"},
		{"scan", func() error {
			v := store.Version{Key: "a", Name: "a", Dir: "/r/a", Rel: "a", File: "/r/a/SKILL.md", Digest: "sha256:1", Fingerprint: "f1", Valid: true, InvokableBy: []string{"T0"}}
			return a.ApplyScans(ctx, []store.RootScan{{Root: "/r", Scope: "project", Upserts: []store.Version{v}}})
		}, "registry"},
		{"disable", func() error { return a.SetEnabled(ctx, "a", false) }, "registry"},
		{"grant", func() error { return a.CreateGrant(ctx, g, grantRecord(), audit.SealStored) }, "grants"},
		{"grant used", func() error { _, err := a.UseGrant(ctx, "g1", time.Now()); return err }, ""},
		{"shared file", func() error {
			_, err := a.UpdateFile(ctx, "tokens.json", func([]byte) ([]byte, error) { return []byte("{}"), nil })
			return err
		}, "file:tokens.json"},
	}
	for _, tt := range tests {
		if err := tt.change(); err != nil && tt.want != "" {
			t.Fatalf("%s: %v", tt.name, err)
		}
		// A marker after each change: what arrives before it is what the
		// change announced.
		if err := a.Notify(ctx, "mark"); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for w := next(t, got); w != "mark"; w = next(t, got) {
			seen = append(seen, w)
		}
		want := []string(nil)
		if tt.want != "" {
			want = []string{tt.want}
		}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("%s: notified %q, want %q", tt.name, seen, want)
		}
	}
}

// grantRecord is the audit record a test grant is created with.
func grantRecord() store.AuditRecord {
	return store.AuditRecord{Time: time.Now(), Actor: "op", Action: "grant.add", Subject: "g1", Decision: "allow"}
}

// TestCampaign: of processes campaigning on one database exactly one
// leads; when it stops (its process dies, or it ends the campaign)
// another takes over within a few seconds.
func TestCampaign(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	type member struct {
		cancel  context.CancelFunc
		done    chan struct{}
		mu      sync.Mutex
		leading bool
	}
	members := make([]*member, 3)
	for i := range members {
		db := open(t, dsn)
		ctx, cancel := context.WithCancel(context.Background())
		m := &member{cancel: cancel, done: make(chan struct{})}
		members[i] = m
		go func() {
			defer close(m.done)
			db.Campaign(ctx, func(l bool) { m.mu.Lock(); m.leading = l; m.mu.Unlock() }, nil)
		}()
		t.Cleanup(func() { cancel(); <-m.done })
	}
	leaders := func() []int {
		var out []int
		for i, m := range members {
			m.mu.Lock()
			if m.leading {
				out = append(out, i)
			}
			m.mu.Unlock()
		}
		return out
	}
	waitOne := func(except int) int {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if l := leaders(); len(l) == 1 && l[0] != except {
				return l[0]
			} else if len(l) > 1 {
				t.Fatalf("leaders %v at once", l)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("no single leader: %v", leaders())
		return -1
	}
	first := waitOne(-1)
	// Stable: still the one leader a while later.
	time.Sleep(1500 * time.Millisecond)
	if l := leaders(); fmt.Sprint(l) != fmt.Sprint([]int{first}) {
		t.Fatalf("leaders %v, want [%d]", l, first)
	}
	members[first].cancel()
	<-members[first].done
	if members[first].leading {
		t.Error("a member that stopped campaigning still leads")
	}
	start := time.Now()
	second := waitOne(first)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took over after %v, want at most about a second", d)
	}
	t.Logf("member %d took over from %d after %v", second, first, time.Since(start))
}

// TestSharedFiles: concurrent updates from several processes lose none,
// a refused change leaves the file as it was, revisions count writes.
func TestSharedFiles(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	dbs := []*postgres.DB{open(t, dsn), open(t, dsn)}
	if b, rev, err := dbs[0].ReadFile(ctx, "f"); b != nil || rev != 0 || err != nil {
		t.Fatalf("unwritten file = %q %d %v", b, rev, err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, err := dbs[i%2].UpdateFile(ctx, "f", func(old []byte) ([]byte, error) {
				return append(old, 'x'), nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	refusal := fmt.Errorf("no")
	if _, err := dbs[1].UpdateFile(ctx, "f", func([]byte) ([]byte, error) { return nil, refusal }); err == nil || !strings.HasSuffix(err.Error(), ": no") {
		t.Errorf("refused update: %v", err)
	}
	b, rev, err := dbs[1].ReadFile(ctx, "f")
	if string(b) != strings.Repeat("x", 20) || rev != 20 || err != nil {
		t.Errorf("after 20 updates: %q revision %d %v", b, rev, err)
	}
	if r, err := dbs[0].FileRevision(ctx, "f"); r != 20 || err != nil {
		t.Errorf("FileRevision = %d %v", r, err)
	}
}
