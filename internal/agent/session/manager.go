package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Catalog is what the session layer asks of the registry: the catalog
// snapshot at the current registry generation, shared by every session.
// *registry.Registry implements it.
type Catalog interface {
	Snapshot(ctx context.Context) (*registry.Snapshot, error)
}

// ForTenant returns the view of cat that tenant's principals get, as a
// [Catalog] (for callers without a session, such as a discovery prompt
// printed for a tenant).
func ForTenant(cat TenantCatalog, tenant string) Catalog { return tenantView{cat, tenant} }

// tenantView is ForTenant's Catalog.
type tenantView struct {
	cat    TenantCatalog
	tenant string
}

// Snapshot implements [Catalog]: the tenant's snapshot.
func (v tenantView) Snapshot(ctx context.Context) (*registry.Snapshot, error) {
	return v.cat.TenantSnapshot(ctx, v.tenant)
}

// TenantCatalog is a [Catalog] that also cuts each tenant's view: the
// shared skills and that tenant's own skill library, never another
// tenant's (*registry.Registry implements it). A Manager whose Catalog
// implements it serves each principal its tenant's view; otherwise every
// principal sees Snapshot.
type TenantCatalog interface {
	Catalog
	TenantSnapshot(ctx context.Context, tenant string) (*registry.Snapshot, error)
}

// Versions returns full registry versions, with their recorded file lists.
// store.Store implementations provide it.
type Versions interface {
	Versions(ctx context.Context, f store.Filter) ([]store.Version, error)
}

// Options configures a [Manager]. Catalog, Versions, Store and Workspace
// are required.
type Options struct {
	// Catalog lists the registry's skills.
	Catalog Catalog
	// Versions loads the version of a skill being loaded.
	Versions Versions
	// Store persists sessions.
	Store store.SessionStore
	// Source mounts loaded skills; nil means LocalSource.
	Source Source
	// Workspace holds the sessions' read-write /workspace trees, each under
	// bucket.WorkspacePrefix(tenant, sessionID).
	Workspace blob.Store
	// Mounts are extra mounts every session gets, such as a read-only
	// /ticket.
	Mounts []vfs.Mount
	// FS bounds each session's filesystem; its Mounts, Skills and Logger
	// fields are ignored.
	FS vfs.Options
	// WorkspaceLimits bounds what sessions keep in their /workspace; zero
	// fields take the defaults (DefaultSessionWorkspaceBytes …), negative
	// ones mean unlimited.
	WorkspaceLimits WorkspaceLimits
	// IdleExpiry, when positive, is how long a session may go unused before
	// it expires: [Manager.Maintain] prunes it, and resuming it starts a
	// fresh session under the same id (see expiry.go). Zero keeps sessions
	// until an operator removes them.
	IdleExpiry time.Duration
	// Logger receives session events; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Audit, when set, records each load refused because the skill's
	// files changed since the scan.
	Audit store.AuditStore
	// Copies, when its Store is set, keeps the versions sessions load
	// readable while their files are edited in place (see
	// [VersionCopies]).
	Copies VersionCopies
}

// Manager opens, persists and refreshes agent sessions. Several handles
// (MCP connections) may be open on one session at once; they share its
// loaded skills and filesystem. A Manager is safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger
	mu   sync.Mutex
	live map[string]*state
	// tenantQuota is each tenant's workspace quota, shared by its
	// sessions in this process. Guarded by mu.
	tenantQuota map[string]*vfs.Quota
	// disco holds the discovery fragments of the current catalog snapshot.
	disco discoveries
}

// WorkspaceLimits bounds the /workspace trees: each session's, and all of a
// tenant's sessions' together. Zero fields take the default; negative ones
// mean unlimited.
type WorkspaceLimits struct {
	SessionBytes, SessionFiles int64
	TenantBytes, TenantFiles   int64
}

// The default workspace limits.
const (
	DefaultSessionWorkspaceBytes = 256 << 20
	DefaultSessionWorkspaceFiles = 10_000
	DefaultTenantWorkspaceBytes  = 4 << 30
	DefaultTenantWorkspaceFiles  = 200_000
)

