package broker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/telemetry"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/launch"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// Installs is what the capability runtime needs of the install service
// (*install.Service implements it): the enabled skills, a generation that
// moves with every install change, and a place to record pin drift.
type Installs interface {
	EnabledSource
	// Generation increases with every committed install change.
	Generation(ctx context.Context) (int64, error)
	// RecordDrift blocks the capabilities that drift touched until a
	// human re-approves them.
	RecordDrift(ctx context.Context, key, serverID string, d capability.Drift, actor string) error
}

// SkillDriftRecorder records drift of the skills installed skills'
// servers publish, found while relaying them: each is blocked until a
// human re-approves it. *install.Service implements it; an [Installs]
// that does too gets the runtime's reports.
type SkillDriftRecorder interface {
	RecordSkillDrift(ctx context.Context, key, serverID string, d []manifest.SkillDrift, actor string) error
}

// MissingRestorer is an [Installs] that can bring back the files of
// approved versions another replica approved while this process ran
// (from the bucket); *install.Service implements it. The watch calls it
// before it reloads the installed skills.
type MissingRestorer interface {
	RestoreMissing(ctx context.Context) ([]string, error)
}

// RuntimeStore is the storage the capability runtime keeps policies,
// grants, rate-limit buckets and audit records in; every store.DB
// (store/sqlite, store/postgres) implements it.
type RuntimeStore interface {
	policy.Store
	policy.Buckets
	store.AuditStore
}

// Notifier is told what the runtime's watch finds; *mcpserver.Gateway
// implements it.
type Notifier interface {
	// SyncRegistry tells agents of a registry change made elsewhere (a
	// scan, an enable) and reports whether there was one.
	SyncRegistry(ctx context.Context) (bool, error)
	// CapabilitiesChanged brings every open connection's capability tools
	// up to date.
	CapabilitiesChanged(ctx context.Context) error
}

// Credentials is the per-principal credential store as the runtime uses
// it; *credential.Store implements it.
type Credentials interface {
	mcpclient.CredentialSource
	// Reload re-reads the store when another process changed it and
	// reports whether it did; a store that cannot be read keeps the
	// previous credentials and returns the error.
	Reload(ctx context.Context) (bool, error)
}

// RuntimeOptions configures [OpenRuntime]. Installs and Store are
// required.
type RuntimeOptions struct {
	Installs Installs
	Store    RuntimeStore
	// PolicyDir holds the policy files (DATA/policies).
	PolicyDir string
	// Unauthorized refreshes a principal's connection after a remote
	// server refused a call with 401, so that the call is made once more
	// with the new token; nil fails such calls.
	Unauthorized mcpclient.Unauthorized
	// CredentialStore resolves ${NAME} references in server declarations
	// per principal (agent → tenant → environment): each principal's
	// calls reach a server started with its own credentials. Watch
	// reloads it when another process changed it. Nil means Credentials.
	CredentialStore Credentials
	// Credentials expands ${NAME} references in server declarations, the
	// same for every principal; used when CredentialStore is nil.
	Credentials mcpclient.CredentialLookup
	// FirstParty, when set, is the registry whose first_party skills are
	// served beside the installed ones (see [ReadFirstParty]); their
	// capabilities come and go with scans.
	FirstParty FirstPartySource
	// Configured says which credentials of a first_party skill are not
	// configured for a principal (it is dormant for that principal until
	// none is missing); nil looks them up with Credentials.
	Configured CredentialCheck
	// Limits bounds every upstream connection; zero fields take
	// mcpclient's defaults.
	Limits mcpclient.Limits
	// ClientVersion is sent to upstream servers as clientInfo.version.
	ClientVersion string
	// Logger receives what the runtime and its parts report; nil discards.
	Logger *slog.Logger
	// Tracer is the broker's (Options.Tracer); nil: no tracing.
	Tracer *telemetry.Tracer
	// Executors configures the executors the broker serves.
	Executors ExecutorOptions
	// CatalogDir, when set, holds operator executor catalogs
	// (DATA/executors): merged over Executors.Catalog at open, and again
	// whenever the watch finds a file changed, each load audited.
	CatalogDir string
	// Observe, when set, sees every audit record the capability path
	// writes, as it is queued (metrics count decisions and call latency
	// from them). It must not block.
	Observe func(audit.Record)
	// Changed, when set, is told each change the watch applies (what is
	// "registry", "policies", "credentials" or "installs"): each empties
	// caches of the capability path.
	Changed func(what string)
	// DurableAudit passes an answered call's result on only once its
	// audit record is committed (see [Options.DurableAudit]): what
	// replicas that may be killed at any time need.
	DurableAudit bool
	// Sandbox confines the stdio servers of the skills it serves when they
	// start (every imported skill's; a first_party skill's unless the
	// operator set it to run unconfined). A server that cannot be confined
	// does not start: its calls fail, audited, with the reason. Nil runs
	// every server unconfined.
	Sandbox *sandbox.Runtime
}

