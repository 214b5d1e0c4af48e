package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/skillgate/skillgate/audit"
	"github.com/skillgate/skillgate/broker"
	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/credential"
	"github.com/skillgate/skillgate/discover"
	"github.com/skillgate/skillgate/executor"
	"github.com/skillgate/skillgate/install"
	"github.com/skillgate/skillgate/internal/plural"
	"github.com/skillgate/skillgate/internal/strictjson"
	"github.com/skillgate/skillgate/launch"
	"github.com/skillgate/skillgate/lockfile"
	"github.com/skillgate/skillgate/mcpclient"
	"github.com/skillgate/skillgate/policy"
	"github.com/skillgate/skillgate/promote"
	"github.com/skillgate/skillgate/propose"
	"github.com/skillgate/skillgate/registry"
	"github.com/skillgate/skillgate/sandbox"
	"github.com/skillgate/skillgate/signature"
	"github.com/skillgate/skillgate/store"
)

// envCrashPoint names a point of the install flow at which skillgate kills
// itself with SIGKILL: a test hook for crash-safety tests (docs/install.md).
const envCrashPoint = "SKILLGATE_TEST_CRASHPOINT"

// OpenInstalls opens the store and the install service of the data
// directory, and repairs what an earlier crash left behind.
func (a *App) OpenInstalls(ctx context.Context) (*install.Service, func(), error) {
	// --tenant (and --agent) of install, recheck and approve: the servers
	// are introspected with the credentials that principal resolves to.
	var lookup mcpclient.CredentialLookup
	if as := a.opts.IntrospectAs; as.Tenant != "" || as.Agent != "" {
		if err := as.Check(); err != nil {
			return nil, nil, Usagef("%v", err)
		}
		st, err := a.OpenCredentials(ctx)
		if err != nil {
			return nil, nil, credentialFailure(err)
		}
		lookup = st.Lookup(capability.Principal{Tenant: as.Tenant, Agent: as.Agent})
	}
	svc, _, closeFn, err := a.openInstallsWith(ctx, lookup)
	return svc, closeFn, err
}

// OpenInstallsDB is openInstalls that also returns the store.
func (a *App) OpenInstallsDB(ctx context.Context) (*install.Service, store.DB, func(), error) {
	return a.openInstallsWith(ctx, nil)
}

func (a *App) openInstallsWith(ctx context.Context, lookup mcpclient.CredentialLookup) (*install.Service, store.DB, func(), error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	svc, err := a.NewInstallService(db, lookup, nil)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	rec, err := svc.Recover(ctx)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	if n := len(rec.Removed) + len(rec.Rewritten) + len(rec.Lost); n > 0 {
		fmt.Fprintf(a.stderr, "skillgate: repaired managed storage after an interruption: %s removed, %s rewritten, %s their files\n",
			plural.Of(len(rec.Removed), "leftover", "leftovers"), plural.Of(len(rec.Rewritten), "artefact", "artefacts"),
			plural.Of(len(rec.Lost), "install lost", "installs lost"))
	}
	return svc, db, func() { db.Close() }, nil
}

