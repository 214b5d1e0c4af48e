package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/storage/audit"
)

// Files of the audit checkpoints in the data directory.
const (
	auditKeyFile        = "audit-signing.key"
	auditCheckpointFile = "audit-checkpoints.jsonl"
)

func (m *Main) auditKeyPath() string { return filepath.Join(m.data(), auditKeyFile) }

func (m *Main) auditCheckpointCommand() *cobra.Command {
	var file string
	var asJSON bool
	c := &cobra.Command{
		Use:   "checkpoint [--file F] [--json]",
		Short: "Sign the audit log's head and append it to a checkpoint file",
		Long: `Sign the audit log's current head (last record's SEQ:HASH, with the time)
with the data directory's audit signing key (DATA/` + auditKeyFile + `, made on
first use, mode 0600) and append it as one JSON line to --file (default
DATA/` + auditCheckpointFile + `); the line is printed too. 'skillgate serve'
does the same every --audit-checkpoint-interval.

A checkpoint only protects the log if it is kept where whoever can write the
data directory cannot: copy the file (or the printed line) to another host or
write-once storage, and note the public key ("key" in the line). Later,
'skillgate audit verify --checkpoint FILE --key KEY' fails when the log was
rewritten, re-chained or cut short since the newest checkpoint.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := m.openAudit(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			if file == "" {
				file = filepath.Join(m.data(), auditCheckpointFile)
			}
			cp, err := m.checkpoint(cmd.Context(), audit.NewLog(db), file)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(m.Stdout, cp)
			}
			fmt.Fprintf(m.Stdout, "checkpoint %s at %s appended to %s\nsigning key %s\n", cp.Head, cp.At.Format(time.RFC3339), file, cp.Key)
			return nil
		},
	}
	c.Flags().StringVar(&file, "file", "", "the checkpoint file to append to (default DATA/"+auditCheckpointFile+")")
	c.Flags().BoolVar(&asJSON, "json", false, "print the checkpoint as JSON")
	return c
}

// headSource is what a checkpoint reads of the log.
type headSource interface {
	Head(ctx context.Context) (audit.Head, error)
}

// checkpoint signs the log's head and appends it to file.
func (m *Main) checkpoint(ctx context.Context, log headSource, file string) (audit.Checkpoint, error) {
	h, err := log.Head(ctx)
	if err != nil {
		return audit.Checkpoint{}, err
	}
	if h.Seq == 0 {
		return audit.Checkpoint{}, &exitError{code: exitFail, err: fmt.Errorf("audit log is empty: nothing to checkpoint yet")}
	}
	key, err := audit.LoadOrCreateKey(m.auditKeyPath())
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
func (m *Main) checkpointEvery(ctx context.Context, log headSource, interval time.Duration, leading func() bool, lg *slog.Logger) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	file := filepath.Join(m.data(), auditCheckpointFile)
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
			cp, err := m.checkpoint(ctx, log, file)
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

// verifyCheckpoint reads the newest checkpoint of file, signed by key
// (ed25519:BASE64) when key is set, else by this data directory's key when
// it has one.
func (m *Main) verifyCheckpoint(file, key string) (audit.Checkpoint, error) {
	var trusted ed25519.PublicKey
	switch {
	case key != "":
		k, err := audit.ParsePublicKey(key)
		if err != nil {
			return audit.Checkpoint{}, usageErr("--key: %v", err)
		}
		trusted = k
	default:
		priv, err := audit.LoadKey(m.auditKeyPath())
		switch {
		case err == nil:
			trusted = priv.Public().(ed25519.PublicKey)
		case !errors.Is(err, fs.ErrNotExist):
			return audit.Checkpoint{}, err
		}
	}
	cp, err := audit.ReadCheckpoints(file, trusted)
	if err != nil {
		return audit.Checkpoint{}, &exitError{code: exitFail, err: err}
	}
	return cp, nil
}
