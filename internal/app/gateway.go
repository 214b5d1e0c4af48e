package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillgate/skillgate/audit"
	"github.com/skillgate/skillgate/blob"
	"github.com/skillgate/skillgate/blob/local"
	"github.com/skillgate/skillgate/blob/s3"
	"github.com/skillgate/skillgate/broker"
	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/discover"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/install"
	"github.com/skillgate/skillgate/library"
	"github.com/skillgate/skillgate/mirror"
	"github.com/skillgate/skillgate/registry"
	"github.com/skillgate/skillgate/session"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
	"github.com/skillgate/skillgate/vfs"
)

// Storage selects where loaded skills and workspaces are stored (the
// --skills-store, --s3-* and --mount flags of cmd, each defaulting to its
// environment variable); the S3 credentials come from the environment
// only, so they never show in a process listing.
type Storage struct {
	Kind     string // "local" or "s3"
	Endpoint string
	Bucket   string
	Region   string
	Prefix   string
	Mounts   []string // PATH=DIR, read-only
}

// sharedPrefix is where, with tenant libraries in the bucket, the skills
// every tenant may load are kept once (session.BlobSource.Shared), and the
// prefix of imported versions: no tenant id starts with "_".
const sharedPrefix = "_global/"

// bucket opens the S3 bucket the flags (or SKILLGATE_S3_*, or the
// configuration's s3 section) name.
func (a *App) bucket(sf *Storage, cfg *Config) (*s3.Store, error) {
	pick := func(flag, conf string) string {
		if flag != "" {
			return flag
		}
		return conf
	}
	return s3.New(s3.Config{
		Endpoint: pick(sf.Endpoint, cfg.S3.Endpoint), Bucket: pick(sf.Bucket, cfg.S3.Bucket),
		Region: pick(sf.Region, cfg.S3.Region), Prefix: pick(sf.Prefix, cfg.S3.Prefix),
		AccessKey: a.getenv("SKILLGATE_S3_ACCESS_KEY"), SecretKey: a.getenv("SKILLGATE_S3_SECRET_KEY"),
	})
}

// envStorage is the storage selection of a command without storage flags:
// the SKILLGATE_* variables alone.
func (a *App) envStorage() *Storage {
	return &Storage{
		Kind:     envOr(a.getenv("SKILLGATE_SKILLS_STORE"), "local"),
		Endpoint: a.getenv("SKILLGATE_S3_ENDPOINT"), Bucket: a.getenv("SKILLGATE_S3_BUCKET"),
		Region: a.getenv("SKILLGATE_S3_REGION"), Prefix: a.getenv("SKILLGATE_S3_PREFIX"),
	}
}

// blobSource is the session source of --skills-store s3: tenant library
// skills from their cache, the others from the mirror when it holds them,
// else uploaded on first load (once for all tenants when tenant libraries
// share the bucket).
func (a *App) blobSource(st blob.Store, cfg *Config, hardLinks []string, log *slog.Logger) *session.BlobSource {
	src := &session.BlobSource{Store: st, Logger: log, Mirror: mirror.DefaultPrefix,
		Local: session.LocalSource{HardLinkRoots: hardLinks, Verified: &session.Verified{}}}
	if cfg.TenantLibraries.Store != "" {
		src.Shared = sharedPrefix
	}
	return src
}

// ScanOptions are what a scan does besides walking the roots.
type ScanOptions struct {
	// Storage names the bucket; nil: the SKILLGATE_* variables.
	Storage *Storage
	// Mirror uploads the scanned roots' skills to the bucket, as
	// s3.mirror_roots in the configuration does.
	Mirror bool
}

// ScanResult is a scan's report with what the bucket added to it.
type ScanResult struct {
	*registry.ScanReport
	Libraries *library.Report `json:"libraries,omitempty"`
	Mirror    *mirror.Report  `json:"mirror,omitempty"`
}