// NewInstallService wires the install service: managed storage under the
// data directory, the LLM proposer when SKILLGATE_LLM_* configure one,
// credentials from creds, or from the environment when creds is nil.
// NewInstallService opens the install flow; sf (nil: the SKILLGATE_*
// variables) says whether approved versions are also kept in the bucket.
func (a *App) NewInstallService(db store.DB, creds mcpclient.CredentialLookup, sf *Storage) (*install.Service, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	if creds == nil {
		creds = credential.Environment(a.getenv, cfg.Credentials.FromEnvironment)
	}
	var p propose.Proposer = propose.Deterministic{}
	var drafter promote.Drafter
	if cfg, ok := propose.ConfigFromEnv(a.getenv); ok {
		llm, err := propose.NewOpenAI(cfg)
		if err != nil {
			return nil, err
		}
		p = llm
		// The same model drafts the promote_provider mappings the
		// deterministic drafter cannot write.
		drafter = promote.LLM{Chat: llm.Complete, Name: llm.Name()}
	}
	kr, err := a.Keyring(cfg)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	reg := registry.New(db, registry.Options{Logger: a.log})
	opts := install.Options{
		Store:       db,
		Root:        filepath.Join(a.Data(), "imported"),
		Proposer:    p,
		Credentials: creds,
		MCP:         mcpclient.Options{ClientVersion: a.opts.Version},
		Logger:      a.log,
		Keyring:     kr,
		Audit:       db,
		// Installs and enables queue the promote_provider changes they
		// find.
		Changes:        db,
		PromoteDrafter: drafter,
		// Enabled installs are listed by the registry like scanned skills.
		Catalog: reg,
		// Approvals never give an imported skill a first_party skill's
		// tool name, dormant or not.
		NamesHeld: func(ctx context.Context) (map[string]string, error) {
			fp, err := broker.ReadFirstParty(ctx, reg)
			if err != nil {
				return nil, err
			}
			held := map[string]string{}
			for _, s := range fp.Skills {
				for _, c := range s.Manifest.Capabilities {
					n := c.ToolName
					if n == "" {
						n = c.CapabilityID
					}
					if _, ok := held[n]; !ok { // skills come by key
						held[n] = s.Key + " (first_party)"
					}
				}
			}
			return held, nil
		},
	}
	if sf == nil {
		sf = a.envStorage()
	}
	if sf.Kind == "s3" {
		b, err := a.bucket(sf, cfg)
		if err != nil {
			return nil, Usagef("--skills-store s3: %v (credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)", err)
		}
		opts.Bucket = b
	}
	if runtime.GOOS == "linux" {
		// Servers are introspected in bubblewrap, with the data directory
		// (tokens, the store, the audit key) hidden from them, and, through
		// skillgate's own helper, the run-time sandbox's resource limits and
		// Landlock ruleset (docs/sandbox.md).
		data, err := filepath.Abs(a.Data())
		if err != nil {
			return nil, err
		}
		opts.Sandbox = &sandbox.Bubblewrap{Hide: []string{data}}
		if self, err := os.Executable(); err == nil {
			opts.Sandbox.Helper = []string{self, sandbox.HelperCommand}
		}
		// A recheck of an approved version runs its servers as the
		// gateway's calls do: the run-time sandbox of the configuration.
		if opts.Runtime, err = a.SandboxRuntime(cfg, a.log); err != nil {
			return nil, Usagef("%v", err)
		}
	}
	// Packages launched with npx or uvx are fetched in the same sandbox,
	// given the network and nothing else of the host (docs/sandbox.md).
	po, err := cfg.Packages.Options(a.opts.NPMRegistry)
	if err != nil {
		return nil, Usagef("config: packages: %v", err)
	}
	po.Sandbox, po.Logger = opts.Sandbox, a.log
	opts.Packages = launch.NewFetcher(po)
	if point := a.getenv(envCrashPoint); point != "" {
		opts.Crash = func(p string) {
			if p == point {
				// SIGKILL on Unix, TerminateProcess on Windows: no
				// deferred function runs, as in a crash.
				if self, err := os.FindProcess(os.Getpid()); err == nil {
					self.Kill()
				}
			}
		}
	}
	return install.New(opts)
}

// Actor names the operator running the CLI in audit records.
func (a *App) Actor() string {
	if u := a.getenv("USER"); u != "" {
		return "operator:" + u
	}
	return "operator:local"
}

// ApprovalRequests reads the calls of the last 24 hours waiting for a
// grant from the audit log.
func (a *App) ApprovalRequests(ctx context.Context) ([]broker.ApprovalRequest, error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return broker.ApprovalRequests(ctx, audit.NewLog(db), time.Now().Add(-24*time.Hour))
}

