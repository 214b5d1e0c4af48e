package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skillgate/skillgate/internal/registry/mirror"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Defaults for [VersionCopies].
const (
	// DefaultCopyMaxBytes bounds the bytes of one version copied at load.
	DefaultCopyMaxBytes = 64 << 20
	// DefaultCopyMaxFiles bounds the files of one version copied at load.
	DefaultCopyMaxFiles = 10_000
	// DefaultCopyGrace keeps a copy made this recently from a sweep: another
	// process (an 'mcp' beside 'serve') may have just loaded it.
	DefaultCopyGrace = time.Hour
)

// VersionCopies keeps the version a session loaded readable while the
// skill's author edits its files in place: when a session loads a skill
// served from its directory ([LocalSource], and a tenant library's cache),
// the recorded files of that version are copied once into Store under
// Prefix, addressed by the version's digest (the layout of package mirror:
// {Prefix}trees/<hex>/…), checked against the digest, and the session
// reads the copy from then on. Every session (in any process sharing
// Store) that loads the same version reads the same copy, so a version
// edited after one session loaded it still loads, as scanned, until the
// next scan records the new version; a session keeps the version it
// loaded until it loads the skill again (unload and load, or a resumed
// session). Copies are made lazily at load, never by a scan, so scans do
// not slow down; a version edited before any session loaded it is refused
// as before (ErrSkillChanged). A version over MaxBytes or MaxFiles is
// served from its directory, as without copies.
//
// [Manager.SweepCopies] removes the copies of versions no registry row
// (current or history) and no session attached to this process uses.
type VersionCopies struct {
	// Store holds the copies; nil turns copies off.
	Store blob.Store
	// Prefix is where in Store (bucket.DefaultLoadedPrefix).
	Prefix string
	// MaxBytes and MaxFiles bound one version; zero means the defaults.
	MaxBytes int64
	MaxFiles int
	// Grace keeps copies made this recently from a sweep; zero means
	// DefaultCopyGrace.
	Grace time.Duration
}

// pin returns where the session should read version v mounted at st and
// prefix: the version's copy, made now from st if it is not there yet, or
// st and prefix themselves when copies are off, the mount is not a skill
// directory, or the copy cannot be made (logged; the directory is then
// served as without copies). pinned reports a copy.
func (m *Manager) pin(ctx context.Context, v store.Version, st blob.Store, prefix string) (blob.Store, string, bool) {
	c := m.opts.Copies
	if c.Store == nil || v.Digest == "" {
		return st, prefix, false
	}
	if _, ok := st.(*tree); !ok {
		return st, prefix, false // object storage keeps each version apart already
	}
	tree, err := mirror.CopyTree(ctx, c.Store, c.Prefix, v, st, prefix, cmp.Or(c.MaxFiles, DefaultCopyMaxFiles), cmp.Or(c.MaxBytes, DefaultCopyMaxBytes))
	if err != nil {
		level := m.log.WarnContext
		if errors.Is(err, mirror.ErrTooLarge) {
			level = m.log.InfoContext
		}
		level(ctx, "loaded skill served from its directory, not a copy of its version", "skill", v.Key, "digest", v.Digest, "err", err)
		return st, prefix, false
	}
	return c.Store, tree, true
}

// pinnedCopy returns the copy of v when one is complete in the copies
// store: a version whose copy exists is served from it without reading its
// directory, which may hold a newer, unscanned edit.
func (m *Manager) pinnedCopy(ctx context.Context, v store.Version) (blob.Store, string, bool) {
	c := m.opts.Copies
	if c.Store == nil || v.Digest == "" {
		return nil, "", false
	}
	tree, _, err := mirror.Files(ctx, c.Store, c.Prefix, v.Digest)
	if err != nil {
		return nil, "", false
	}
	return c.Store, tree, true
}

// SweepCopies removes the version copies ([VersionCopies]) that no
// registry version, current or history, and no session attached to this
// process uses, except those made within the grace period, and returns how
// many it removed.
func (m *Manager) SweepCopies(ctx context.Context) (int, error) {
	c := m.opts.Copies
	if c.Store == nil {
		return 0, nil
	}
	vs, err := m.opts.Versions.Versions(ctx, store.Filter{History: true, Brief: true})
	if err != nil {
		return 0, fmt.Errorf("session: sweep version copies: %w", err)
	}
	keep := make(map[string]bool, len(vs))
	for _, v := range vs {
		keep[v.Digest] = true
	}
	m.mu.Lock()
	sts := make([]*state, 0, len(m.live))
	for _, st := range m.live {
		sts = append(sts, st)
	}
	m.mu.Unlock()
	for _, st := range sts {
		st.mu.Lock()
		for _, l := range st.skills {
			keep[l.digest] = true
		}
		st.mu.Unlock()
	}
	n, err := mirror.Sweep(ctx, c.Store, c.Prefix, keep, m.opts.Now().Add(-cmp.Or(c.Grace, DefaultCopyGrace)))
	if err != nil {
		return n, fmt.Errorf("session: sweep version copies: %w", err)
	}
	return n, nil
}