// ScanAll syncs the tenant libraries (when configured), scans them with
// roots, and mirrors the result (when asked).
func (a *App) ScanAll(ctx context.Context, reg *registry.Registry,
	roots []discover.Root, cfg *Config, so ScanOptions, progress registry.Progress) (*ScanResult, error) {
	res := &ScanResult{}
	var st *s3.Store
	bucket := func() (*s3.Store, error) {
		if st != nil {
			return st, nil
		}
		sf := so.Storage
		if sf == nil {
			sf = a.envStorage()
		}
		var err error
		if st, err = a.bucket(sf, cfg); err != nil {
			return nil, Usagef("the bucket: %v (set --s3-endpoint and --s3-bucket, SKILLGATE_S3_*, or s3: in the configuration; credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)", err)
		}
		return st, nil
	}
	switch cfg.TenantLibraries.Store {
	case "":
	case "s3":
		b, err := bucket()
		if err != nil {
			return nil, err
		}
		lib, err := library.New(library.Options{Store: b, Dir: filepath.Join(a.Data(), "libraries"),
			Tenants: cfg.TenantLibraries.Tenants, MaxTenants: cfg.TenantLibraries.MaxTenants,
			MaxObjects: cfg.TenantLibraries.MaxObjects, Logger: a.log})
		if err != nil {
			return nil, Usagef("tenant_libraries: %v", err)
		}
		rep, troots, err := lib.Sync(ctx)
		if err != nil {
			return nil, err
		}
		res.Libraries = rep
		roots = append(roots, troots...)
	default:
		return nil, Usagef("tenant_libraries.store must be s3 (or left out), not %q", cfg.TenantLibraries.Store)
	}
	rep, err := reg.Scan(ctx, roots, progress)
	if err != nil {
		return nil, err
	}
	res.ScanReport = rep
	if so.Mirror || cfg.S3.MirrorRoots {
		b, err := bucket()
		if err != nil {
			return nil, err
		}
		vs, err := reg.Versions(ctx, store.Filter{})
		if err != nil {
			return nil, err
		}
		if res.Mirror, err = mirror.Mirror(ctx, b, mirror.DefaultPrefix, vs, a.log); err != nil {
			return nil, fmt.Errorf("mirror: %w", err)
		}
	}
	return res, nil
}

// Runtime is the wiring shared by mcp, serve and disclose.
type Runtime struct {
	DB       store.DB
	Registry *registry.Registry
	Sessions *session.Manager
	Gateway  *gateway.Gateway
	Limits   discover.Limits
	Log      *slog.Logger
	// Bucket is the object storage of skill trees and workspaces when it
	// is S3 (--skills-store s3), nil otherwise: readiness checks it.
	Bucket blob.Store
	// Storage is where skill trees are kept (the --skills-store flags).
	Storage *Storage
	closers []func() error

	// The capability path: installed skills' tools, decided by policy,
	// forwarded upstream, audited.
	Installs *install.Service
	Caps     *broker.Runtime
	// observe and changed, when set, see the capability path's audit
	// records and applied changes (serve's metrics).
	observe func(audit.Record)
	changed func(string)
}

// Observers are what OpenRuntime's caller watches of the capability path.
type Observers struct {
	// Observe sees every audit record of the capability path.
	Observe func(audit.Record)
	// Changed sees every applied change.
	Changed func(string)
}

// Close releases what OpenRuntime opened, last opened first.
func (d *Runtime) Close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		_ = d.closers[i]()
	}
}