// CurrentLock is the lock of what is enabled now.
func (a *App) CurrentLock(ctx context.Context) (*lockfile.File, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	kr, err := a.Keyring(cfg)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	svc, closeInst, err := a.OpenInstalls(ctx)
	if err != nil {
		return nil, err
	}
	defer closeInst()
	inst, err := svc.LockEntries(ctx)
	if err != nil {
		return nil, err
	}
	// Enabled installs are in the registry too, under managed storage:
	// they are locked as installs, with their sources.
	managed, err := filepath.Abs(svc.Storage().Root)
	if err != nil {
		return nil, err
	}
	reg, closeReg, err := a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		return nil, err
	}
	es, err := reg.List(ctx, registry.Query{})
	closeReg()
	if err != nil {
		return nil, err
	}
	var entries []lockfile.Entry
	now := time.Now()
	roots := map[string]*signature.RootCheck{}
	for _, e := range es {
		if root, err := filepath.Abs(e.Root); err == nil && root == managed {
			continue
		}
		le := lockfile.Entry{Key: e.Key, Origin: lockfile.OriginRoot, Trust: e.Trust, Source: e.Root, Digest: e.Digest}
		// The signer of a skill its root's signed index lists, or of its
		// own signature, as a scan verifies them; one verification of
		// each root's index.
		trust := e.Trust
		if trust != signature.TrustFirstParty {
			trust = signature.TrustImported
		}
		rk := e.Root + "\x00" + trust
		rc, ok := roots[rk]
		if !ok {
			rc = kr.Root(ctx, e.Root, trust, now)
			roots[rk] = rc
		}
		if ix, _ := rc.Index(); ix != nil || fileExists(filepath.Join(e.Dir, signature.FileName)) {
			if p, err := rc.Verify(ctx, e.Dir); err == nil {
				le.Signer = p.Signer
			}
		}
		entries = append(entries, le)
	}
	return lockfile.New(append(entries, inst...)), nil
}

// Rescan scans the registry's roots again, as `scan` without --root.
func (a *App) Rescan(ctx context.Context) error {
	reg, closeReg, err := a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		return err
	}
	defer closeReg()
	roots, err := a.RescanRoots(ctx, reg, nil, "")
	if err != nil {
		return err
	}
	if len(roots) == 0 {
		return nil
	}
	_, err = reg.Scan(ctx, roots, nil)
	return err
}

// fileExists reports whether p names something, not following a link.
func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// PolicyDir is where policy files live: DATA/policies.
func (a *App) PolicyDir() string { return filepath.Join(a.Data(), "policies") }

