package app

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// eventually polls cond every 10ms until it holds or d has passed.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openFiles counts the process's open file descriptors (Linux), or -1.
func openFiles() int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es)
}

// goroutines returns the stacks of the process's goroutines but the
// caller's and os/signal's loop, which the first signal.Notify starts for
// the life of the process.
func goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 || strings.Contains(g, "os/signal.loop") {
			continue
		}
		out = append(out, g)
	}
	return out
}

// skillNames lists the names of the registry's enabled skills.
func skillNames(t *testing.T, a *App) []string {
	t.Helper()
	reg, closeFn, err := a.OpenRegistry(context.Background(), discover.DefaultLimits, false)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	es, err := reg.List(context.Background(), registry.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name)
	}
	return names
}

// TestServerLifecycle: an App on a data directory with the SQLite store
// serves on loopback without the binary: health answers, POST /v1/scan
// rescans the roots of the last scan (a skill added since is listed
// afterwards), the checkpoint ticker signs the grown audit log, and when
// the context ends Run returns nil, the background work stops and no
// goroutine or file stays open.
func TestServerLifecycle(t *testing.T) {
	ctx := context.Background()
	data, root := t.TempDir(), t.TempDir()
	write(t, root, map[string]string{"notes/SKILL.md": "---\nname: notes\ndescription: Take notes.\n---\nBody.\n"})
	before, files := len(goroutines()), openFiles()

	a := New(Options{Data: data, Version: "test"})
	if err := a.CreateData(); err != nil {
		t.Fatal(err)
	}
	reg, closeReg, err := a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		t.Fatal(err)
	}
	scanRoots(t, a, reg, []string{root}, "")
	closeReg()
	ts, err := a.TokenSet(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := ts.Add(ctx, capability.Principal{Tenant: "acme", Agent: "ops", Tier: skill.T1}, time.Now())
	if err != nil {
		t.Fatal(err)
	}

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var failed []string
	srv, err := a.OpenServer(rctx, ServeOptions{
		Addr: "127.0.0.1:0", CheckpointInterval: 20 * time.Millisecond,
		Storage: &Storage{Kind: "local"}, Limits: server.DefaultLimits(),
		RescanFailed: func(why string, err error) { failed = append(failed, why+": "+err.Error()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, where := srv.Tokens(); n != 1 || where != filepath.Join(data, server.TokensFile) {
		t.Errorf("tokens: %d in %s", n, where)
	}
	if !srv.Leading() {
		t.Error("a process on its own SQLite store does not lead")
	}
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(rctx) }()
	base := "http://" + srv.Addr().String()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

	resp, err := client.Get(base + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %s", resp.Status)
	}

	write(t, root, map[string]string{"todo/SKILL.md": "---\nname: todo\ndescription: Keep a to-do list.\n---\nBody.\n"})
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/scan", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var scanned struct {
		Changed bool `json:"changed"`
	}
	err = json.NewDecoder(resp.Body).Decode(&scanned)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !scanned.Changed {
		t.Fatalf("POST /v1/scan: %s %+v %v", resp.Status, scanned, err)
	}
	if names := strings.Join(skillNames(t, a), ","); names != "notes,todo" {
		t.Errorf("skills after the rescan: %s", names)
	}
	srv.Rescan(rctx, "test")
	if len(failed) > 0 {
		t.Errorf("rescans failed: %v", failed)
	}

	// The checkpoint ticker signs the log once it has a record.
	if _, err := audit.NewLog(srv.Runtime().DB).Append(rctx, audit.Record{Time: time.Now(), Actor: "operator:test", Action: "test", Subject: "lifecycle"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, AuditCheckpointFile)
	if !eventually(5*time.Second, func() bool { _, err := os.Stat(file); return err == nil }) {
		t.Fatal("no audit checkpoint was written")
	}

	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if resp, err := client.Get(base + "/v1/health"); err == nil {
		resp.Body.Close()
		t.Error("the server still answers after Run returned")
	}
	// Nothing writes a checkpoint once stopped, though the log grows.
	written, _ := os.ReadFile(file)
	db, err := a.OpenStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = audit.NewLog(db).Append(ctx, audit.Record{Time: time.Now(), Actor: "operator:test", Action: "test", Subject: "after"})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if after, _ := os.ReadFile(file); string(after) != string(written) {
		t.Error("checkpoints are still written after Run returned")
	}
	a.Close()
	client.CloseIdleConnections()
	if !eventually(5*time.Second, func() bool { return len(goroutines()) <= before }) {
		left := goroutines()
		t.Errorf("%d goroutines after the server stopped, %d before:\n%s", len(left), before, strings.Join(left, "\n\n"))
	}
	if files >= 0 && !eventually(5*time.Second, func() bool { return openFiles() <= files }) {
		t.Errorf("%d files open after the server stopped, %d before", openFiles(), files)
	}
}

// TestSessionMaintenance: the runtime's session maintenance prunes the
// sessions unused for longer than sessions.idle_expiry while prune
// reports true, and stops when asked.
func TestSessionMaintenance(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	// An idle expiry of 4s: maintenance runs every second.
	write(t, data, map[string]string{"config.yaml": "sessions:\n  idle_expiry: 4s\n"})
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Now = func() time.Time { return time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC) }
	if err := db.CreateSession(ctx, store.Session{ID: "s-old", Tenant: "acme", Agent: "drafter", Tier: "T3"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	a := New(Options{Data: data, Version: "test"})
	defer a.Close()
	d, err := a.OpenRuntime(ctx, &Storage{Kind: "local"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	count := func() int {
		list, err := d.Sessions.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d sessions stored, want 1", n)
	}
	// A follower does not prune.
	stop := d.MaintainSessions(ctx, func() bool { return false })
	time.Sleep(1500 * time.Millisecond)
	stop()
	if n := count(); n != 1 {
		t.Fatalf("a follower pruned: %d sessions left", n)
	}
	stop = d.MaintainSessions(ctx, func() bool { return true })
	pruned := eventually(5*time.Second, func() bool { return count() == 0 })
	stop()
	if !pruned {
		t.Fatal("the expired session was not pruned")
	}
}
