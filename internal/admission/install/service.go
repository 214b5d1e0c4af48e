// Package install runs the install flow of imported (third-party) skills:
// a skill directory or archive is read within bounds, validated, copied into
// content-addressed managed storage, introspected through its declared MCP
// servers, proposed a manifest (deterministically or by an LLM, then
// validated by code), completed and approved by a human, and enabled. Every
// state change is one store transaction with its audit record; artefacts are
// mirrored to disk atomically, and Recover repairs whatever a crash left.
//
// The gateway reads the outcome through [Service.Enabled], reports drift
// through [Service.RecordDrift], and watches [Service.Generation] to know
// when to recompute scopes. The runtime never calls a proposer: only
// analysis (install, or recheck before approval) does.
package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/admission/lineage"
	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/admission/propose"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/constraint"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/registry/signature"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/launch"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// MCPConfigFile is the file beside SKILL.md that declares a skill's MCP
// servers.
const MCPConfigFile = "mcp.json"

// MinWhyLength is the shortest explanation accepted for an operator's
// completion, override or rejection: long enough to say why, not just "ok".
const MinWhyLength = 15

// Options configures a Service. Store and DataDir are required.
type Options struct {
	// Store persists installs and their audit records.
	Store store.InstallStore
	// Root is the managed storage directory (DATA/imported).
	Root string
	// Proposer drafts manifests at analysis; nil means propose.Deterministic.
	Proposer propose.Proposer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Credentials expands ${NAME} references of mcp.json; nil means none.
	Credentials mcpclient.CredentialLookup
	// Bearer returns the access token of the introspecting principal's
	// connection to a remote server (skillgate connect): "" for a server
	// reached without one, an error wrapping
	// mcpclient.ErrConnectionRequired for one that needs a connection the
	// principal lacks. Nil: remote servers are introspected without a
	// token.
	Bearer func(mcpclient.ServerDecl) (string, error)
	// MCP are the limits and environment for introspecting servers.
	MCP mcpclient.Options
	// Sandbox confines the servers of skills not yet approved while they
	// are introspected (its Network field is set per install, see
	// [Introspection]); nil runs them unconfined, as the operator's user.
	Sandbox *sandbox.Bubblewrap
	// Runtime is the sandbox of approved skills' servers at call time
	// (what the gateway's calls use): a recheck of an approved version
	// runs its servers under it, with the state directory, grants,
	// limits and network of run time. Nil falls back to Sandbox.
	Runtime *sandbox.Runtime
	// Source bounds what an install source may hold.
	Source SourceLimits
	// Keyring holds the keys trusted to sign skills: an imported skill
	// signed by one of them is recorded with its signer; nil trusts none.
	Keyring *signature.Keyring
	// Audit, when set, records installs refused before they are stored
	// (an invalid signature); changes of stored installs are audited
	// with them by Store.
	Audit store.AuditStore
	// Logger receives events; nil discards them.
	Logger *slog.Logger
	// Progress, when set, is told each slow step of an install, recheck
	// or update as it starts ("fetching …", "fetching the npm package …",
	// "introspecting server …", "scanning the content"), for a progress
	// line on a terminal. It is called from several goroutines and must
	// not block.
	Progress func(step string)
	// Crash, when set, is called at named points of every change (see
	// docs/install.md); tests kill the process there.
	Crash func(point string)
	// NamesHeld, when set, returns the tool names held outside the install
	// flow (the first_party skills' capabilities), by name, with who holds
	// each: an approval never gives one of them to an imported skill.
	NamesHeld func(ctx context.Context) (map[string]string, error)
	// Changes, when set, is the changes queue: an install or enable whose
	// tools offer an action another provider's skill offers too queues a
	// promote_provider change there (package promote). Nil finds none.
	Changes store.ChangeStore
	// PromoteDrafter, when set, drafts the promote_provider changes the
	// deterministic drafter cannot map (the OpenAI-compatible model of
	// manifest proposals); its drafts are validated like any other.
	PromoteDrafter promote.Drafter
	// Shipped, when set, returns the provider skills served without an
	// install (the first_party skills of first_party roots): detection of
	// promote_provider changes and their apply take them beside the
	// approved installs, so a first_party provider and an imported one of
	// the same action queue one change. Nil takes installs alone.
	Shipped func(ctx context.Context) ([]ShippedProvider, error)
	// Executors, when set, returns the executor catalog a provider
	// skill's backends.yaml is checked against at approval (the built-in
	// one merged with the operator's DATA/executors files); nil means
	// executor.Builtin().
	Executors func() *executor.Catalog
	// Catalog, when set, is kept listing exactly the enabled installs
	// (*registry.Registry implements it): after every change and at
	// Recover. Nil leaves imported skills out of catalogs.
	Catalog Catalog
	// Bucket, when set, also keeps every approved version in object
	// storage, under BucketPrefix (bucket.DefaultImportsPrefix when ""): its
	// managed tree, then its artefacts, then a marker. Recover restores
	// from it the trees this process lacks (another replica installed
	// them) before anything is served. Managed storage stays the local
	// directory; nil keeps everything there alone.
	Bucket       blob.Store
	BucketPrefix string
	// Packages fetches the packages that servers declared with a package
	// manager (npx PKG, uvx PKG) launch: at install and update, into the
	// version's managed storage (see package launch). Nil fetches from
	// the public registries, in Sandbox.
	Packages *launch.Fetcher
	// Lineage, when set, opens layer 4's index of reference skills: a
	// skill under review derived from one is compared with it
	// (lineage.go), and every approved skill becomes one. It is called
	// once, by the first analysis or approval that needs the index
	// (opening reads the index file and brings it in step with its
	// sources, seconds for a large index: a command that scans nothing
	// never pays for it), and again after a failure. LineageFile, when
	// set, is where the index is saved after it changes. Capabilities,
	// when set, finds what an added line of a script does (SG950); nil
	// uses the scanner's readers.
	Lineage      func(ctx context.Context) (*lineage.Index, error)
	LineageFile  string
	Capabilities lineage.CapabilityFunc
}

