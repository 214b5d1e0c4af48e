package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// storageFlags select where loaded skills and workspaces are stored. Each
// flag defaults to its environment variable; the S3 credentials come from
// the environment only, so they never show in a process listing.
type storageFlags struct {
	kind     string // "local" or "s3"
	endpoint string
	bucket   string
	region   string
	prefix   string
	mounts   []string // PATH=DIR, read-only
}

func (m *Main) addStorageFlags(c *cobra.Command, sf *storageFlags) {
	f := c.Flags()
	f.StringVar(&sf.kind, "skills-store", envOr(m.Getenv("SKILLGATE_SKILLS_STORE"), "local"),
		"where agents' skill trees and workspaces live: local (skills from their scanned directories, workspaces in DATA/workspaces) or s3 ($SKILLGATE_SKILLS_STORE)")
	m.addS3Flags(c, sf)
	f.StringArrayVar(&sf.mounts, "mount", nil, "extra read-only mount for every session, PATH=DIR (e.g. /ticket=./ticket); DIR must exist and is never written to; repeatable")
}

// addS3Flags adds the flags that name the bucket (see docs/storage.md).
func (m *Main) addS3Flags(c *cobra.Command, sf *storageFlags) {
	f := c.Flags()
	f.StringVar(&sf.endpoint, "s3-endpoint", m.Getenv("SKILLGATE_S3_ENDPOINT"), "S3 endpoint URL, e.g. http://127.0.0.1:7070 ($SKILLGATE_S3_ENDPOINT)")
	f.StringVar(&sf.bucket, "s3-bucket", m.Getenv("SKILLGATE_S3_BUCKET"), "S3 bucket ($SKILLGATE_S3_BUCKET)")
	f.StringVar(&sf.region, "s3-region", m.Getenv("SKILLGATE_S3_REGION"), "S3 region (default us-east-1; $SKILLGATE_S3_REGION)")
	f.StringVar(&sf.prefix, "s3-prefix", m.Getenv("SKILLGATE_S3_PREFIX"), "key prefix inside the bucket, ending in / ($SKILLGATE_S3_PREFIX)")
}

func envOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// principalFlags name the principal of a stdio session.
type principalFlags struct {
	agent, tier, tenant, session string
}

func (m *Main) addPrincipalFlags(c *cobra.Command, pf *principalFlags) {
	f := c.Flags()
	f.StringVar(&pf.agent, "agent", m.Getenv("SKILLGATE_AGENT"), "agent id ($SKILLGATE_AGENT)")
	f.StringVar(&pf.tier, "tier", m.Getenv("SKILLGATE_TIER"), "agent tier, T0–T4 ($SKILLGATE_TIER)")
	f.StringVar(&pf.tenant, "tenant", envOr(m.Getenv("SKILLGATE_TENANT"), "default"), "tenant ($SKILLGATE_TENANT)")
	f.StringVar(&pf.session, "session", m.Getenv("SKILLGATE_SESSION"), "session id to resume or start; empty starts a new one ($SKILLGATE_SESSION)")
}

// tierFlag reads an agent tier flag (--tier, --parent-tier): a missing one
// is said to be required, a wrong one names the tiers.
func tierFlag(flag, value string) (skill.AgentTier, error) {
	if value == "" {
		return "", usageErr("%s is required (T0–T4)", flag)
	}
	t, err := skill.ParseAgentTier(value)
	if err != nil {
		return "", usageErr("%s: %v", flag, err)
	}
	return t, nil
}

// principal validates the principal flags; problems are usage errors.
func (pf *principalFlags) principal() (capability.Principal, error) {
	t, err := skill.ParseAgentTier(pf.tier)
	if err != nil {
		if pf.tier == "" {
			return capability.Principal{}, usageErr("--tier is required (or SKILLGATE_TIER): the agent's tier, T0–T4")
		}
		return capability.Principal{}, usageErr("--tier: %v", err)
	}
	p := capability.Principal{Tenant: pf.tenant, Agent: pf.agent, Tier: t}
	if err := p.Validate(); err != nil {
		return capability.Principal{}, usageErr("%v", err)
	}
	if pf.session != "" {
		if err := session.ValidID(pf.session); err != nil {
			return capability.Principal{}, usageErr("--session: %v", err)
		}
	}
	return p, nil
}

