package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/lineage"
	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/admission/propose"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/launch"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// envCrashPoint names a point of the install flow at which skillgate kills
// itself with SIGKILL: a test hook for crash-safety tests (docs/install.md).
const envCrashPoint = "SKILLGATE_TEST_CRASHPOINT"

// OpenInstalls opens the store and the install service of the data
// directory, and repairs what an earlier crash left behind.
func (a *App) OpenInstalls(ctx context.Context) (*install.Service, func(), error) {
	// --tenant (and --agent) of install, recheck and approve: the servers
	// are introspected with the credentials that principal resolves to.
	var (
		lookup mcpclient.CredentialLookup
		bearer func(mcpclient.ServerDecl) (string, error)
	)
	if as := a.opts.IntrospectAs; as.Tenant != "" || as.Agent != "" {
		if err := as.Check(); err != nil {
			return nil, nil, Usagef("%v", err)
		}
		st, err := a.OpenCredentials(ctx)
		if err != nil {
			return nil, nil, credentialFailure(err)
		}
		p := capability.Principal{Tenant: as.Tenant, Agent: as.Agent}
		lookup = st.Lookup(p)
		// Remote servers are introspected with the principal's
		// connection to them (skillgate connect).
		bearer = func(d mcpclient.ServerDecl) (string, error) { return st.Bearer(p, d, "") }
	}
	svc, _, closeFn, err := a.openInstallsWith(ctx, lookup, bearer)
	return svc, closeFn, err
}

// openInstallsDB is openInstalls that also returns the store.
func (a *App) openInstallsDB(ctx context.Context) (*install.Service, store.DB, func(), error) {
	return a.openInstallsWith(ctx, nil, nil)
}

func (a *App) openInstallsWith(ctx context.Context, lookup mcpclient.CredentialLookup, bearer func(mcpclient.ServerDecl) (string, error)) (*install.Service, store.DB, func(), error) {
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	svc, err := a.newInstallService(db, lookup, bearer, nil)
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
	return svc, db, func() {
		a.EndProgress()
		db.Close()
	}, nil
}

// installProgress is the install service's Progress: the progress line
// ShowProgress set up, or nil.
func (a *App) installProgress() func(string) {
	if a.steps == nil {
		return nil
	}
	return a.steps.show
}

// newInstallService wires the install service: managed storage under the
// data directory, the LLM proposer when SKILLGATE_LLM_* configure one,
// credentials from creds, or from the environment when creds is nil, and
// remote servers' connection tokens from bearer (nil: none).
// newInstallService opens the install flow; sf (nil: the SKILLGATE_*
// variables) says whether approved versions are also kept in the bucket.
func (a *App) newInstallService(db store.DB, creds mcpclient.CredentialLookup, bearer func(mcpclient.ServerDecl) (string, error), sf *Storage) (*install.Service, error) {
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
		drafter = promote.LLM{Chat: llm.Complete, Lookups: llm.CompleteWithLookups, Name: llm.Name()}
	}
	kr, err := a.Keyring(cfg)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	reg := registry.New(db, registry.Options{Logger: a.log})
	opts := install.Options{
		Progress:    a.installProgress(),
		Executors:   a.executorCatalog,
		Store:       db,
		Root:        filepath.Join(a.Data(), "imported"),
		Proposer:    p,
		Credentials: creds,
		Bearer:      bearer,
		MCP:         mcpclient.Options{ClientVersion: a.opts.Version},
		Logger:      a.log,
		Keyring:     kr,
		Audit:       db,
		// Installs and enables queue the promote_provider changes they
		// find.
		Changes:        db,
		PromoteDrafter: drafter,
		// First_party provider skills take part in promotion as
		// the gateway serves them.
		Shipped: broker.ShippedProviders(reg),
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
		if opts.Runtime, err = a.sandboxRuntime(cfg, a.log); err != nil {
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
					_ = self.Kill()
				}
			}
		}
	}
	opts.LineageFile = filepath.Join(a.Data(), lineageFile)
	opts.Lineage = func(ctx context.Context) (*lineage.Index, error) { return a.lineageIndex(ctx, cfg, opts.LineageFile) }
	return install.New(opts)
}

// Actor names the operator running the CLI in audit records.
func (a *App) Actor() string {
	if u := a.getenv("USER"); u != "" {
		return "operator:" + u
	}
	return "operator:local"
}

// InstallRequest is what 'skillgate install' installs: Source (its
// Location empty when there is none), or with Locked every imported skill
// of that lock file; Intro is what their servers may have while they are
// introspected, Scripts the packages whose install scripts may run, with
// ScriptsWhy.
type InstallRequest struct {
	Source     install.Source
	Locked     string
	Intro      install.Introspection
	Scripts    []string
	ScriptsWhy string
}

// Install installs the source of r for review and returns its review, or
// installs every imported skill of r's lock, telling each outcome as text
// to w and notes, and returns no review: an error when any was refused. A
// request with both a lock and a source, or neither, is a usage error.
func (a *App) Install(ctx context.Context, svc *install.Service, r InstallRequest, w, notes io.Writer) (*install.Review, error) {
	var err error
	if r.Intro.AllowScripts, err = AllowScripts(r.Scripts, r.ScriptsWhy); err != nil {
		return nil, err
	}
	src := r.Source
	switch {
	case r.Locked != "" && (src.Location != "" || src.Ref != "" || src.Path != "" || src.SHA256 != ""):
		return nil, Usagef("--locked takes its sources from the lock file: give no SOURCE, --ref, --path or --sha256")
	case r.Locked != "":
		failed := 0
		err := a.InstallLocked(ctx, svc, r.Locked, r.Intro, func(li LockedInstall) {
			if li.WriteText(w, notes) {
				failed++
			}
		})
		if err == nil && failed > 0 {
			err = fmt.Errorf("%d of the lock's installs were refused", failed)
		}
		return nil, err
	case src.Location == "":
		return nil, Usagef("install needs a SOURCE, or --locked FILE (see 'skillgate install --help')")
	}
	return svc.InstallFrom(ctx, src, a.Actor(), r.Intro)
}

// Pending returns the installs waiting for a human (every install with
// all) and, with requests, the calls of the last 24 hours waiting for an
// approval and the connections agents' calls lacked.
func (a *App) Pending(ctx context.Context, all, requests bool) ([]install.Summary, []broker.ApprovalRequest, []broker.ConnectionRequest, error) {
	svc, closeFn, err := a.OpenInstalls(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	defer closeFn()
	list := svc.Pending
	if all {
		list = svc.List
	}
	ps, err := list(ctx)
	if err != nil || !requests {
		return ps, nil, nil, err
	}
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	defer db.Close()
	reqs, conns, err := broker.Requests(ctx, audit.NewLog(db), time.Now().Add(-24*time.Hour))
	return ps, reqs, conns, err
}
