package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// clock is a settable clock shared by the store and the manager.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// expiryFixture is a registry with one skill, a workspace store and a
// manager with the given idle expiry, on a clock the test moves.
type expiryFixture struct {
	db    *sqlite.DB
	ws    blob.Store
	mgr   *session.Manager
	clock *clock
}

var t0 = time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)

func newExpiryFixture(t *testing.T, idle time.Duration) *expiryFixture {
	t.Helper()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "skills")
	write(t, filepath.Join(root, "docs", "pdf", "SKILL.md"), skillMD("pdf", "PDF files.", "1", "# PDF\n"))
	c := &clock{t: t0}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.Now = c.now
	reg := registry.New(db, registry.Options{})
	if _, err := reg.Scan(ctx, []discover.Root{{Path: root, Scope: discover.ScopeProject}}, nil); err != nil {
		t.Fatal(err)
	}
	ws := tempStore(t)
	mgr, err := session.NewManager(session.Options{Catalog: reg, Versions: db, Store: db, Workspace: ws, IdleExpiry: idle, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return &expiryFixture{db: db, ws: ws, mgr: mgr, clock: c}
}

// use opens id for p, loads pdf when load is set, writes a workspace file
// (unless it is there), and closes the session.
func (f *expiryFixture) use(t *testing.T, p capability.Principal, id string, load bool) {
	t.Helper()
	ctx := context.Background()
	s, err := f.mgr.Open(ctx, p, id)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if load {
		if _, err := s.Load(ctx, "docs/pdf"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.FS().Read(ctx, "/workspace/notes.md", 0, 0); err == nil {
		return
	}
	if err := s.FS().Write(ctx, "/workspace/notes.md", "notes of "+id); err != nil {
		t.Fatal(err)
	}
}

// workspace returns the keys under a session's workspace.
func (f *expiryFixture) workspace(t *testing.T, tenant, id string) []string {
	t.Helper()
	prefix, err := bucket.WorkspacePrefix(tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := f.ws.List(context.Background(), prefix, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, in := range infos {
		out = append(out, in.Key)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var reviewer = capability.Principal{Tenant: "acme", Agent: "reviewer", Tier: skill.T2}

// TestSessionListRemove: sessions are listed least recently used first
// with their principal, skills, creation and last use (attach and detach
// move it); removing one deletes its workspace; unknown and attached
// sessions are refused with what to do.
func TestSessionListRemove(t *testing.T) {
	ctx := context.Background()
	f := newExpiryFixture(t, 0)
	f.use(t, t3, "s1", true)
	f.clock.add(time.Hour)
	f.use(t, reviewer, "s2", false)
	f.clock.add(time.Hour)
	// Resuming s1 at 12:00 and closing it at 13:00 makes it the most
	// recently used.
	s, err := f.mgr.Open(ctx, t3, "s1")
	if err != nil {
		t.Fatal(err)
	}
	f.clock.add(time.Hour)
	s.Close()

	list, err := f.mgr.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"id":"s2","principal":"acme/reviewer@T2","skills":[],"created":"2026-08-01T11:00:00Z","last_used":"2026-08-01T11:00:00Z"},` +
		`{"id":"s1","principal":"acme/drafter@T3","skills":["docs/pdf"],"created":"2026-08-01T10:00:00Z","last_used":"2026-08-01T13:00:00Z"}]`
	if got := mustJSON(t, list); got != want {
		t.Errorf("list\n got %s\nwant %s", got, want)
	}

	if got := f.workspace(t, "acme", "s1"); mustJSON(t, got) != `["acme/sessions/s1/workspace/notes.md"]` {
		t.Fatalf("workspace before rm: %q", got)
	}
	in, err := f.mgr.Remove(ctx, "s1")
	if err != nil || in.ID != "s1" {
		t.Fatalf("Remove(s1) = %+v, %v", in, err)
	}
	if got := f.workspace(t, "acme", "s1"); len(got) != 0 {
		t.Errorf("workspace after rm: %q", got)
	}
	if got := f.workspace(t, "acme", "s2"); len(got) != 1 {
		t.Errorf("other workspace after rm: %q", got)
	}

	live, err := f.mgr.Open(ctx, reviewer, "s2")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	tests := []struct {
		id      string
		want    string
		wantErr error
	}{
		{"s1", "no such session: s1 (list them with skillgate session ls)", session.ErrNoSession},
		{"s2", "session in use: s2 has open connections; remove it once they end", session.ErrSessionInUse},
		{"../x", `invalid session id: session id "../x" must be letters, digits, '.', '_' and '-', starting with a letter or digit`, session.ErrInvalidSessionID},
	}
	for _, tc := range tests {
		_, err := f.mgr.Remove(ctx, tc.id)
		if err == nil || err.Error() != tc.want || !errors.Is(err, tc.wantErr) {
			t.Errorf("Remove(%s) = %v, want %s", tc.id, err, tc.want)
		}
	}
}

// TestSessionPrune: prune removes the sessions idle longer than the given
// time, with their workspaces, and keeps recent and attached ones; a dry
// run removes nothing.
func TestSessionPrune(t *testing.T) {
	ctx := context.Background()
	f := newExpiryFixture(t, 0)
	f.use(t, t3, "old", true)
	f.use(t, reviewer, "held", false)
	f.clock.add(10 * 24 * time.Hour)
	f.use(t, t3, "recent", false)
	held, err := f.mgr.Open(ctx, reviewer, "held")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	f.clock.add(24 * time.Hour)

	ids := func(in []session.Info) string {
		var out []string
		for _, i := range in {
			out = append(out, i.ID)
		}
		return mustJSON(t, out)
	}
	dry, err := f.mgr.Prune(ctx, 7*24*time.Hour, true)
	if err != nil || ids(dry) != `["old"]` {
		t.Fatalf("dry run = %s, %v", ids(dry), err)
	}
	if got := f.workspace(t, "acme", "old"); len(got) != 1 {
		t.Errorf("dry run deleted the workspace: %q", got)
	}
	pruned, err := f.mgr.Prune(ctx, 7*24*time.Hour, false)
	if err != nil || ids(pruned) != `["old"]` {
		t.Fatalf("prune = %s, %v", ids(pruned), err)
	}
	if got := f.workspace(t, "acme", "old"); len(got) != 0 {
		t.Errorf("workspace of a pruned session: %q", got)
	}
	list, _ := f.mgr.List(ctx)
	if ids(list) != `["held","recent"]` {
		t.Errorf("left = %s", ids(list))
	}
	if _, err := f.mgr.Prune(ctx, 0, false); err == nil || err.Error() != "session: prune: the idle time must be positive, not 0s" {
		t.Errorf("prune 0 = %v", err)
	}
}

// TestSessionExpiresOnResume: with an idle expiry, a session resumed after
// it expired starts afresh under its id (no skills, empty workspace, new
// creation time), as if it had been pruned; one resumed in time keeps all.
func TestSessionExpiresOnResume(t *testing.T) {
	ctx := context.Background()
	f := newExpiryFixture(t, 30*24*time.Hour)
	f.use(t, t3, "kept", true)
	f.use(t, t3, "expired", true)
	f.clock.add(29 * 24 * time.Hour)
	f.use(t, t3, "kept", false) // used on day 30
	f.clock.add(2 * 24 * time.Hour)

	s, err := f.mgr.Open(ctx, t3, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Loaded()); got != 1 {
		t.Errorf("kept: %d skills loaded, want 1", got)
	}
	s.Close()

	s, err = f.mgr.Open(ctx, t3, "expired")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := len(s.Loaded()); got != 0 {
		t.Errorf("expired: %d skills loaded, want 0", got)
	}
	if got := f.workspace(t, "acme", "expired"); len(got) != 0 {
		t.Errorf("expired workspace kept: %q", got)
	}
	// The fresh session holds nothing yet, so it is not stored; its first
	// file stores it, created now.
	if rec, err := f.db.Session(ctx, "expired"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("fresh session stored before it held anything: %+v, %v", rec, err)
	}
	if err := s.FS().Write(ctx, "/workspace/new.md", "new"); err != nil {
		t.Fatal(err)
	}
	rec, err := f.db.Session(ctx, "expired")
	if err != nil || !rec.CreatedAt.Equal(t0.Add(31*24*time.Hour)) || len(rec.Skills) != 0 {
		t.Errorf("stored = %+v, %v", rec, err)
	}
}

// TestSessionMaintain: the background pass records attached sessions as in
// use, so it never prunes them, and prunes the expired ones, at each tick
// and not before. It runs in a synctest bubble: the pass's ticker runs on the
// bubble's clock, and synctest.Wait returns once the pass is idle again, so
// the test sees exactly what one tick did.
func TestSessionMaintain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := newExpiryFixture(t, time.Hour)
		f.use(t, t3, "idle", false)
		held, err := f.mgr.Open(ctx, reviewer, "held")
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		if err := held.FS().Write(ctx, "/workspace/held.md", "held"); err != nil { // stored from here on
			t.Fatal(err)
		}
		f.clock.add(2 * time.Hour)
		ids := func() []string {
			t.Helper()
			list, err := f.mgr.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range list {
				ids = append(ids, s.ID)
			}
			return ids
		}
		const every = time.Minute
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.mgr.Maintain(ctx, every, func() bool { return true })
		}()
		synctest.Wait()
		if got := ids(); len(got) != 2 {
			t.Fatalf("before the first tick: sessions %v, want both (idle and held)", got)
		}
		time.Sleep(every)
		synctest.Wait()
		list, err := f.mgr.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].ID != "held" || !list[0].LastUsed.Equal(t0.Add(2*time.Hour)) {
			t.Fatalf("after one tick: %+v, want only held, last used at %s", list, t0.Add(2*time.Hour))
		}
		cancel()
		<-done
	})
}

// TestSessionStoredOnlyWhenUsed: a session is stored with its first loaded
// skill or workspace file; one that only connected, listed or read leaves
// nothing in the store. A session another principal stored meanwhile (in
// another process) is refused at that point, not taken over.
func TestSessionStoredOnlyWhenUsed(t *testing.T) {
	ctx := context.Background()
	f := newExpiryFixture(t, 0)
	tests := []struct {
		id     string
		use    func(s *session.Session) error
		stored bool
	}{
		{"idle", func(*session.Session) error { return nil }, false},
		{"reader", func(s *session.Session) error {
			_, err := s.FS().LsInfo(ctx, "/workspace")
			return err
		}, false},
		{"loader", func(s *session.Session) error {
			_, err := s.Load(ctx, "docs/pdf")
			return err
		}, true},
		{"writer", func(s *session.Session) error { return s.FS().Write(ctx, "/workspace/a.md", "a") }, true},
	}
	for _, tt := range tests {
		s, err := f.mgr.Open(ctx, t3, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if err := tt.use(s); err != nil {
			t.Fatalf("%s: %v", tt.id, err)
		}
		s.Close()
		_, err = f.db.Session(ctx, tt.id)
		if stored := err == nil; stored != tt.stored {
			t.Errorf("%s: stored %v (%v), want %v", tt.id, stored, err, tt.stored)
		}
	}
	list, err := f.mgr.List(ctx)
	if err != nil || len(list) != 2 {
		t.Errorf("sessions stored: %+v, %v; want loader and writer", list, err)
	}

	// Another process stores "taken" for another principal while this one
	// holds it unstored: the first write here is refused.
	s, err := f.mgr.Open(ctx, t3, "taken")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := f.db.CreateSession(ctx, store.Session{ID: "taken", Tenant: reviewer.Tenant, Agent: reviewer.Agent, Tier: string(reviewer.Tier)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "docs/pdf"); !errors.Is(err, session.ErrSessionUnavailable) {
		t.Errorf("load into a session another principal stored: %v, want ErrSessionUnavailable", err)
	}
}