// OpenRuntime opens the registry, the session storage, the capability
// runtime and the agent gateway; Close releases them.
func (a *App) OpenRuntime(ctx context.Context, sf *Storage, obs ...Observers) (*Runtime, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	d := &Runtime{Limits: Limits(cfg, 0, 0), Log: a.log, Storage: sf}
	for _, o := range obs {
		d.observe, d.changed = o.Observe, o.Changed
	}
	ok := false
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	d.DB, err = a.OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	d.closers = append(d.closers, d.DB.Close)
	sigs, err := a.signatureChecker()
	if err != nil {
		return nil, err
	}
	d.Registry = registry.New(d.DB, registry.Options{Limits: d.Limits, Logger: d.Log, Signatures: sigs})
	// The catalog snapshot is built now, not by the first agent to connect.
	if _, err := d.Registry.Snapshot(ctx); err != nil {
		return nil, err
	}

	src, ws, err := a.openSkillStorage(sf, cfg, d.Log, &d.closers)
	if err != nil {
		return nil, err
	}
	if sf.Kind == "s3" {
		d.Bucket = ws
	}
	idle, err := cfg.IdleExpiry()
	if err != nil {
		return nil, err
	}

	var mounts []vfs.Mount
	for _, spec := range sf.Mounts {
		path, dir, found := strings.Cut(spec, "=")
		if !found || path == "" || dir == "" {
			return nil, Usagef("--mount %q: use PATH=DIR, e.g. /ticket=./ticket", spec)
		}
		// A mount is read-only: it must exist, and nothing is written to it
		// (no directory created, no temporary files).
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			what := "is not a directory"
			if errors.Is(err, fs.ErrNotExist) {
				what = "does not exist"
			} else if err != nil {
				what = "cannot be read: " + err.Error()
			}
			return nil, Usagef("--mount %s: %s %s; a mount lends agents an existing directory to read: create it or fix the path", spec, dir, what)
		}
		st, err := local.Open(dir, &local.Options{ReadOnly: true})
		if err != nil {
			return nil, fmt.Errorf("--mount %s: %w", spec, err)
		}
		d.closers = append(d.closers, st.Close)
		mounts = append(mounts, vfs.Mount{Path: path, Store: st, ReadOnly: true})
	}

	d.Sessions, err = session.NewManager(session.Options{
		Catalog: d.Registry, Versions: d.DB, Store: d.DB, Source: src, Workspace: ws, Mounts: mounts, Logger: d.Log, Audit: d.DB,
		WorkspaceLimits: session.WorkspaceLimits{
			SessionBytes: cfg.Workspace.MaxBytes, SessionFiles: cfg.Workspace.MaxFiles,
			TenantBytes: cfg.Workspace.TenantMaxBytes, TenantFiles: cfg.Workspace.TenantMaxFiles,
		},
		IdleExpiry: idle,
	})
	if err != nil {
		return nil, err
	}
	if err := a.openCapabilities(ctx, d); err != nil {
		return nil, err
	}
	impl := gateway.DefaultImplementation
	impl.Version = a.opts.Version
	hostPaths, err := a.hostPaths(ctx, d.Registry, sf)
	if err != nil {
		return nil, err
	}
	d.Gateway, err = gateway.New(gateway.Options{Sessions: d.Sessions, Catalog: d.Registry, Implementation: &impl, Logger: d.Log, Capabilities: d.Caps.Broker, Published: d.Caps.Broker, HostPaths: hostPaths})
	if err != nil {
		return nil, err
	}
	// A bad mount path shows up only when a session builds its filesystem;
	// check it now, with a throwaway filesystem.
	if _, err := vfs.New(vfs.Options{Mounts: mounts}); err != nil {
		return nil, Usagef("--mount: %v", err)
	}
	ok = true
	return d, nil
}

// openSkillStorage opens where sessions' skill trees and workspaces live,
// as the storage flags say; what it opens is closed by closers.
func (a *App) openSkillStorage(sf *Storage, cfg *Config, log *slog.Logger, closers *[]func() error) (session.Source, blob.Store, error) {
	switch sf.Kind {
	case "local":
		// Workspaces hold what agents wrote: the owner's only, like the
		// rest of the data directory.
		st, err := local.Open(filepath.Join(a.Data(), "workspaces"), &local.Options{FileMode: 0o600, DirMode: 0o700})
		if err != nil {
			return nil, nil, err
		}
		*closers = append(*closers, st.Close)
		hl, err := a.hardLinkRoots(cfg)
		if err != nil {
			return nil, nil, err
		}
		return session.LocalSource{HardLinkRoots: hl, Verified: &session.Verified{}}, st, nil
	case "s3":
		st, err := a.bucket(sf, cfg)
		if err != nil {
			return nil, nil, Usagef("--skills-store s3: %v (credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)", err)
		}
		hl, err := a.hardLinkRoots(cfg)
		if err != nil {
			return nil, nil, err
		}
		return a.blobSource(st, cfg, hl, log), st, nil
	}
	return nil, nil, Usagef("--skills-store must be local or s3, not %q", sf.Kind)
}

