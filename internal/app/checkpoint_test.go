package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillgate/skillgate/internal/storage/audit"
)

// heads is a log head that tests move.
type heads struct {
	mu sync.Mutex
	h  audit.Head
}

func (s *heads) Head(context.Context) (audit.Head, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h, nil
}

func (s *heads) set(h audit.Head) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

// TestCheckpointEvery: serve's periodic checkpoint is written when the log
// grew since the last one, and not otherwise.
func TestCheckpointEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data := t.TempDir()
		a := New(Options{Data: data})
		log := &heads{}
		stop := a.checkpointEvery(context.Background(), log, time.Minute, func() bool { return true }, slog.New(slog.DiscardHandler))
		time.Sleep(90 * time.Second) // empty log: nothing
		log.set(audit.Head{Seq: 1, Hash: "sha256:" + strings.Repeat("a", 64)})
		time.Sleep(time.Minute) // grew: one checkpoint
		time.Sleep(time.Minute) // unchanged: none
		log.set(audit.Head{Seq: 2, Hash: "sha256:" + strings.Repeat("b", 64)})
		time.Sleep(time.Minute) // grew: a second
		stop()
		b, err := os.ReadFile(filepath.Join(data, AuditCheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n != 2 {
			t.Fatalf("%d checkpoints, want 2:\n%s", n, b)
		}
		cp, err := audit.ReadCheckpoints(filepath.Join(data, AuditCheckpointFile), nil)
		if err != nil || cp.Head != log.h {
			t.Fatalf("newest checkpoint %v, %v; want %v", cp.Head, err, log.h)
		}
	})
}