// observed is a Recorder that shows each record to observe, then records
// it.
type observed struct {
	Recorder
	observe func(audit.Record)
}

func (o observed) Record(r audit.Record) error {
	o.observe(r)
	return o.Recorder.Record(r)
}

// observedDurable is observed over a writer that can wait for commits.
type observedDurable struct {
	observed
	w *audit.Writer
}

func (o observedDurable) RecordCommitted(r audit.Record) (<-chan error, error) {
	o.observe(r)
	return o.w.RecordCommitted(r)
}

// Runtime is the capability path of a running gateway: the policy engine
// (policies from the policy directory and the store, grants), the decider
// over it, the pool of upstream connections (which reports pin drift to
// the install service), the audit writer and the broker that joins them.
// [Runtime.Watch] keeps it current while other processes change policies,
// installs and the registry; [Runtime.Close] ends it.
type Runtime struct {
	// Broker serves the capabilities to the gateway.
	Broker *Broker
	// Decider decides calls; its Delegate registers sub-agents.
	Decider *PolicyDecider
	// Engine is the policy engine the decider asks.
	Engine *policy.Engine

	opts    RuntimeOptions
	log     *slog.Logger
	pool    *mcpclient.Pool
	audit   *audit.Writer
	refresh chan struct{}
	wake    chan struct{}
	drift   sync.WaitGroup // drift being recorded
	// packages checks the fetched trees of launched packages before
	// their servers start.
	packages launch.Verifier

	// catalogs fingerprints the operator catalog files last loaded.
	catalogs string

	closeOnce sync.Once
	closeErr  error
}