// openCapabilities opens the capability runtime: the install service
// (whose enabled skills the broker serves, and which records pin drift),
// the policy engine (policies from DATA/policies and the store, grants),
// the credential store, the upstream connection pool and the audit writer.
func (a *App) openCapabilities(ctx context.Context, d *Runtime) error {
	var err error
	d.Installs, err = a.NewInstallService(d.DB, nil, d.Storage)
	if err != nil {
		return err
	}
	if _, err := d.Installs.Recover(ctx); err != nil {
		return err
	}
	cfg, err := a.Config()
	if err != nil {
		return err
	}
	execs, err := ExecutorOptions(cfg)
	if err != nil {
		return err
	}
	// Executors and backends applied promote_provider changes registered.
	execs.Registered = d.DB.Registrations
	// ${NAME} in mcp.json resolves per principal: agent → tenant (the
	// credential store) → skillgate's environment.
	creds, err := a.OpenCredentials(ctx, d.DB)
	if err != nil {
		return err
	}
	_, replicated := d.DB.(replicaStore)
	sb, err := a.SandboxRuntime(cfg, d.Log)
	if err != nil {
		return err
	}
	d.Caps, err = broker.OpenRuntime(ctx, broker.RuntimeOptions{
		Sandbox:   sb,
		Executors: execs,
		Installs:  d.Installs, Store: d.DB, PolicyDir: a.PolicyDir(), FirstParty: d.Registry,
		CredentialStore: creds,
		// A first_party capability is dormant for a principal while a
		// credential its server references does not resolve for it.
		Configured:    broker.CredentialsOf(creds),
		ClientVersion: a.opts.Version, Logger: d.Log,
		Observe: d.observe, Changed: d.changed,
		// Replicas may be killed at any time: an agent is told of a call
		// only once its audit record is committed.
		DurableAudit: replicated,
	})
	if err != nil {
		return err
	}
	d.closers = append(d.closers, d.Caps.Close)
	return nil
}

// StartWatch runs the capability runtime's watch in the background; the
// returned stop ends it and waits, so that nothing uses the store after
// close.
func (d *Runtime) StartWatch(ctx context.Context, every time.Duration) (stop func()) {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Caps.Watch(wctx, every, d.Gateway)
	}()
	return func() { cancel(); <-done }
}

// RescanRoots returns the roots a running server rescans: --root flags,
// else the roots the registry was last scanned with (so that a server never
// forgets skills a `skillgate scan --root` added), else the configured or
// conventional roots.
func (a *App) RescanRoots(ctx context.Context, reg *registry.Registry, flagRoots []string, flagTrust string) ([]discover.Root, error) {
	if len(flagRoots) == 0 {
		recorded, err := reg.Roots(ctx)
		if err != nil {
			return nil, err
		}
		var roots []discover.Root
		for _, r := range recorded {
			if r.Scope == registry.ScopeImported || r.Scope == discover.ScopeTenant.String() {
				// The managed skills of installs, and tenant libraries
				// (synced from the bucket by every scan): not roots to
				// scan as such.
				continue
			}
			sc, err := discover.ParseScope(r.Scope)
			if err != nil {
				return nil, fmt.Errorf("recorded root %s: %w", r.Path, err)
			}
			trust := capability.Trust(r.Trust)
			if !trust.Valid() {
				trust = capability.TrustImported
			}
			roots = append(roots, discover.Root{Path: r.Path, Scope: sc, Trust: trust})
		}
		if len(roots) > 0 {
			return roots, nil
		}
	}
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	return a.Roots(flagRoots, flagTrust, cfg)
}