// gatewayDeps is the wiring shared by mcp, serve and disclose.
type gatewayDeps struct {
	db       store.DB
	reg      *registry.Registry
	sessions *session.Manager
	gw       *mcpserver.Gateway
	limits   discover.Limits
	log      *slog.Logger
	// bucket is the object storage of skill trees and workspaces when it
	// is S3 (--skills-store s3), nil otherwise: readiness checks it.
	bucket blob.Store
	// storage is where skill trees are kept (the --skills-store flags).
	storage *storageFlags
	closers []func() error

	// The capability path: installed skills' tools, decided by policy,
	// forwarded upstream, audited.
	installs *install.Service
	caps     *broker.Runtime
	// observe and changed, when set, see the capability path's audit
	// records and applied changes (serve's metrics).
	observe func(audit.Record)
	changed func(string)
}

// observers are what openGateway's caller watches of the capability path.
type observers struct {
	observe func(audit.Record)
	changed func(string)
}

func (d *gatewayDeps) close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		_ = d.closers[i]()
	}
}

// openGateway opens the registry, the session storage and the gateway.
func (m *Main) openGateway(ctx context.Context, sf *storageFlags, obs ...observers) (*gatewayDeps, error) {
	cfg, err := m.config()
	if err != nil {
		return nil, err
	}
	d := &gatewayDeps{limits: m.limits(cfg, 0, 0), log: m.logger(), storage: sf}
	for _, o := range obs {
		d.observe, d.changed = o.observe, o.changed
	}
	ok := false
	defer func() {
		if !ok {
			d.close()
		}
	}()
	d.db, err = m.openStore(ctx)
	if err != nil {
		return nil, err
	}
	d.closers = append(d.closers, d.db.Close)
	sigs, err := m.signatureChecker()
	if err != nil {
		return nil, err
	}
	d.reg = registry.New(d.db, registry.Options{Limits: d.limits, Logger: d.log, Signatures: sigs})
	// The catalog snapshot is built now, not by the first agent to connect.
	if _, err := d.reg.Snapshot(ctx); err != nil {
		return nil, err
	}

	src, ws, err := m.openSkillStorage(sf, cfg, d.log, &d.closers)
	if err != nil {
		return nil, err
	}
	if sf.kind == "s3" {
		d.bucket = ws
	}
	idle, err := cfg.idleExpiry()
	if err != nil {
		return nil, err
	}

	var mounts []vfs.Mount
	for _, spec := range sf.mounts {
		path, dir, found := strings.Cut(spec, "=")
		if !found || path == "" || dir == "" {
			return nil, usageErr("--mount %q: use PATH=DIR, e.g. /ticket=./ticket", spec)
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
			return nil, usageErr("--mount %s: %s %s; a mount lends agents an existing directory to read: create it or fix the path", spec, dir, what)
		}
		st, err := local.Open(dir, &local.Options{ReadOnly: true})
		if err != nil {
			return nil, fmt.Errorf("--mount %s: %w", spec, err)
		}
		d.closers = append(d.closers, st.Close)
		mounts = append(mounts, vfs.Mount{Path: path, Store: st, ReadOnly: true})
	}

	d.sessions, err = session.NewManager(session.Options{
		Catalog: d.reg, Versions: d.db, Store: d.db, Source: src, Workspace: ws, Mounts: mounts, Logger: d.log, Audit: d.db,
		WorkspaceLimits: session.WorkspaceLimits{
			SessionBytes: cfg.Workspace.MaxBytes, SessionFiles: cfg.Workspace.MaxFiles,
			TenantBytes: cfg.Workspace.TenantMaxBytes, TenantFiles: cfg.Workspace.TenantMaxFiles,
		},
		IdleExpiry: idle,
	})
	if err != nil {
		return nil, err
	}
	if err := m.openCapabilities(ctx, d); err != nil {
		return nil, err
	}
	impl := mcpserver.DefaultImplementation
	impl.Version = version
	hostPaths, err := m.hostPaths(ctx, d.reg, sf)
	if err != nil {
		return nil, err
	}
	d.gw, err = mcpserver.New(mcpserver.Options{Sessions: d.sessions, Catalog: d.reg, Implementation: &impl, Logger: d.log, Capabilities: d.caps.Broker, Published: d.caps.Broker, HostPaths: hostPaths})
	if err != nil {
		return nil, err
	}
	// A bad mount path shows up only when a session builds its filesystem;
	// check it now, with a throwaway filesystem.
	if _, err := vfs.New(vfs.Options{Mounts: mounts}); err != nil {
		return nil, usageErr("--mount: %v", err)
	}
	ok = true
	return d, nil
}

