package app

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/skillgate/skillgate/internal/storage/audit"
)

// Files of the audit checkpoints in the data directory.
const (
	// AuditKeyFile is the data directory's audit signing key (made on
	// first use, mode 0600).
	AuditKeyFile = "audit-signing.key"
	// AuditCheckpointFile is where serve and 'audit checkpoint' append
	// signed heads of the audit log.
	AuditCheckpointFile = "audit-checkpoints.jsonl"
)

// auditKeyPath is the data directory's audit signing key.
func (a *App) auditKeyPath() string { return filepath.Join(a.Data(), AuditKeyFile) }

// HeadSource is what a checkpoint reads of the log.
type HeadSource interface {
	Head(ctx context.Context) (audit.Head, error)
}

// Checkpoint signs the log's head and appends it to file.
func (a *App) Checkpoint(ctx context.Context, log HeadSource, file string) (audit.Checkpoint, error) {
	h, err := log.Head(ctx)
	if err != nil {
		return audit.Checkpoint{}, err
	}
	if h.Seq == 0 {
		return audit.Checkpoint{}, errors.New("audit log is empty: nothing to checkpoint yet")
	}
	key, err := audit.LoadOrCreateKey(a.auditKeyPath())
	if err != nil {
		return audit.Checkpoint{}, err
	}
	cp := audit.SignCheckpoint(h, time.Now(), key)
	if err := audit.AppendCheckpoint(file, cp); err != nil {
		return audit.Checkpoint{}, fmt.Errorf("audit checkpoint: %w", err)
	}
	return cp, nil
}

// checkpointEvery appends a checkpoint to DATA/audit-checkpoints.jsonl
// every interval while the log grows and leading reports true (replicas on
// one store sign once: the leader does), until the returned stop is
// called or ctx ends. interval 0 disables it.
func (a *App) checkpointEvery(ctx context.Context, log HeadSource, interval time.Duration, leading func() bool, lg *slog.Logger) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	file := filepath.Join(a.Data(), AuditCheckpointFile)
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		var last audit.Head
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !leading() {
				continue
			}
			h, err := log.Head(ctx)
			if err != nil || h.Seq == 0 || h == last {
				continue
			}
			cp, err := a.Checkpoint(ctx, log, file)
			if err != nil {
				lg.Warn("audit checkpoint failed", "file", file, "err", err)
				continue
			}
			last = cp.Head
			lg.Info("audit checkpoint", "head", cp.Head.String(), "file", file)
		}
	}()
	return func() { cancel(); <-done }
}

// VerifyCheckpoint reads the newest checkpoint of file, signed by key
// (ed25519:BASE64) when key is set, else by this data directory's key when
// it has one.
func (a *App) VerifyCheckpoint(file, key string) (audit.Checkpoint, error) {
	var trusted ed25519.PublicKey
	switch {
	case key != "":
		k, err := audit.ParsePublicKey(key)
		if err != nil {
			return audit.Checkpoint{}, Usagef("--key: %v", err)
		}
		trusted = k
	default:
		priv, err := audit.LoadKey(a.auditKeyPath())
		switch {
		case err == nil:
			trusted = priv.Public().(ed25519.PublicKey)
		case !errors.Is(err, fs.ErrNotExist):
			return audit.Checkpoint{}, err
		}
	}
	cp, err := audit.ReadCheckpoints(file, trusted)
	if err != nil {
		return audit.Checkpoint{}, err
	}
	return cp, nil
}
