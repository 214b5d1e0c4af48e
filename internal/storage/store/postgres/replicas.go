package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChangesChannel is the notification channel on which every transaction
// that changes what skillgate processes cache announces it, delivered when
// it commits (migration 0003's triggers). The payload names what changed:
// "registry", "installs", "policies", "grants", or "file:" and a shared
// file's name.
const ChangesChannel = "skillgate_changes"

// Resync is what [DB.Listen] hands its callback after it (re)connects:
// notifications sent while it was not listening are lost, so everything
// must be checked.
const Resync = "resync"

// lockLeader is the session-level advisory lock whose holder is the
// leader of the processes on a database (see [DB.Campaign]).
const lockLeader int64 = 0x736b67_04

// retryEvery is how long Listen and Campaign wait before they connect
// again after losing their connection, and how often a follower tries to
// become the leader.
const retryEvery = time.Second

// connect opens a connection of its own, outside the pool, configured as
// the pool's connections are: a LISTEN or a session-level advisory lock
// must stay on one connection for as long as it lasts.
func (s *DB) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", s.name, err)
	}
	return conn, nil
}

// Listen calls fn with the payload of every notification on
// [ChangesChannel] until ctx ends, on a dedicated connection (so it holds
// one connection more than the pool). Notifications of this process's own
// transactions are delivered too. When the connection is lost it connects
// again every second; after each (re)connection fn gets [Resync], since
// changes committed meanwhile were not announced to it. fn runs on
// Listen's goroutine and must not block. Errors are logged to log (nil
// discards them); Listen returns when ctx ends.
func (s *DB) Listen(ctx context.Context, fn func(what string), log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	first := true
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, fn, &first)
		if ctx.Err() != nil {
			return
		}
		log.Warn("change notifications lost; listening again", "store", s.name, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryEvery):
		}
	}
}

// listenOnce listens on one connection until it fails or ctx ends. The
// first successful LISTEN of a Listen is not announced as a resync: the
// caller loaded everything just before.
func (s *DB) listenOnce(ctx context.Context, fn func(string), first *bool) error {
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+ChangesChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if !*first {
		fn(Resync)
	}
	*first = false
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		fn(n.Payload)
	}
}

// Notify announces what on [ChangesChannel] to every listening process,
// as the store's own changes do.
func (s *DB) Notify(ctx context.Context, what string) error {
	if _, err := s.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, ChangesChannel, what); err != nil {
		return fmt.Errorf("notify %s: %w", what, err)
	}
	return nil
}

// Campaign competes, until ctx ends, for the leadership of the processes
// on the database: a session-level advisory lock (pg_try_advisory_lock)
// held on a dedicated connection. A follower tries again every second.
// lead is called with true when this process becomes the leader and with
// false when it stops being one (its connection failed its check, or ctx
// ended): at most one process on the database is the leader at a time,
// give or take the second a lost connection takes to notice. A leader
// that dies (even killed) loses the lock with its connection, and another
// process takes over within about a second. lead runs on Campaign's
// goroutine and must not block.
func (s *DB) Campaign(ctx context.Context, lead func(bool), log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for ctx.Err() == nil {
		err := s.campaignOnce(ctx, lead)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Warn("leader election: connection lost; trying again", "store", s.name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryEvery):
		}
	}
}

// campaignOnce tries for the lock on one connection until that
// connection fails or ctx ends, and holds it once taken, checking the
// connection every second.
func (s *DB) campaignOnce(ctx context.Context, lead func(bool)) (err error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	leading := false
	defer func() {
		if leading {
			lead(false)
		}
		// Closing the connection releases the lock, if it was held.
		conn.Close(context.WithoutCancel(ctx))
	}()
	t := time.NewTicker(retryEvery)
	defer t.Stop()
	for {
		if leading {
			var one int
			if err := conn.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
				return fmt.Errorf("leader check: %w", err)
			}
		} else {
			var got bool
			if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockLeader).Scan(&got); err != nil {
				return fmt.Errorf("leader election: %w", err)
			}
			if got {
				leading = true
				lead(true)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// ErrFileTooLarge is returned by UpdateFile when the new content is
// larger than [MaxSharedFile].
var ErrFileTooLarge = errors.New("shared file too large")

// MaxSharedFile bounds a shared file's content.
const MaxSharedFile = 16 << 20

// ReadFile returns the shared file name's content and revision; a file
// never written is (nil, 0, nil).
func (s *DB) ReadFile(ctx context.Context, name string) ([]byte, int64, error) {
	var content []byte
	var rev int64
	err := s.db.QueryRowContext(ctx, `SELECT content, revision FROM shared_files WHERE name = $1`, name).Scan(&content, &rev)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("shared file %s: %w", name, err)
	}
	return content, rev, nil
}

// FileRevision returns the revision of the shared file name, 0 when it
// was never written: one cheap read, to notice a change.
func (s *DB) FileRevision(ctx context.Context, name string) (int64, error) {
	var rev int64
	err := s.db.QueryRowContext(ctx, `SELECT revision FROM shared_files WHERE name = $1`, name).Scan(&rev)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("shared file %s: %w", name, err)
	}
	return rev, nil
}

// UpdateFile replaces the shared file name with what change returns for
// its current content (nil when it was never written), in one
// transaction that holds the file's row (or, for a new file, an advisory
// lock on its name) against concurrent updates in any process: no update
// is lost. change's error aborts it, leaving the file as it was, and is
// returned wrapped. It returns the new revision.
func (s *DB) UpdateFile(ctx context.Context, name string, change func(old []byte) ([]byte, error)) (int64, error) {
	if strings.TrimSpace(name) == "" {
		return 0, fmt.Errorf("shared file: empty name")
	}
	var rev int64
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("shared file %s: %w", name, err)
	}
	err = func() error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "skillgate shared file "+name); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		var old []byte
		err := tx.QueryRowContext(ctx, `SELECT content, revision FROM shared_files WHERE name = $1 FOR UPDATE`, name).Scan(&old, &rev)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		next, err := change(old)
		if err != nil {
			return err
		}
		if len(next) > MaxSharedFile {
			return fmt.Errorf("%w: %d bytes, at most %d", ErrFileTooLarge, len(next), MaxSharedFile)
		}
		rev++
		_, err = tx.ExecContext(ctx, `INSERT INTO shared_files (name, content, revision, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (name) DO UPDATE SET content = excluded.content, revision = excluded.revision, updated_at = excluded.updated_at`,
			name, next, rev, s.Now().UnixNano())
		return err
	}()
	if err == nil {
		err = tx.Commit()
	} else {
		tx.Rollback()
	}
	if err != nil {
		return 0, fmt.Errorf("shared file %s: %w", name, err)
	}
	return rev, nil
}