// hostPaths are the host directories agents must never see named: the data
// directory (with the sandbox state directories in it), the scanned roots
// and the mounted directories.
func (a *App) hostPaths(ctx context.Context, reg *registry.Registry, sf *Storage) ([]string, error) {
	paths := []string{a.Data()}
	roots, err := reg.Roots(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range roots {
		paths = append(paths, r.Path)
	}
	for _, spec := range sf.Mounts {
		if _, dir, ok := strings.Cut(spec, "="); ok {
			paths = append(paths, dir)
		}
	}
	return paths, nil
}

// MaintainSessions runs the session manager's background pass (heartbeat
// of attached sessions and, while prune reports true, pruning of expired
// ones) while the
// command runs; the returned stop ends it and waits.
func (d *Runtime) MaintainSessions(ctx context.Context, prune func() bool) (stop func()) {
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Sessions.Maintain(mctx, 0, prune)
	}()
	return func() { cancel(); <-done }
}

// OpenSessions opens the session manager of the data directory for the
// operator commands; close releases it.
func (a *App) OpenSessions(ctx context.Context, sf *Storage) (mgr *session.Manager, idle time.Duration, close func(), err error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, 0, nil, err
	}
	if idle, err = cfg.IdleExpiry(); err != nil {
		return nil, 0, nil, err
	}
	var closers []func() error
	close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	closers = append(closers, db.Close)
	log := a.log
	src, ws, err := a.openSkillStorage(sf, cfg, log, &closers)
	if err != nil {
		close()
		return nil, 0, nil, err
	}
	mgr, err = session.NewManager(session.Options{
		Catalog: registry.New(db, registry.Options{Logger: log}), Versions: db, Store: db,
		Source: src, Workspace: ws, IdleExpiry: idle, Logger: log,
	})
	if err != nil {
		close()
		return nil, 0, nil, err
	}
	return mgr, idle, close, nil
}

// envOr is v, or def when v is empty.
func envOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// DiscloseRequest says whose progressive disclosure [App.Disclose] renders.
type DiscloseRequest struct {
	// Tier is the agent tier of the discovery fragment; with Session, it
	// must be the session's (or empty).
	Tier skill.AgentTier
	// Tenant adds that tenant's library to the discovery fragment.
	Tenant string
	// Session renders that session's view instead.
	Session string
	session.DiscloseOptions
}

// Disclose renders what an agent sees of skills (the MCP prompt 'skills'
// and the resource skillgate://disclosure): without a session, the
// discovery fragment for an agent of the tier; with one, that session's
// view. A bad tenant, session id or tier is a usage error; an unknown
// session is an error naming the data directory.
func (a *App) Disclose(ctx context.Context, sf *Storage, req DiscloseRequest) (string, error) {
	d, err := a.OpenRuntime(ctx, sf)
	if err != nil {
		return "", err
	}
	defer d.Close()
	if req.Session == "" {
		var cat session.Catalog = d.Registry
		if req.Tenant != "" {
			if err := capability.CheckID("tenant", req.Tenant); err != nil {
				return "", Usagef("--tenant: %v", err)
			}
			cat = session.ForTenant(d.Registry, req.Tenant)
		}
		return session.Discovery(ctx, cat, req.Tier, req.DiscloseOptions)
	}
	p, err := d.Sessions.PrincipalOf(ctx, req.Session)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("no session %q in %s", req.Session, a.Data())
	case errors.Is(err, session.ErrInvalidSessionID):
		return "", Usagef("--session: %v", err)
	case err != nil:
		return "", err
	}
	if req.Tier != "" && req.Tier != p.Tier {
		return "", Usagef("--tier %s does not match session %s, whose agent is %s", req.Tier, req.Session, p.Tier)
	}
	s, err := d.Sessions.Open(ctx, p, req.Session)
	if err != nil {
		return "", err
	}
	defer s.Close()
	return s.Disclose(ctx, req.DiscloseOptions)
}