// OpenPolicy opens the store and an engine over it with the policies and
// grants loaded.
func (a *App) OpenPolicy(ctx context.Context) (*policy.Engine, store.DB, error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	e := policy.New(&policy.Options{Store: db, Buckets: db, PolicyDir: a.PolicyDir(), Logger: a.log})
	if err := e.Reload(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	return e, db, nil
}

// CapabilitySource is where `policy test` gets the registry's capability
// records: the --capabilities file when given, else the enabled installed
// skills, exactly as the gateway projects them.
func (a *App) CapabilitySource(file string) (policy.CapabilitySource, error) {
	if file == "" {
		return installedCapabilities{a}, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var caps policy.Capabilities
	if err := strictjson.Decode(b, &caps, 16); err != nil {
		return nil, Usagef("--capabilities %s: %v (a JSON array of capability records; see docs/policy.md)", file, err)
	}
	return caps, nil
}

// CheckCapabilities are the capabilities `policy check` checks argument
// reads against: the --capabilities file, else the installed skills' when
// the data directory holds a registry, else none.
func (a *App) CheckCapabilities(ctx context.Context, file string) ([]policy.Capability, error) {
	if file == "" {
		if !a.StoreExists() {
			return nil, nil
		}
	}
	src, err := a.CapabilitySource(file)
	if err != nil {
		return nil, err
	}
	return src.Capabilities(ctx)
}

// installedCapabilities reads the capabilities the gateway serves: those
// of the first_party skills and of the enabled installed skills.
type installedCapabilities struct{ a *App }

// Capabilities implements policy.CapabilitySource.
func (ic installedCapabilities) Capabilities(ctx context.Context) ([]policy.Capability, error) {
	svc, closeFn, err := ic.a.OpenInstalls(ctx)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	reg, closeReg, err := ic.a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		return nil, err
	}
	defer closeReg()
	skills, err := broker.LoadAll(broker.LoadFirstParty(reg, nil), broker.LoadInstalled(svc))(ctx)
	if err != nil {
		return nil, err
	}
	return broker.PolicyCapabilities(skills), nil
}

// inactiveProviders returns the installed skills with a backends file
// that the gateway does not serve (not enabled, or not approved), with why.
func inactiveProviders(ctx context.Context, svc *install.Service) ([]broker.InactiveSkill, error) {
	all, err := svc.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []broker.InactiveSkill
	seen := map[string]bool{}
	for _, s := range all { // newest first: the newest install of each skill
		if seen[s.Key] || s.State == store.StateEnabled || s.State == store.StateRemoved || s.State == store.StateRejected {
			seen[s.Key] = true
			continue
		}
		seen[s.Key] = true
		r, err := svc.Review(ctx, s.Key)
		if err != nil {
			return nil, err
		}
		data, err := broker.ReadBackends(filepath.Join(r.Dir, install.SkillDir))
		if err != nil || data == nil {
			continue
		}
		off := executor.Off{Code: executor.OffSkillDisabled, Detail: fmt.Sprintf("skill %s is %s; enable it with skillgate enable %s", s.Key, s.State, s.Key)}
		switch s.State {
		case store.StateInstalled, store.StateDisabled:
		default:
			off = executor.Off{Code: executor.OffNotApproved, Detail: fmt.Sprintf("skill %s is %s; see skillgate review %s", s.Key, s.State, s.Key)}
		}
		out = append(out, broker.InactiveSkill{Key: s.Key, Backends: data, Off: off})
	}
	return out, nil
}

// noUpstream is the upstream of a broker that only reports: it never
// calls a server.
type noUpstream struct{}

// Call implements broker.Caller by refusing.
func (noUpstream) Call(_ context.Context, _ capability.Principal, _ mcpclient.Target, _ string, _ json.RawMessage, done mcpclient.ResultFunc) {
	done(nil, errors.New("skillgate executors does not call servers"))
}

// Retain implements broker.Caller.
func (noUpstream) Retain(map[string]bool) {}

// auditPolicy records a stored policy's change.
func (a *App) auditPolicy(ctx context.Context, db store.DB, action, id string, size int) error {
	data, _ := json.Marshal(map[string]any{"bytes": size})
	_, err := audit.NewLog(db).Append(ctx, audit.Record{Time: time.Now(), Actor: a.Actor(), Action: action, Subject: "policy:" + id, Data: data})
	if err != nil {
		return fmt.Errorf("audit of %s %s: %w", action, id, err)
	}
	return nil
}

// replacing is the store's policies with p put in (as PutPolicy would).
type replacing struct {
	db store.DB
	p  store.StoredPolicy
}

func (r replacing) Policies(ctx context.Context) ([]store.StoredPolicy, error) {
	ps, err := r.db.Policies(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]store.StoredPolicy, 0, len(ps)+1)
	added := false
	for _, p := range ps {
		if p.ID == r.p.ID {
			p, added = r.p, true
		} else if !added && p.ID > r.p.ID {
			out, added = append(out, r.p), true
		}
		out = append(out, p)
	}
	if !added {
		out = append(out, r.p)
	}
	return out, nil
}

// credentialFailure marks the credential store's refusals of bad input
// (an invalid name, scope or value) as usage errors.
func credentialFailure(err error) error {
	switch {
	case errors.Is(err, credential.ErrInvalidName), errors.Is(err, credential.ErrInvalidScope), errors.Is(err, credential.ErrInvalidValue):
		return Usagef("%v", err)
	}
	return err
}

