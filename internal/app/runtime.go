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
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/telemetry"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// Runtime is the wiring shared by mcp, serve and disclose.
type Runtime struct {
	DB       store.DB
	Registry *registry.Registry
	Sessions *session.Manager
	Gateway  *mcpserver.Gateway
	Limits   discover.Limits
	Log      *slog.Logger
	// Bucket is the object storage of skill trees and workspaces when it
	// is S3 (--skills-store s3), nil otherwise: readiness checks it.
	Bucket blob.Store
	// Storage is where skill trees are kept (the --skills-store flags).
	Storage *Storage
	// Tracer exports traces when the OTEL_* environment configures an
	// endpoint; nil otherwise (package telemetry). Close flushes it.
	Tracer  *telemetry.Tracer
	closers []func() error

	// The capability path: installed skills' tools, decided by policy,
	// forwarded upstream, audited.
	Installs *install.Service
	Caps     *broker.Runtime
	// Credentials is the credential store: ${NAME} values and the
	// connections to remote servers.
	Credentials *credential.Store
	// refresher refreshes connections' grants once serve started it
	// (startConnections); nil before.
	refresher atomic.Pointer[connection.Refresher]
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

// traceFlushTimeout bounds the export of the last spans at exit.
const traceFlushTimeout = 5 * time.Second

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
	// Opened first, so that Close flushes it last: the spans of calls
	// that end while the rest closes are exported too.
	if d.Tracer, err = telemetry.Open(ctx, telemetry.Options{Getenv: a.getenv, ServiceVersion: a.opts.Version, Logger: a.log}); err != nil {
		return nil, Usagef("tracing: %v", err)
	}
	if d.Tracer.Enabled() {
		d.closers = append(d.closers, func() error {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), traceFlushTimeout)
			defer cancel()
			return d.Tracer.Shutdown(sctx)
		})
	}
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
	idle, err := cfg.idleExpiry()
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
		Copies:     session.VersionCopies{Store: ws, Prefix: bucket.DefaultLoadedPrefix},
	})
	if err != nil {
		return nil, err
	}
	if err := a.openCapabilities(ctx, d); err != nil {
		return nil, err
	}
	impl := mcpserver.DefaultImplementation
	impl.Version = a.opts.Version
	hostPaths, err := a.hostPaths(ctx, d.Registry, sf)
	if err != nil {
		return nil, err
	}
	d.Gateway, err = mcpserver.New(mcpserver.Options{Sessions: d.Sessions, Catalog: d.Registry, Implementation: &impl, Logger: d.Log, Capabilities: d.Caps.Broker, Published: d.Caps.Broker, HostPaths: hostPaths,
		Tracer: d.Tracer})
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
	d.Installs, err = a.newInstallService(d.DB, nil, nil, d.Storage)
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
	execs, err := executorOptions(cfg, a.executorCatalog())
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
	d.Credentials = creds
	_, replicated := d.DB.(replicaStore)
	sb, err := a.sandboxRuntime(cfg, d.Log)
	if err != nil {
		return err
	}
	d.Caps, err = broker.OpenRuntime(ctx, broker.RuntimeOptions{
		Sandbox:   sb,
		Executors: execs,
		Installs:  d.Installs, Store: d.DB, PolicyDir: a.PolicyDir(), FirstParty: d.Registry,
		CredentialStore: creds,
		Unauthorized:    d.refreshAfter401,
		// Operator executor catalogs, reloaded when a file changes.
		CatalogDir: a.ExecutorCatalogDir(),
		// A first_party capability is dormant for a principal while a
		// credential its server references does not resolve for it.
		Configured:    broker.CredentialsOf(creds),
		ClientVersion: a.opts.Version, Logger: d.Log,
		Observe: d.observe, Changed: d.changed,
		// Replicas may be killed at any time: an agent is told of a call
		// only once its audit record is committed.
		DurableAudit: replicated,
		Tracer:       d.Tracer,
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

// refreshAfter401 is the capability path's answer to a remote server
// refusing who's call with 401: who's connection is refreshed (unless its
// token was replaced meanwhile), and the call retried when there is a new
// token. A grant whose expiry the server never said is refreshed only so.
func (d *Runtime) refreshAfter401(ctx context.Context, who capability.Principal, decl mcpclient.ServerDecl, account, token string) bool {
	r := d.refresher.Load()
	provider, ok := credential.ProviderOf(decl.ID)
	if r == nil || !ok {
		return false
	}
	info, err := d.Credentials.ResolveConnection(who, provider, account)
	if err != nil {
		return false
	}
	if _, err := r.Refresh(ctx, info.ConnectionKey, token); err != nil {
		d.Log.Warn("refreshing a connection after the server refused its token", "connection", info.ConnectionKey.String(), "err", err)
		return false
	}
	return true
}