// Catalog is the registry as the install flow keeps it in step with the
// enabled installs; *registry.Registry implements it.
type Catalog interface {
	// SyncImported makes the catalog list exactly skills, the enabled
	// installs kept under root.
	SyncImported(ctx context.Context, root string, skills []registry.Imported) error
}

// Service is the install flow over a store and managed storage. It is safe
// for concurrent use, and for use by several processes at once: changes to
// managed storage are serialised by a lock file.
type Service struct {
	st       store.InstallStore
	storage  Storage
	proposer propose.Proposer
	now      func() time.Time
	creds    mcpclient.CredentialLookup
	bearer   func(mcpclient.ServerDecl) (string, error)
	mcp      mcpclient.Options
	sandbox  *sandbox.Bubblewrap
	runtime  *sandbox.Runtime
	lim      SourceLimits
	log      *slog.Logger
	progress func(step string)
	crash    func(string)
	keyring  *signature.Keyring
	audit    store.AuditStore
	catalog  Catalog
	held     func(ctx context.Context) (map[string]string, error)
	changes  store.ChangeStore
	drafter  promote.Drafter
	shipped  func(ctx context.Context) ([]ShippedProvider, error)
	// bucket, when set, keeps approved versions under bucketPrefix.
	bucket       blob.Store
	bucketPrefix string
	fetcher      *launch.Fetcher
	verifier     *launch.Verifier
	// openLineage, lineageFile and capabilities: see Options.Lineage;
	// lineage is the index once opened, under lineageMu.
	openLineage  func(ctx context.Context) (*lineage.Index, error)
	lineageMu    sync.Mutex
	lineage      *lineage.Index
	lineageFile  string
	capabilities lineage.CapabilityFunc

	// executors is Options.Executors.
	executors func() *executor.Catalog
}