// ExecutorStatus reports every provider-neutral executor for p as the
// gateway would serve it (live or dormant, each backend live or off and
// why), with the problems that refused mappings: the configuration's
// executor options, credentials resolved as the gateway resolves them, the
// policy engine, and the installed skills, without calling any server.
func (a *App) ExecutorStatus(ctx context.Context, p capability.Principal) ([]executor.ExecutorStatus, []string, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, nil, err
	}
	opts, err := ExecutorOptions(cfg)
	if err != nil {
		return nil, nil, err
	}
	// Credentials as the gateway resolves them: the principal's agent,
	// then tenant entry of the credential store, then skillgate's
	// environment.
	creds, err := a.OpenCredentials(ctx)
	if err != nil {
		return nil, nil, err
	}
	check := broker.CredentialsOf(creds)
	opts.Credentials = func(p capability.Principal, names []string) []string { return check(ctx, p, "", names) }
	eng, db, err := a.OpenPolicy(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	opts.Registered = db.Registrations
	svc, closeInstalls, err := a.OpenInstalls(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer closeInstalls()
	b, err := broker.New(broker.Options{Load: broker.LoadInstalled(svc), Decider: broker.NewPolicyDecider(eng), Upstream: noUpstream{}, Executors: opts})
	if err != nil {
		return nil, nil, err
	}
	if err := b.Reload(ctx); err != nil {
		return nil, nil, err
	}
	inactive, err := inactiveProviders(ctx, svc)
	if err != nil {
		return nil, nil, err
	}
	return b.ExecutorStatus(p, inactive...), b.ExecutorProblems(), nil
}

// MaxStoredPolicy bounds the text of one stored policy, as a policy file
// is bounded.
const MaxStoredPolicy = policy.MaxPolicyFileBytes

// CheckPolicyID accepts the ids of stored policies: letters, digits, '-',
// '_' and '.', at most 128 bytes; others are usage errors.
func CheckPolicyID(id string) error {
	if id == "" || len(id) > 128 {
		return Usagef("policy id %q: 1 to 128 letters, digits, '-', '_' or '.'", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return Usagef("policy id %q: 1 to 128 letters, digits, '-', '_' or '.'", id)
		}
	}
	return nil
}

// PutPolicy stores the Cedar text under id in the metadata store,
// replacing what id held, once the policy set it joins (DATA/policies and
// every stored text) loads as the gateway loads it; the change is
// audited. It returns the number of policies in the set.
func (a *App) PutPolicy(ctx context.Context, id string, text []byte) (int, error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	set, err := policy.LoadPolicies(ctx, a.PolicyDir(), replacing{db, store.StoredPolicy{ID: id, Text: string(text)}})
	if err != nil {
		return 0, fmt.Errorf("policy %s refused, nothing stored: %w", id, err)
	}
	if err := db.PutPolicy(ctx, store.StoredPolicy{ID: id, Text: string(text)}); err != nil {
		return 0, err
	}
	if err := a.auditPolicy(ctx, db, "policy.put", id, len(text)); err != nil {
		return 0, err
	}
	return set.Len(), nil
}

// RemovePolicy removes the text stored under id, audited; an id that
// holds none is an error.
func (a *App) RemovePolicy(ctx context.Context, id string) error {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	ps, err := db.Policies(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, p := range ps {
		found = found || p.ID == id
	}
	if !found {
		return fmt.Errorf("no stored policy %q (list them with 'skillgate policy ls')", id)
	}
	if err := db.DeletePolicy(ctx, id); err != nil {
		return err
	}
	return a.auditPolicy(ctx, db, "policy.remove", id, 0)
}

// InstalledCapabilities reads the capabilities the gateway serves: those
// of the first_party skills and of the enabled installed skills.
func (a *App) InstalledCapabilities() policy.CapabilitySource { return installedCapabilities{a} }
