package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Sessions are kept in the store until an operator removes them or, with
// Options.IdleExpiry, until they have gone unused that long. "Used" is
// recorded cheaply, never per tool call: when a session is created,
// attached (resumed), changes its loaded skills or is detached (its last
// handle closes), and, while it stays attached, by [Manager.Maintain]'s
// heartbeat, so that another process sharing the store does not take a
// long-lived connection for an idle session.
//
// An expired session is pruned by Maintain (skillgate serve runs it) or by
// an operator (skillgate session prune). One that is resumed before it was
// pruned is treated exactly as if it had been: its record and workspace are
// discarded and a fresh session starts under the same id. Removing a
// session deletes its workspace (bucket.WorkspacePrefix) after its record, so
// a crash in between leaves files no session refers to, never a session
// without its files.

// Info describes one stored session for operators.
type Info struct {
	ID string `json:"id"`
	// Principal is "tenant/agent@tier".
	Principal string `json:"principal"`
	// Skills are the loaded skills' identities, in load order.
	Skills   []string  `json:"skills"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
}

func info(rec store.Session) Info {
	in := Info{ID: rec.ID, Principal: recordPrincipal(rec).String(), Skills: make([]string, len(rec.Skills)),
		Created: rec.CreatedAt, LastUsed: rec.LastUsed}
	for i, l := range rec.Skills {
		in.Skills[i] = l.Key
	}
	return in
}

// List returns every stored session, least recently used first. Errors:
// storage errors.
func (m *Manager) List(ctx context.Context) ([]Info, error) {
	recs, err := m.opts.Store.Sessions(ctx, store.SessionFilter{})
	if err != nil {
		return nil, err
	}
	out := make([]Info, len(recs))
	for i, r := range recs {
		out[i] = info(r)
	}
	return out, nil
}

// Remove deletes the stored session id and its workspace. Errors:
// [ErrInvalidSessionID], [ErrNoSession], [ErrSessionInUse] when it has open
// handles in this process, storage errors.
func (m *Manager) Remove(ctx context.Context, id string) (Info, error) {
	if err := ValidID(id); err != nil {
		return Info{}, err
	}
	if m.isAttached(id) {
		return Info{}, fmt.Errorf("%w: %s has open connections; remove it once they end", ErrSessionInUse, id)
	}
	rec, err := m.opts.Store.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Info{}, fmt.Errorf("%w: %s (list them with skillgate session ls)", ErrNoSession, id)
	}
	if err != nil {
		return Info{}, err
	}
	if err := m.opts.Store.DeleteSession(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Info{}, fmt.Errorf("%w: %s (list them with skillgate session ls)", ErrNoSession, id)
		}
		return Info{}, err
	}
	if err := m.deleteWorkspace(ctx, rec.Tenant, id); err != nil {
		return Info{}, err
	}
	m.log.InfoContext(ctx, "session removed", "session", id, "principal", recordPrincipal(rec).String())
	return info(rec), nil
}

// Prune removes the sessions unused for longer than idle, with their
// workspaces, and returns them, least recently used first; with dryRun it
// only returns them. Sessions attached in this process are kept, and so is
// one another process resumed meanwhile. idle must be positive. Errors:
// storage errors (the sessions removed before the error are returned).
func (m *Manager) Prune(ctx context.Context, idle time.Duration, dryRun bool) ([]Info, error) {
	if idle <= 0 {
		return nil, fmt.Errorf("session: prune: the idle time must be positive, not %s", idle)
	}
	cut := m.opts.Now().Add(-idle)
	recs, err := m.opts.Store.Sessions(ctx, store.SessionFilter{UnusedSince: cut})
	if err != nil {
		return nil, err
	}
	out := []Info{}
	for _, rec := range recs {
		if m.isAttached(rec.ID) {
			continue
		}
		if !dryRun {
			err := m.opts.Store.DeleteIdleSession(ctx, rec.ID, cut)
			if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
				continue // resumed, or removed, meanwhile
			}
			if err == nil {
				err = m.deleteWorkspace(ctx, rec.Tenant, rec.ID)
			}
			if err != nil {
				return out, err
			}
			m.log.InfoContext(ctx, "session pruned", "session", rec.ID, "principal", recordPrincipal(rec).String(), "last_used", rec.LastUsed)
		}
		out = append(out, info(rec))
	}
	return out, nil
}

// Maintain runs until ctx ends when Options.IdleExpiry is positive (it
// returns at once otherwise): every interval it records the sessions
// attached in this process as in use and, when prune is not nil and
// reports true (replicas on one store prune once: their leader does),
// prunes the expired ones. Errors are logged. every <= 0 picks a quarter of the idle
// expiry, between a second and 15 minutes, so that attached sessions are
// touched several times per period. Run it in the background.
func (m *Manager) Maintain(ctx context.Context, every time.Duration, prune func() bool) {
	idle := m.opts.IdleExpiry
	if idle <= 0 {
		return
	}
	if every <= 0 {
		every = min(max(idle/4, time.Second), 15*time.Minute)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.heartbeat(ctx)
		if prune == nil || !prune() {
			continue
		}
		if pruned, err := m.Prune(ctx, idle, false); err != nil {
			m.log.WarnContext(ctx, "pruning idle sessions failed", "err", err, "pruned", len(pruned))
		} else if len(pruned) > 0 {
			m.log.InfoContext(ctx, "idle sessions pruned", "count", len(pruned), "idle_expiry", idle)
		}
		if n, err := m.SweepCopies(ctx); err != nil {
			m.log.WarnContext(ctx, "sweeping version copies failed", "err", err, "removed", n)
		} else if n > 0 {
			m.log.InfoContext(ctx, "version copies no longer used removed", "count", n)
		}
	}
}

// heartbeat touches the attached sessions.
func (m *Manager) heartbeat(ctx context.Context) {
	ids := m.Attached()
	if len(ids) == 0 {
		return
	}
	if err := m.opts.Store.TouchSessions(ctx, m.opts.Now(), ids...); err != nil {
		m.log.WarnContext(ctx, "recording attached sessions as in use failed", "err", err)
	}
}

// resume is called by attach with the stored session: an expired one is
// discarded (store.ErrNotFound is returned, so that a fresh session is
// created), a live one of p is recorded as used now.
func (m *Manager) resume(ctx context.Context, st *state, rec store.Session) (store.Session, error) {
	if idle := m.opts.IdleExpiry; idle > 0 {
		cut := m.opts.Now().Add(-idle)
		if rec.LastUsed.Before(cut) {
			err := m.opts.Store.DeleteIdleSession(ctx, rec.ID, cut)
			switch {
			case err == nil:
				if err := m.deleteWorkspace(ctx, rec.Tenant, rec.ID); err != nil {
					return store.Session{}, fmt.Errorf("session %s: %w", rec.ID, err)
				}
				m.log.InfoContext(ctx, "session expired; starting afresh", "session", rec.ID,
					"principal", recordPrincipal(rec).String(), "last_used", rec.LastUsed, "idle_expiry", idle)
				return store.Session{}, store.ErrNotFound
			case errors.Is(err, store.ErrNotFound):
				return store.Session{}, err
			case !errors.Is(err, store.ErrConflict): // a conflict: used meanwhile, resume it
				return store.Session{}, fmt.Errorf("session %s: %w", rec.ID, err)
			}
		}
	}
	if recordPrincipal(rec) != st.p {
		return rec, nil // attach refuses it; never touch another principal's session
	}
	now := m.opts.Now()
	if err := m.opts.Store.TouchSessions(ctx, now, rec.ID); err != nil {
		return store.Session{}, fmt.Errorf("session %s: %w", rec.ID, err)
	}
	if now.After(rec.LastUsed) {
		rec.LastUsed = now
	}
	return rec, nil
}

// detached records the session as used when its last handle closes.
func (m *Manager) detached(st *state) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.opts.Store.TouchSessions(ctx, m.opts.Now(), st.id); err != nil {
		m.log.Warn("recording session use failed", "session", st.id, "err", err)
	}
	m.log.Info("session detached", "session", st.id, "principal", st.p.String())
}

func (m *Manager) isAttached(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.live[id]
	return ok
}

// deleteWorkspace deletes every file of a session's workspace and gives
// their size back to its tenant's quota.
func (m *Manager) deleteWorkspace(ctx context.Context, tenant, id string) error {
	prefix, err := bucket.WorkspacePrefix(tenant, id)
	if err != nil {
		return fmt.Errorf("session %s: workspace: %w", id, err)
	}
	infos, err := m.opts.Workspace.List(ctx, prefix, 0)
	if err != nil {
		return fmt.Errorf("session %s: list workspace: %w", id, err)
	}
	var bytes, files int64
	for _, in := range infos {
		if err := m.opts.Workspace.Delete(ctx, in.Key); err != nil {
			return fmt.Errorf("session %s: delete workspace file: %w", id, err)
		}
		bytes += in.Size
		files++
	}
	m.mu.Lock()
	tq := m.tenantQuota[tenant]
	m.mu.Unlock()
	if tq != nil && files > 0 {
		tq.Release(bytes, files)
	}
	return nil
}

// WriteTable writes sessions as the table of 'skillgate session ls' and
// 'session prune': id, principal, loaded skills, created and last used
// (UTC).
func WriteTable(w io.Writer, list []Info) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPRINCIPAL\tSKILLS\tCREATED\tLAST USED")
	for _, s := range list {
		skills := "-"
		if len(s.Skills) > 0 {
			skills = strings.Join(s.Skills, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Principal, skills,
			s.Created.UTC().Format(time.RFC3339), s.LastUsed.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}