// New returns a Service. It does not touch storage; call Recover once at
// start.
func New(opts Options) (*Service, error) {
	if opts.Store == nil || opts.Root == "" {
		return nil, errors.New("install: Options.Store and Options.Root are required")
	}
	s := &Service{st: opts.Store, storage: Storage{Root: opts.Root}, proposer: opts.Proposer, now: opts.Now,
		creds: opts.Credentials, bearer: opts.Bearer, mcp: opts.MCP, sandbox: opts.Sandbox, runtime: opts.Runtime, lim: opts.Source, log: opts.Logger, progress: opts.Progress, crash: opts.Crash,
		keyring: opts.Keyring, audit: opts.Audit, catalog: opts.Catalog, held: opts.NamesHeld, changes: opts.Changes, drafter: opts.PromoteDrafter, shipped: opts.Shipped,
		bucket: opts.Bucket, bucketPrefix: opts.BucketPrefix, fetcher: opts.Packages, verifier: &launch.Verifier{},
		openLineage: opts.Lineage, lineageFile: opts.LineageFile, capabilities: opts.Capabilities}
	s.executors = opts.Executors
	if s.bucketPrefix == "" {
		s.bucketPrefix = bucket.DefaultImportsPrefix
	}
	if err := blob.ValidatePrefix(s.bucketPrefix); err != nil {
		return nil, fmt.Errorf("install: Options.BucketPrefix: %w", err)
	}
	if s.proposer == nil {
		s.proposer = propose.Deterministic{}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.crash == nil {
		s.crash = func(string) {}
	}
	if s.fetcher == nil {
		s.fetcher = launch.NewFetcher(launch.Options{Sandbox: opts.Sandbox, Logger: s.log})
	}
	s.mcp.Credentials = opts.Credentials
	if s.mcp.Logger == nil {
		s.mcp.Logger = s.log
	}
	return s, nil
}

// Storage returns the managed storage.
func (s *Service) Storage() Storage { return s.storage }

// Generation returns a counter that increases with every committed install
// change, so a caller can poll cheaply and recompute what depends on
// installs when it moves.
func (s *Service) Generation(ctx context.Context) (int64, error) {
	return s.st.InstallGeneration(ctx)
}

// Install reads src (a skill directory, .tar.gz or .zip), validates it,
// copies it into managed storage, records it as pending_install and
// analyses it. It never enables anything. Installing a version that is
// already in pending_install or analyzing (an interrupted install) resumes
// its analysis.
func (s *Service) Install(ctx context.Context, src, actor string) (*Review, error) {
	return s.InstallWith(ctx, src, actor, Introspection{})
}

// Introspection is what the operator lets the servers of a skill that is not
// approved yet have while they are introspected. By default they get no
// credential and no network: an install starts code nobody has reviewed.
type Introspection struct {
	// Credentials names the credentials the operator gives this skill's
	// servers now; references to any other are withheld, and the server
	// that needs one is not started.
	Credentials []string
	// Network lets the servers reach the network (with a sandbox).
	Network bool
	// Unconfined runs the servers without the sandbox, as the operator's
	// own user: only for skills the operator trusts already.
	Unconfined bool
	// AllowScripts names the fetched packages whose install scripts
	// (npm's preinstall, install, postinstall) may run, each with the
	// operator's reason; they run in the fetch sandbox, and the
	// allowance is recorded with the version's packages.
	AllowScripts map[string]string
}

// step tells Options.Progress that a slow step starts.
func (s *Service) step(format string, args ...any) {
	if s.progress != nil {
		s.progress(fmt.Sprintf(format, args...))
	}
}

// InstallWith is [Service.Install] with what the operator allows the
// skill's servers during introspection.
func (s *Service) InstallWith(ctx context.Context, src, actor string, intro Introspection) (*Review, error) {
	return s.InstallFrom(ctx, Source{Location: src}, actor, intro)
}

// InstallFrom is [Service.InstallWith] for any [Source]: a local directory
// or archive, an archive URL with its expected SHA-256, or a git
// repository at a ref. How it was fetched is recorded with the version
// ([Provenance]) and shown by review.
func (s *Service) InstallFrom(ctx context.Context, src Source, actor string, intro Introspection) (*Review, error) {
	s.step("reading %s", src.Location)
	tree, prov, err := Fetch(ctx, src, s.lim, s.now())
	if err != nil {
		return nil, s.refused(ctx, src.Location, actor, err)
	}
	r, err := s.installFetched(ctx, src, tree, prov, actor, intro)
	if errors.Is(err, ErrLocked) || isPackageError(err) {
		return nil, s.refused(ctx, src.Location, actor, err)
	}
	return r, err
}

// refused audits an install refused for what its source held (an
// archive's digest, a ref that moved, content that differs from a lock,
// links or bounds exceeded) and returns err. A refusal that is a typo (a
// path that does not exist) is audited too: the log shows every attempt.
func (s *Service) refused(ctx context.Context, source, actor string, err error) error {
	if s.audit == nil || !(errors.Is(err, ErrInvalidSource) || errors.Is(err, ErrLocked) || isPackageError(err)) {
		return err
	}
	if actor == "" {
		actor = "system"
	}
	data, _ := json.Marshal(map[string]string{"source": redactLocation(source)})
	if _, aerr := s.audit.AppendAudit(ctx, audit.SealStored, store.AuditRecord{Actor: actor, Action: "install.refused",
		Subject: redactLocation(source), Reasons: []string{err.Error()}, Data: data}); aerr != nil {
		return fmt.Errorf("%w (and the refusal was not audited: %w)", err, aerr)
	}
	return err
}

// ShortDigest is a version's digest as operators read and type it: the
// first 12 hex digits, without "sha256:".
func ShortDigest(digest string) string {
	d := strings.TrimPrefix(digest, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

// VersionRef names one version of key the way every command taking a
// NAME accepts it: "KEY@DIGEST12".
func VersionRef(key, digest string) string { return key + "@" + ShortDigest(digest) }

// resolve finds the install an operator means by name: a key
// ("category/name") or a bare name, either with "@DIGEST" (a prefix of
// the digest, with or without "sha256:") to pick a version. The versions
// considered are those in one of states (with no states, every version
// not removed). When several are and no digest was given, resolve picks
// none: it returns ErrAmbiguous listing each as KEY@DIGEST12 with its
// state and install time, so that an operator never acts on a version
// skillgate chose for them. A digest prefix that matches several
// versions is ambiguous too.
func (s *Service) resolve(ctx context.Context, name string, states ...store.InstallState) (store.Install, error) {
	ver := ""
	if i := strings.LastIndexByte(name, '@'); i >= 0 {
		name, ver = name[:i], strings.TrimPrefix(name[i+1:], "sha256:")
	}
	var rows []store.Install
	var err error
	if strings.Contains(name, "/") {
		rows, err = s.st.Installs(ctx, store.InstallFilter{Key: name})
	} else {
		rows, err = s.st.Installs(ctx, store.InstallFilter{Name: name})
		if err == nil && len(rows) == 0 {
			rows, err = s.st.Installs(ctx, store.InstallFilter{Key: name})
		}
	}
	if err != nil {
		return store.Install{}, err
	}
	if len(rows) == 0 {
		return store.Install{}, fmt.Errorf("%w: %q; run skillgate pending to see installs", ErrNotFound, name)
	}
	keys := map[string]bool{}
	for _, r := range rows {
		keys[r.Key] = true
	}
	if len(keys) > 1 {
		ks := make([]string, 0, len(keys))
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return store.Install{}, fmt.Errorf("%w: %q matches %s; give the full name", ErrAmbiguous, name, strings.Join(ks, ", "))
	}
	var cands []store.Install
	for _, r := range rows {
		if ver != "" && !strings.HasPrefix(strings.TrimPrefix(r.Digest, "sha256:"), ver) {
			continue
		}
		cands = append(cands, r)
	}
	if len(cands) == 0 {
		return store.Install{}, fmt.Errorf("%w: %s has no version %s", ErrNotFound, rows[0].Key, ver)
	}
	var fit []store.Install
	for _, r := range cands {
		if (len(states) == 0 && r.State != store.StateRemoved) || slices.Contains(states, r.State) {
			fit = append(fit, r)
		}
	}
	switch {
	case len(fit) == 1:
		return fit[0], nil
	case len(fit) > 1:
		lines := make([]string, len(fit))
		for i, r := range fit {
			lines[i] = fmt.Sprintf("  %s  %s  installed %s", VersionRef(r.Key, r.Digest), r.State, r.CreatedAt.UTC().Format(time.RFC3339))
		}
		what := "has " + strconv.Itoa(len(fit)) + " versions this applies to"
		if ver != "" {
			what = "has " + strconv.Itoa(len(fit)) + " versions whose digest starts with " + ver
		}
		return store.Install{}, fmt.Errorf("%w: %s %s; name one as %s@DIGEST:\n%s", ErrAmbiguous, fit[0].Key, what, fit[0].Key, strings.Join(lines, "\n"))
	case len(states) == 0:
		return cands[0], nil
	}
	return cands[0], fmt.Errorf("%w: %s is %s", ErrState, cands[0].Key, cands[0].State)
}

// served finds the approved version of skill key the gateway serves,
// for drift it saw on a live connection: the enabled version, else the
// newest installed or disabled one. The gateway names the skill, not the
// version, and serves only one version of a key.
func (s *Service) served(ctx context.Context, key string) (store.Install, error) {
	rows, err := s.st.Installs(ctx, store.InstallFilter{Key: key, States: []store.InstallState{store.StateEnabled, store.StateInstalled, store.StateDisabled}})
	if err != nil {
		return store.Install{}, err
	}
	if len(rows) == 0 {
		return store.Install{}, fmt.Errorf("%w: %s has no approved version", ErrNotFound, key)
	}
	for _, r := range rows {
		if r.State == store.StateEnabled {
			return r, nil
		}
	}
	return rows[0], nil
}

// mirror writes the artefacts of in from the store to its directory.
func (s *Service) mirror(in store.Install) error {
	if in.State == store.StateRemoved {
		return nil
	}
	if _, err := os.Stat(in.Dir); err != nil {
		return fmt.Errorf("%w: %s: version directory %s: %w", ErrStorage, in.Key, in.Dir, err)
	}
	for _, f := range []struct {
		name string
		data json.RawMessage
	}{{manifest.FileProposed, in.Proposed}, {manifest.FileReport, in.Report}, {manifest.FileApproved, in.Manifest}} {
		p := filepath.Join(in.Dir, f.name)
		cur, err := os.ReadFile(p)
		if len(f.data) == 0 {
			if err == nil {
				if err := os.Remove(p); err != nil {
					return fmt.Errorf("%w: %w", ErrStorage, err)
				}
			}
			continue
		}
		if err == nil && string(cur) == string(f.data) {
			continue
		}
		if err := writeFileAtomic(p, f.data); err != nil {
			return err
		}
		s.crash("mirror-" + f.name)
	}
	return nil
}

// transition applies ts and mirrors the artefacts of the changed installs.
func (s *Service) transition(ctx context.Context, point string, ts ...transition) ([]store.Install, error) {
	s.crash(point + "-before-commit")
	stored := make([]store.Transition, len(ts))
	for i, t := range ts {
		stored[i] = t.stored()
	}
	out, err := s.st.TransitionInstall(ctx, audit.SealStored, stored...)
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, fmt.Errorf("%w: %w", ErrState, err)
		}
		return nil, err
	}
	s.crash(point + "-after-commit")
	for _, in := range out {
		if err := s.mirror(in); err != nil {
			return nil, err
		}
		s.log.Info("install: transition", "key", in.Key, "digest", in.Digest, "state", in.State, "reason", in.Reason)
		// The change is committed: a bucket that could not take the
		// version gets it at the next start (Recover).
		if err := s.replicate(ctx, in); err != nil {
			s.log.ErrorContext(ctx, "install: version not stored in the bucket; it will be at the next start", "key", in.Key, "err", err)
		}
	}
	// The change is committed: a registry that could not follow is
	// brought in step by the next change or Recover, not undone here.
	if err := s.SyncCatalog(ctx); err != nil {
		s.log.Error("install: registry not in step with the installs; it will be at the next change or start", "err", err)
	}
	return out, nil
}

// constraintParser is the constraint check passed to propose.Validate.
func constraintParser(raw json.RawMessage) error {
	_, err := constraint.Parse(raw)
	return err
}

// checkSignature verifies the signature an imported skill carries, if
// any. A valid one by a key trusted for imported skills is recorded in
// prov; one by a key nobody trusts here is recorded as unverified; any
// other (altered, for other content or another skill, revoked, expired,
// malformed) refuses the install, and the refusal is audited.
func (s *Service) checkSignature(ctx context.Context, tree *Tree, name, digest string, prov *Provenance, actor string) error {
	if tree.Signature == nil {
		return nil
	}
	md := ""
	if b, ok := tree.Files[signature.ManifestFile]; ok {
		sum := sha256.Sum256(b)
		md = "sha256:" + hex.EncodeToString(sum[:])
	}
	kr := s.keyring
	if kr == nil {
		kr, _ = signature.NewKeyring(nil)
	}
	p, err := kr.VerifyEnvelope(ctx, tree.Signature, signature.Subject{Name: name, Digest: digest, ManifestDigest: md}, signature.TrustImported, s.now())
	switch {
	case err == nil:
		prov.Signature = &SignatureRecord{Status: "verified", Signer: p.Signer, KeyName: p.KeyName, KeyID: p.KeyID, SignedAt: p.SignedAt}
		return nil
	case errors.Is(err, signature.ErrUntrustedKey):
		prov.Signature = &SignatureRecord{Status: "unverified", Reason: err.Error()}
		return nil
	}
	refusal := fmt.Errorf("%w: %s/%s: %w; the install was refused", ErrInvalidSkill, tree.Name, signature.FileName, err)
	if s.audit != nil {
		if actor == "" {
			actor = "system"
		}
		data, _ := json.Marshal(map[string]any{"digest": digest, "source": prov.Source, "signature": err.Error()})
		if _, aerr := s.audit.AppendAudit(ctx, audit.SealStored, store.AuditRecord{Actor: actor, Action: "install.refused",
			Subject: name, Reasons: []string{"invalid signature: " + err.Error()}, Data: data}); aerr != nil {
			return fmt.Errorf("%w (and the refusal was not audited: %w)", refusal, aerr)
		}
	}
	return refusal
}

// lockVersion takes the install lock and resolves name to the version an
// operator's action applies to, among states (see [Service.resolve]): the
// first step of every transition an operator makes (lock, resolve,
// decide, commit, review). The caller releases the lock with unlock; on an
// error the lock is already released.
func (s *Service) lockVersion(ctx context.Context, name string, states ...store.InstallState) (in store.Install, unlock func(), err error) {
	unlock, err = s.storage.lock()
	if err != nil {
		return store.Install{}, nil, err
	}
	if in, err = s.resolve(ctx, name, states...); err != nil {
		unlock()
		return store.Install{}, nil, err
	}
	return in, unlock, nil
}

// commit applies ts in one transaction (see [Service.transition]) and
// returns the review of the version the last of them moved: the last step
// of every transition.
func (s *Service) commit(ctx context.Context, point string, ts ...transition) (*Review, error) {
	out, err := s.transition(ctx, point, ts...)
	if err != nil {
		return nil, err
	}
	return s.review(ctx, out[len(out)-1])
}