func (l WorkspaceLimits) withDefaults() WorkspaceLimits {
	pick := func(v, d int64) int64 {
		switch {
		case v == 0:
			return d
		case v < 0:
			return 0 // vfs.Quota: 0 is unlimited
		}
		return v
	}
	return WorkspaceLimits{
		SessionBytes: pick(l.SessionBytes, DefaultSessionWorkspaceBytes), SessionFiles: pick(l.SessionFiles, DefaultSessionWorkspaceFiles),
		TenantBytes: pick(l.TenantBytes, DefaultTenantWorkspaceBytes), TenantFiles: pick(l.TenantFiles, DefaultTenantWorkspaceFiles),
	}
}

// workspaceQuotas returns the quotas of a session's workspace at prefix:
// its own, and its tenant's (shared with the tenant's other sessions).
func (m *Manager) workspaceQuotas(tenant, prefix string) ([]*vfs.Quota, error) {
	l := m.opts.WorkspaceLimits.withDefaults()
	own := &vfs.Quota{What: "this session's workspace", MaxBytes: l.SessionBytes, MaxFiles: l.SessionFiles, Store: m.opts.Workspace, Prefix: prefix}
	tp, err := bucket.TenantSessionsPrefix(tenant)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tq := m.tenantQuota[tenant]
	if tq == nil {
		tq = &vfs.Quota{What: "the workspaces of tenant " + tenant, MaxBytes: l.TenantBytes, MaxFiles: l.TenantFiles, Store: m.opts.Workspace, Prefix: tp}
		m.tenantQuota[tenant] = tq
	}
	return []*vfs.Quota{own, tq}, nil
}

// state is one attached session, shared by its open handles.
type state struct {
	id    string
	p     capability.Principal
	ready chan struct{} // closed when attach finished; err is then set
	err   error
	refs  int // guarded by Manager.mu

	// storeMu guards stored: whether the session is in the store (a new
	// one is stored with its first skill or workspace file).
	storeMu sync.Mutex
	stored  bool

	mu     sync.Mutex // serialises Load, Unload and refresh
	skills []*loaded  // load order; replaced, never mutated, under mu
	fs     *vfs.FS
}

// loaded is one loaded skill of a session.
type loaded struct {
	key, name, category string
	mount               string // directory name under /skills
	file                string // "SKILL.md" (or "skill.md") relative to prefix
	dir, digest         string // the registry version mounted
	at                  time.Time
	store               blob.Store
	prefix              string
	// pinned is set when store and prefix are the version's copy
	// (VersionCopies): the session keeps it until it loads the skill again.
	pinned bool
}