// OpenRuntime loads the policies and the enabled installed skills and
// returns the runtime serving them. A policy set that does not load is an
// error naming the command that checks it.
func OpenRuntime(ctx context.Context, opts RuntimeOptions) (*Runtime, error) {
	if opts.Installs == nil || opts.Store == nil {
		return nil, errors.New("broker: RuntimeOptions.Installs and Store are required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Runtime{opts: opts, log: log, refresh: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
	r.Engine = policy.New(&policy.Options{Store: opts.Store, Buckets: opts.Store, PolicyDir: opts.PolicyDir, Logger: log})
	if err := r.Engine.Reload(ctx); err != nil {
		return nil, fmt.Errorf("policies: %w (check them with 'skillgate policy check')", err)
	}
	r.Decider = NewPolicyDecider(r.Engine)
	r.Decider.Reload = r.Engine.Reload
	r.Decider.Logger = log
	var source mcpclient.CredentialSource
	if opts.CredentialStore != nil {
		source = opts.CredentialStore
	}
	r.pool = mcpclient.NewPool(mcpclient.PoolOptions{
		CredentialSource: source,
		Credentials:      opts.Credentials,
		Unauthorized:     opts.Unauthorized,
		Limits:           opts.Limits,
		OnDrift: func(t mcpclient.Target, d capability.Drift) {
			// RecordDrift takes the storage lock: never on the
			// connection's re-check goroutine.
			r.drift.Add(1)
			go func() {
				defer r.drift.Done()
				if err := opts.Installs.RecordDrift(context.WithoutCancel(ctx), t.Skill, t.Server.ID, d, "system"); err != nil {
					log.Error("recording pin drift failed", "skill", t.Skill, "server", t.Server.ID, "err", err)
				}
				r.Refresh()
			}()
		},
		// A server starts only from the files that were approved (or, for a
		// first_party skill, scanned and signed): one byte changed since
		// refuses it, and the refusal is audited.
		BeforeStart: func(ctx context.Context, t mcpclient.Target) error {
			return r.checkContent(ctx, t)
		},
		Confine:       confiner(opts.Sandbox),
		Logger:        log,
		ClientVersion: opts.ClientVersion,
	})
	r.audit = audit.NewWriter(audit.NewLog(opts.Store), audit.WriterOptions{Logger: log})
	var err error
	load := LoadInstalled(opts.Installs)
	if opts.FirstParty != nil {
		// A first_party skill wins over an install of the same key, as
		// its root wins in the registry.
		load = LoadAll(LoadFirstParty(opts.FirstParty, log), load)
	}
	check := opts.Configured
	if check == nil {
		check = CredentialsFrom(opts.Credentials)
	}
	execs := opts.Executors
	if conns, ok := opts.CredentialStore.(Connections); ok && execs.Connections == nil {
		execs.Connections = conns
	}
	if execs.Credentials == nil {
		// A backend is live only where its server's credentials resolve,
		// as the pool resolves them: the check first_party dormancy uses.
		execs.Credentials = func(p capability.Principal, names []string) []string {
			return check(context.Background(), p, "", names)
		}
	}
	var onSkillDrift func(string, string, []manifest.SkillDrift)
	if rec, ok := opts.Installs.(SkillDriftRecorder); ok {
		onSkillDrift = func(key, serverID string, d []manifest.SkillDrift) {
			// RecordSkillDrift takes the storage lock: never on the
			// agent's read.
			r.drift.Add(1)
			go func() {
				defer r.drift.Done()
				if err := rec.RecordSkillDrift(context.WithoutCancel(ctx), key, serverID, d, "system"); err != nil {
					log.Error("recording published skill drift failed", "skill", key, "server", serverID, "err", err)
				}
				r.Refresh()
			}()
		}
	}
	var rec Recorder = r.audit
	if opts.Observe != nil {
		rec = observedDurable{observed{r.audit, opts.Observe}, r.audit}
	}
	r.Broker, err = New(Options{Tracer: opts.Tracer, Load: load, Decider: r.Decider, Upstream: r.pool, Audit: rec, DurableAudit: opts.DurableAudit, Logger: log, Configured: check, Executors: execs,
		Resources: r.pool, OnSkillDrift: onSkillDrift})
	if err == nil {
		r.loadCatalogs(ActionCatalogLoad)
		err = r.Broker.Reload(ctx)
	}
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// changed tells RuntimeOptions.Changed, if set, of a change applied.
func (r *Runtime) changed(what string) {
	if r.opts.Changed != nil {
		r.opts.Changed(what)
	}
}

// PoolStats lists the upstream connections of the pool (one per target
// and credential set).
func (r *Runtime) PoolStats() []mcpclient.PoolStat { return r.pool.Stats() }

// Refresh asks [Runtime.Watch] to reload the installed skills soon, as
// after pin drift. It never blocks.
func (r *Runtime) Refresh() {
	select {
	case r.refresh <- struct{}{}:
	default:
	}
}

// Wake asks [Runtime.Watch] to check for changes now rather than at its
// next tick, and to read the stored grants again: the store announced a
// change another process committed (PostgreSQL's LISTEN/NOTIFY). Unlike
// Refresh it reloads only what changed. It never blocks.
func (r *Runtime) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Watch keeps the capability tools current until ctx ends: every interval
// it re-reads the policies, the install generation and the registry
// generation (other processes — the CLI, REST — change them; n tells
// agents of a registry change), and it reloads at once when asked
// ([Runtime.Refresh]) or woken ([Runtime.Wake]). Only a change does any work: new policies are
// swapped into the engine, installed skills reloaded, and n told that
// capabilities changed, so that connections whose tools changed are told
// so. Grants added elsewhere need no polling: the decider reloads them
// before answering require_approval.
func (r *Runtime) Watch(ctx context.Context, every time.Duration, n Notifier) {
	gen, _ := r.opts.Installs.Generation(ctx)
	policies := policyFingerprint(r.Engine.Policies())
	var credGen uint64
	if cs := r.opts.CredentialStore; cs != nil {
		credGen = cs.Generation()
	}
	_, _ = n.SyncRegistry(ctx) // records what agents see now
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.refresh:
			forced = true
		case <-r.wake:
			// A grant added, revoked or rescoped elsewhere.
			if err := r.Engine.ReloadGrants(ctx); err != nil {
				r.log.Error("grant reload failed; keeping the previous grants", "err", err)
			}
		}
		// Credentials first: a call arriving now must not start a server
		// with a credential another replica has already replaced (the
		// start it would cost is the largest part of a change's delay).
		credsChanged := false
		if cs := r.opts.CredentialStore; cs != nil {
			// Moved by another process (Reload), or by this one: a
			// connection made, refreshed or expired here.
			if moved, err := cs.Reload(ctx); err != nil {
				r.log.Error("credential store reload failed; keeping the previous credentials", "err", err)
			} else if g := cs.Generation(); moved || g != credGen {
				credGen = g
				r.pool.Prune()
				credsChanged = true
				r.changed("credentials")
			}
		}
		// A registry change made by another process (scan, enable,
		// disable) reaches connected agents: one read of the registry
		// generation while nothing changed.
		regChanged, err := n.SyncRegistry(ctx)
		if err != nil {
			r.log.Error("registry change", "err", err)
		}
		if regChanged {
			r.changed("registry")
		}
		// A scan that changed the registry may have changed the
		// first_party skills served.
		forced = forced || (regChanged && r.opts.FirstParty != nil)
		changed := forced || credsChanged
		if set, err := policy.LoadPolicies(ctx, r.opts.PolicyDir, r.opts.Store); err != nil {
			r.log.Error("policy reload failed; keeping the previous policies", "err", err)
		} else if fp := policyFingerprint(set); fp != policies {
			if err := r.Engine.SetPolicies(set); err != nil {
				r.log.Error("new policies refused; keeping the previous ones", "err", err)
			} else {
				policies, changed = fp, true
				r.changed("policies")
			}
		}
		// An operator catalog file added, changed or removed.
		if r.reloadCatalogs(ctx) {
			changed = true
		}
		now, err := r.opts.Installs.Generation(ctx)
		if err != nil {
			r.log.Error("install generation", "err", err)
			continue
		}
		if now != gen || forced {
			gen, changed = now, true
			if mr, ok := r.opts.Installs.(MissingRestorer); ok {
				if keys, err := mr.RestoreMissing(ctx); err != nil {
					r.log.Error("restoring approved skills from the bucket failed", "err", err)
				} else if len(keys) > 0 {
					r.log.Info("approved skills restored from the bucket", "skills", keys)
				}
			}
			if err := r.Broker.Reload(ctx); err != nil {
				r.log.Error("capability reload failed", "err", err)
				continue
			}
			r.changed("installs")
		}
		if changed {
			_ = n.CapabilitiesChanged(ctx)
		}
	}
}

// MissingCredentials returns the credentials t's server needs that are
// not configured for p (agent, tenant, or the process environment): while
// any is missing, p's calls to t fail without starting the server. A
// resolver uses it to tell a live backend from a dormant one.
func (r *Runtime) MissingCredentials(p capability.Principal, t mcpclient.Target) []string {
	return r.pool.Missing(p, t)
}

// Close closes the upstream connections, waits (a few seconds at most)
// for the audit records of the calls they answered to be queued, and
// flushes the audit records; drift being recorded is waited for. Stop
// Watch first. It is idempotent.
func (r *Runtime) Close() error {
	r.closeOnce.Do(func() {
		errs := []error{r.pool.Close()}
		ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		if err := r.Broker.Drain(ctx); err != nil {
			r.log.Error("closing with calls not audited", "err", err)
		}
		cancel()
		r.closeErr = errors.Join(append(errs, r.audit.Close())...)
		r.drift.Wait()
	})
	return r.closeErr
}

// drainTimeout bounds how long Close waits for the audit records of calls
// still being answered.
const drainTimeout = 5 * time.Second

// policyFingerprint identifies a policy set's content: each statement's
// id, position and Cedar text.
func policyFingerprint(ps *policy.PolicySet) string {
	h := sha256.New()
	for id, p := range ps.All() {
		fmt.Fprintf(h, "%s\x00%s\x00", id, p.MarshalCedar())
	}
	for _, p := range ps.Policies() {
		fmt.Fprintf(h, "%s\x00%s\x00", p.ID, p.Position)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkContent hashes the files of t's skill again before one of its
// servers starts, and refuses a skill whose content is no longer the
// version approved.
func (r *Runtime) checkContent(ctx context.Context, t mcpclient.Target) error {
	want := t.Content
	if want == "" {
		want = t.Digest
	}
	if t.Dir == "" || want == "" {
		return nil
	}
	found, err := discover.TreeDigest(ctx, t.Dir)
	why := ""
	switch {
	case err != nil:
		why = fmt.Sprintf("the files of %s cannot be hashed (%v)", t.Skill, err)
	case found != want:
		why = fmt.Sprintf("the files of %s no longer hash to the approved %s", t.Skill, want)
	case t.Server.Exec == nil && t.Trust != capability.TrustFirstParty && isLaunch(t.Server):
		// An imported skill's launch runs only the package pinned at
		// install, never what a launcher downloads at start.
		why = fmt.Sprintf("server %s of %s is launched with %s, and no package was fetched and pinned for it at install (an install by an older skillgate): run skillgate update %s, or install it again",
			t.Server.ID, t.Skill, t.Server.Command, t.Skill)
	case t.Server.Exec != nil && t.Server.Exec.Tree != "":
		// A launched package runs from its fetched tree: the same check.
		if err := r.packages.Verify(ctx, t.Server.Exec.Dir, t.Server.Exec.Tree); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			why, found = fmt.Sprintf("the fetched package of server %s of %s changed since approval (%v)", t.Server.ID, t.Skill, err), ""
			want = t.Server.Exec.Tree
		}
	}
	if why == "" {
		return nil
	}
	data, _ := json.Marshal(map[string]string{"server": t.Server.ID, "approved": want, "found": found})
	if aerr := r.audit.Record(audit.Record{Actor: "system", Action: "capability.server.start", Subject: t.Skill + ":" + t.Server.ID,
		Decision: capability.Deny, Reasons: []string{"content changed since approval: " + why}, Data: data}); aerr != nil {
		r.log.Error("audit of a refused server start failed", "skill", t.Skill, "err", aerr)
	}
	r.log.Warn("server start refused: skill content changed", "skill", t.Skill, "server", t.Server.ID, "approved", t.Digest, "found", found, "err", err)
	return fmt.Errorf("%s; it will not be started until an operator reviews the change", why)
}

// isLaunch reports whether d is a package-manager launch (npx PKG, uvx
// PKG, …).
func isLaunch(d mcpclient.ServerDecl) bool {
	_, ok, _ := launch.Parse(d.Command, d.Args)
	return ok
}

// confiner adapts sb to the pool: each target's server is confined as sb
// decides from the skill's trust, its approved egress and its declaration.
// Nil sb confines nothing.
func confiner(sb *sandbox.Runtime) func(mcpclient.Target) (mcpclient.Confiner, error) {
	if sb == nil {
		return nil
	}
	return func(t mcpclient.Target) (mcpclient.Confiner, error) {
		var binds []string
		if t.Server.Exec != nil {
			binds = t.Server.Exec.Binds
		}
		b, err := sb.Confiner(sandbox.Server{
			Skill: t.Skill, Version: t.Digest, FirstParty: t.Trust == capability.TrustFirstParty,
			Network: t.Network, Dir: t.Dir, Args: t.Server.Args, Env: t.Server.Env, Binds: binds,
		})
		if err != nil || b == nil {
			return nil, err // a nil *Bubblewrap must not become a non-nil Confiner
		}
		return b, nil
	}
}