// openSkillStorage opens where sessions' skill trees and workspaces live,
// as the storage flags say; what it opens is closed by closers.
func (m *Main) openSkillStorage(sf *storageFlags, cfg *Config, log *slog.Logger, closers *[]func() error) (session.Source, blob.Store, error) {
	switch sf.kind {
	case "local":
		// Workspaces hold what agents wrote: the owner's only, like the
		// rest of the data directory.
		st, err := local.Open(filepath.Join(m.data(), "workspaces"), &local.Options{FileMode: 0o600, DirMode: 0o700})
		if err != nil {
			return nil, nil, err
		}
		*closers = append(*closers, st.Close)
		hl, err := m.hardLinkRoots(cfg)
		if err != nil {
			return nil, nil, err
		}
		return session.LocalSource{HardLinkRoots: hl, Verified: &session.Verified{}}, st, nil
	case "s3":
		st, err := m.bucket(sf, cfg)
		if err != nil {
			return nil, nil, usageErr("--skills-store s3: %v (credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)", err)
		}
		hl, err := m.hardLinkRoots(cfg)
		if err != nil {
			return nil, nil, err
		}
		return m.blobSource(st, cfg, hl, log), st, nil
	}
	return nil, nil, usageErr("--skills-store must be local or s3, not %q", sf.kind)
}

// openCapabilities opens the capability runtime: the install service
// (whose enabled skills the broker serves, and which records pin drift),
// the policy engine (policies from DATA/policies and the store, grants),
// the credential store, the upstream connection pool and the audit writer.
func (m *Main) openCapabilities(ctx context.Context, d *gatewayDeps) error {
	var err error
	d.installs, err = m.newInstallService(d.db, nil, d.storage)
	if err != nil {
		return err
	}
	if _, err := d.installs.Recover(ctx); err != nil {
		return err
	}
	cfg, err := m.config()
	if err != nil {
		return err
	}
	execs, err := executorOptions(cfg)
	if err != nil {
		return err
	}
	// Executors and backends applied promote_provider changes registered.
	execs.Registered = d.db.Registrations
	// ${NAME} in mcp.json resolves per principal: agent → tenant (the
	// credential store) → skillgate's environment.
	creds, err := m.openCredentials(ctx, d.db)
	if err != nil {
		return err
	}
	_, replicated := d.db.(replicaStore)
	sb, err := m.sandboxRuntime(cfg, d.log)
	if err != nil {
		return err
	}
	d.caps, err = broker.OpenRuntime(ctx, broker.RuntimeOptions{
		Sandbox:   sb,
		Executors: execs,
		Installs:  d.installs, Store: d.db, PolicyDir: m.policyDir(), FirstParty: d.reg,
		CredentialStore: creds,
		// A first_party capability is dormant for a principal while a
		// credential its server references does not resolve for it.
		Configured:    broker.CredentialsOf(creds),
		ClientVersion: version, Logger: d.log,
		Observe: d.observe, Changed: d.changed,
		// Replicas may be killed at any time: an agent is told of a call
		// only once its audit record is committed.
		DurableAudit: replicated,
	})
	if err != nil {
		return err
	}
	d.closers = append(d.closers, d.caps.Close)
	return nil
}

// startWatch runs the capability runtime's watch in the background; the
// returned stop ends it and waits, so that nothing uses the store after
// close.
func (d *gatewayDeps) startWatch(ctx context.Context, every time.Duration) (stop func()) {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.caps.Watch(wctx, every, d.gw)
	}()
	return func() { cancel(); <-done }
}

// rescanRoots returns the roots a running server rescans: --root flags,
// else the roots the registry was last scanned with (so that a server never
// forgets skills a `skillgate scan --root` added), else the configured or
// conventional roots.
func (m *Main) rescanRoots(ctx context.Context, reg *registry.Registry, flagRoots []string, flagTrust string) ([]discover.Root, error) {
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
	cfg, err := m.config()
	if err != nil {
		return nil, err
	}
	return m.roots(flagRoots, flagTrust, cfg)
}

// hostPaths are the host directories agents must never see named: the data
// directory (with the sandbox state directories in it), the scanned roots
// and the mounted directories.
func (m *Main) hostPaths(ctx context.Context, reg *registry.Registry, sf *storageFlags) ([]string, error) {
	paths := []string{m.data()}
	roots, err := reg.Roots(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range roots {
		paths = append(paths, r.Path)
	}
	for _, spec := range sf.mounts {
		if _, dir, ok := strings.Cut(spec, "="); ok {
			paths = append(paths, dir)
		}
	}
	return paths, nil
}