// NewManager returns a manager over opts. It fails when a required option
// is missing.
func NewManager(opts Options) (*Manager, error) {
	switch {
	case opts.Catalog == nil:
		return nil, errors.New("session: Options.Catalog is required")
	case opts.Versions == nil:
		return nil, errors.New("session: Options.Versions is required")
	case opts.Store == nil:
		return nil, errors.New("session: Options.Store is required")
	case opts.Workspace == nil:
		return nil, errors.New("session: Options.Workspace is required")
	}
	if opts.Source == nil {
		opts.Source = LocalSource{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Mounts = slices.Clone(opts.Mounts)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{opts: opts, log: log, live: map[string]*state{}, tenantQuota: map[string]*vfs.Quota{}}, nil
}

// Open attaches to the session id on behalf of p and returns a handle;
// close it when the connection ends. An empty id starts a new session with
// a fresh id ([Session.ID]). An id that is not in the store starts a new
// session with that id; an existing one is resumed: its loaded skills come
// back at the same /skills paths (those the principal may no longer use, or
// that left the registry, are dropped) and its workspace is where it was.
//
// Errors: [ErrInvalidPrincipal], [ErrInvalidSessionID],
// [ErrSessionUnavailable] when the session belongs to another principal,
// and storage errors.
func (m *Manager) Open(ctx context.Context, p capability.Principal, id string) (*Session, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if id == "" {
		id = NewID()
	} else if err := ValidID(id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	st, attached := m.live[id]
	if !attached {
		st = &state{id: id, p: p, ready: make(chan struct{})}
		m.live[id] = st
	}
	st.refs++
	m.mu.Unlock()
	if !attached {
		st.err = m.attach(ctx, st)
		close(st.ready)
	} else {
		select {
		case <-st.ready:
		case <-ctx.Done():
			m.release(st)
			return nil, ctx.Err()
		}
	}
	if st.err != nil {
		m.release(st)
		return nil, st.err
	}
	if st.p != p {
		m.release(st)
		return nil, fmt.Errorf("%w: %s belongs to another principal; start a new session", ErrSessionUnavailable, id)
	}
	return &Session{m: m, st: st}, nil
}

// PrincipalOf returns the principal that owns the stored session id.
// Errors: [ErrInvalidSessionID], store.ErrNotFound, storage errors.
func (m *Manager) PrincipalOf(ctx context.Context, id string) (capability.Principal, error) {
	if err := ValidID(id); err != nil {
		return capability.Principal{}, err
	}
	rec, err := m.opts.Store.Session(ctx, id)
	if err != nil {
		return capability.Principal{}, err
	}
	return recordPrincipal(rec), nil
}

func recordPrincipal(rec store.Session) capability.Principal {
	return capability.Principal{Tenant: rec.Tenant, Agent: rec.Agent, Tier: skillTier(rec.Tier)}
}

// release drops one handle; the last one detaches the session.
func (m *Manager) release(st *state) {
	m.mu.Lock()
	st.refs--
	last := st.refs == 0 && m.live[st.id] == st
	if last {
		delete(m.live, st.id)
	}
	m.mu.Unlock()
	if last && st.err == nil {
		m.detached(st)
	}
}

// attach loads or creates the stored session and builds its filesystem.
func (m *Manager) attach(ctx context.Context, st *state) error {
	rec, err := m.opts.Store.Session(ctx, st.id)
	if err == nil {
		rec, err = m.resume(ctx, st, rec)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		// A new session is stored only once it holds something: its
		// first loaded skill or workspace file (see storeOnce). A client
		// that connects, lists and leaves (every stateless HTTP request
		// does) leaves nothing behind.
		rec, err = store.Session{ID: st.id, Tenant: st.p.Tenant, Agent: st.p.Agent, Tier: string(st.p.Tier)}, nil
	case err == nil:
		st.stored = true
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", st.id, err)
	}
	if recordPrincipal(rec) != st.p {
		return fmt.Errorf("%w: %s belongs to another principal; start a new session", ErrSessionUnavailable, st.id)
	}
	ws, err := vfs.WorkspaceMount(m.opts.Workspace, st.p.Tenant, st.id)
	if err != nil {
		return fmt.Errorf("session %s: %w", st.id, err)
	}
	ws.Store = storingStore(ws.Store, func(ctx context.Context) error { return m.storeOnce(ctx, st) })
	if ws.Quotas, err = m.workspaceQuotas(st.p.Tenant, ws.Prefix); err != nil {
		return fmt.Errorf("session %s: %w", st.id, err)
	}
	fsOpts := m.opts.FS
	fsOpts.Mounts = append([]vfs.Mount{ws}, m.opts.Mounts...)
	fsOpts.Skills = nil
	fsOpts.Logger = m.log
	if st.fs, err = vfs.New(fsOpts); err != nil {
		return fmt.Errorf("session %s: %w", st.id, err)
	}
	snap, err := m.available(ctx, st.p.Tenant)
	if err != nil {
		return err
	}
	var skills []*loaded
	dropped := 0
	for _, ls := range rec.Skills {
		e, ok := snap.Lookup(st.p.Tier, ls.Key)
		if !ok {
			dropped++
			continue
		}
		l, err := m.mount(ctx, st.p, e, ls.Mount, ls.LoadedAt)
		if err != nil {
			return fmt.Errorf("session %s: resume %s: %w", st.id, ls.Key, err)
		}
		skills = append(skills, l)
	}
	if err := st.fs.SetSkills(skillMounts(skills)); err != nil {
		return fmt.Errorf("session %s: %w", st.id, err)
	}
	if dropped > 0 {
		if err := m.persist(ctx, st, skills); err != nil {
			return err
		}
	}
	st.skills = skills
	m.log.InfoContext(ctx, "session attached", "session", st.id, "principal", st.p.String(),
		"resumed", len(rec.Skills) > 0 || !rec.CreatedAt.IsZero(), "skills", len(skills), "dropped", dropped)
	return nil
}

// available returns the catalog snapshot of tenant: the skills its
// principals may use, by agent tier. It costs one read of the registry
// generation unless the registry changed; no session holds a copy of the
// catalog.
func (m *Manager) available(ctx context.Context, tenant string) (*registry.Snapshot, error) {
	var snap *registry.Snapshot
	var err error
	if tc, ok := m.opts.Catalog.(TenantCatalog); ok {
		snap, err = tc.TenantSnapshot(ctx, tenant)
	} else {
		snap, err = m.opts.Catalog.Snapshot(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("session: list skills: %w", err)
	}
	return snap, nil
}

// Catalog returns the catalog snapshot the sessions of tenant's principals
// cut their view from (see [Session.Catalog]); callers filter it by the
// principal's tier.
func (m *Manager) Catalog(ctx context.Context, tenant string) (*registry.Snapshot, error) {
	return m.available(ctx, tenant)
}

// SkillFiles resolves the current version of e (a skill of the catalog
// snapshot) and mounts its files for tenant as loading it would, without
// loading it into any session: the store and prefix hold exactly the
// version's recorded files. The MCP Skills extension serves skill files
// this way. The caller decides whether its principal may see e. Errors:
// [ErrSkillNotFound] when the version left the registry, storage errors.
func (m *Manager) SkillFiles(ctx context.Context, tenant string, e registry.Brief) (store.Version, blob.Store, string, error) {
	vs, err := m.opts.Versions.Versions(ctx, store.Filter{Dir: e.Dir})
	if err != nil {
		return store.Version{}, nil, "", fmt.Errorf("session: version of %s: %w", e.Key, err)
	}
	i := slices.IndexFunc(vs, func(v store.Version) bool { return v.Key == e.Key && v.Current })
	if i < 0 {
		return store.Version{}, nil, "", fmt.Errorf("%w: %q (its version left the registry)", ErrSkillNotFound, e.Key)
	}
	v := vs[i]
	st, prefix, err := m.opts.Source.Mount(ctx, tenant, v)
	if err != nil {
		return store.Version{}, nil, "", err
	}
	return v, st, prefix, nil
}

// mount resolves the current version of e and mounts its tree.
func (m *Manager) mount(ctx context.Context, p capability.Principal, e registry.Brief, mountName string, at time.Time) (*loaded, error) {
	v, st, prefix, err := m.SkillFiles(ctx, p.Tenant, e)
	if err != nil {
		return nil, err
	}
	pinned := false
	if _, local := st.(*tree); local {
		var cst blob.Store
		var cprefix string
		if cst, cprefix, pinned = m.pinnedCopy(ctx, v); pinned {
			// The version was copied when a session loaded it: served
			// as scanned, whatever its directory holds now.
			st, prefix = cst, cprefix
		}
	}
	if !pinned {
		if at.IsZero() { // a load, not a resumed session: the files are checked again
			if err := m.checkContent(ctx, p, v, st, prefix); err != nil {
				return nil, err
			}
		}
		st, prefix, pinned = m.pin(ctx, v, st, prefix)
	}
	if at.IsZero() {
		at = m.opts.Now()
	}
	return &loaded{
		key: v.Key, name: v.Name, category: v.Category, mount: mountName,
		file: path.Base(filepath.ToSlash(v.File)), dir: v.Dir, digest: v.Digest,
		at: at, store: st, prefix: prefix, pinned: pinned,
	}, nil
}

// persist records the loaded skills of a session, storing the session
// first if it is not stored yet.
func (m *Manager) persist(ctx context.Context, st *state, skills []*loaded) error {
	if err := m.storeOnce(ctx, st); err != nil {
		return err
	}
	out := make([]store.LoadedSkill, len(skills))
	for i, l := range skills {
		out[i] = store.LoadedSkill{Key: l.key, Mount: l.mount, LoadedAt: l.at}
	}
	if err := m.opts.Store.SetSessionSkills(ctx, st.id, out); err != nil {
		return fmt.Errorf("session %s: save loaded skills: %w", st.id, err)
	}
	return nil
}

// storeOnce stores the session st if it is not stored yet: before its
// first loaded skill is recorded or its first workspace file written. A
// session another process stored meanwhile is taken over when it is the
// same principal's, and refused ([ErrSessionUnavailable]) otherwise.
func (m *Manager) storeOnce(ctx context.Context, st *state) error {
	st.storeMu.Lock()
	defer st.storeMu.Unlock()
	if st.stored {
		return nil
	}
	rec := store.Session{ID: st.id, Tenant: st.p.Tenant, Agent: st.p.Agent, Tier: string(st.p.Tier)}
	err := m.opts.Store.CreateSession(ctx, rec)
	if errors.Is(err, store.ErrConflict) { // another process stored it meanwhile
		var got store.Session
		if got, err = m.opts.Store.Session(ctx, st.id); err == nil && recordPrincipal(got) != st.p {
			err = fmt.Errorf("%w: %s belongs to another principal; start a new session", ErrSessionUnavailable, st.id)
		}
	}
	if err != nil {
		return fmt.Errorf("session %s: store: %w", st.id, err)
	}
	st.stored = true
	m.log.InfoContext(ctx, "session stored", "session", st.id, "principal", st.p.String())
	return nil
}

// storingStore is a workspace store whose Put first calls stored (which
// stores the session); the rest is st's, its optional DirOpener included.
func storingStore(st blob.Store, stored func(context.Context) error) blob.Store {
	s := storing{Store: st, stored: stored}
	if d, ok := st.(blob.DirOpener); ok {
		return storingDirs{s, d}
	}
	return s
}

type storing struct {
	blob.Store
	stored func(context.Context) error
}

// Put implements [blob.Store].
func (s storing) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.stored(ctx); err != nil {
		return err
	}
	return s.Store.Put(ctx, key, r, size)
}

type storingDirs struct {
	storing
	blob.DirOpener
}

// Refresh re-resolves the loaded skills of every attached session after the
// registry changed: a skill the session's principal may no longer use (it
// left the registry, was disabled, or its invokable_by no longer includes
// the tier) is unloaded, and a skill whose version changed is mounted
// again. It returns the ids of the sessions whose loaded skills changed, and
// the errors met (each session is refreshed independently).
func (m *Manager) Refresh(ctx context.Context) ([]string, error) {
	m.mu.Lock()
	var sts []*state
	for _, st := range m.live {
		sts = append(sts, st)
	}
	m.mu.Unlock()
	var changed []string
	var errs []error
	for _, st := range sts {
		select {
		case <-st.ready:
		default:
			continue // still attaching: it reads the new registry anyway
		}
		if st.err != nil {
			continue
		}
		ok, err := m.refresh(ctx, st)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			changed = append(changed, st.id)
		}
	}
	slices.Sort(changed)
	return changed, errors.Join(errs...)
}

func (m *Manager) refresh(ctx context.Context, st *state) (bool, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	snap, err := m.available(ctx, st.p.Tenant)
	if err != nil {
		return false, err
	}
	next := make([]*loaded, 0, len(st.skills))
	changed, dropped := false, false
	for _, l := range st.skills {
		e, ok := snap.Lookup(st.p.Tier, l.key)
		switch {
		case !ok:
			changed, dropped = true, true
			m.log.InfoContext(ctx, "skill unloaded: no longer available", "session", st.id, "skill", l.key)
			continue
		case e.Dir == l.dir && e.Digest != l.digest && l.pinned:
			// A new version of the same skill: the session keeps the
			// copy of the one it loaded until it loads the skill again.
			next = append(next, l)
			continue
		case e.Dir != l.dir || e.Digest != l.digest:
			nl, err := m.mount(ctx, st.p, e, l.mount, l.at)
			if err != nil {
				return false, fmt.Errorf("session %s: remount %s: %w", st.id, l.key, err)
			}
			next = append(next, nl)
			changed = true
			continue
		}
		next = append(next, l)
	}
	if !changed {
		return false, nil
	}
	if err := st.fs.SetSkills(skillMounts(next)); err != nil {
		return false, fmt.Errorf("session %s: %w", st.id, err)
	}
	st.skills = next
	if dropped {
		if err := m.persist(ctx, st, next); err != nil {
			return true, err
		}
	}
	return true, nil
}

// Attached returns the ids of the sessions with open handles, sorted.
func (m *Manager) Attached() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.live))
	for id := range m.live {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func skillMounts(skills []*loaded) []vfs.SkillMount {
	out := make([]vfs.SkillMount, len(skills))
	for i, l := range skills {
		out[i] = vfs.SkillMount{Name: l.mount, Store: l.store, Prefix: l.prefix}
	}
	return out
}
