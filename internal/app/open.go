package app

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/skillgate/skillgate/audit"
	"github.com/skillgate/skillgate/broker"
	"github.com/skillgate/skillgate/change"
	"github.com/skillgate/skillgate/credential"
	"github.com/skillgate/skillgate/discover"
	"github.com/skillgate/skillgate/install"
	"github.com/skillgate/skillgate/registry"
	"github.com/skillgate/skillgate/sandbox"
	"github.com/skillgate/skillgate/server"
	"github.com/skillgate/skillgate/signature"
	"github.com/skillgate/skillgate/store"
	"github.com/skillgate/skillgate/store/sqlite"
)

// OpenRegistry opens the registry of the data directory. bulk lets a
// first scan into an empty store skip the write-ahead log
// (sqlite.DB.BulkFirstScan): only for a process that does nothing else
// with the store meanwhile.
func (a *App) OpenRegistry(ctx context.Context, lim discover.Limits, bulk bool) (*registry.Registry, func(), error) {
	st, err := a.OpenStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	if lite, ok := st.(*sqlite.DB); ok {
		lite.BulkFirstScan = bulk
	}
	sigs, err := a.signatureChecker()
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return registry.New(st, registry.Options{Limits: lim, Logger: a.log, Signatures: sigs}), func() { st.Close() }, nil
}

// signatureChecker checks the signatures of first_party skills at scan
// with the keys of signing.keys.
func (a *App) signatureChecker() (registry.SignatureChecker, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	kr, err := a.Keyring(cfg)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	tc := &signature.TreeChecker{Keyring: kr, Trust: signature.TrustFirstParty}
	return registry.SignatureCheckerFunc(func(ctx context.Context, root string) registry.RootSignatures {
		return tc.Root(ctx, root)
	}), nil
}

// RootSignature verifies the signature of the skill in dir under the
// first_party root root as a scan does (the root's signed index when it
// lists the skill, else its own signature) with the keys of signing.keys.
func (a *App) RootSignature(ctx context.Context, root, dir string) (*signature.Provenance, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	kr, err := a.Keyring(cfg)
	if err != nil {
		return nil, err
	}
	return kr.Root(ctx, root, signature.TrustFirstParty, time.Now()).Verify(ctx, dir)
}

// stateDirName is the directory of the data directory that holds the
// confined servers' state directories: DATA/sandbox/<skill>/<version>.
const stateDirName = "sandbox"

// SandboxRuntime builds the run-time sandbox from the configuration: nil
// outside Linux, where bubblewrap does not exist (logged, once per
// gateway). Whether bwrap is installed is checked when a server starts, so
// that its calls fail with the reason and are audited.
func (a *App) SandboxRuntime(cfg *Config, log *slog.Logger) (*sandbox.Runtime, error) {
	modes := map[string]sandbox.Mode{}
	keys := make([]string, 0, len(cfg.Sandbox.Skills))
	for k := range cfg.Sandbox.Skills {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		mode, err := sandbox.ParseMode(cfg.Sandbox.Skills[k])
		if err != nil {
			return nil, fmt.Errorf("config: sandbox.skills.%s: %v", k, err)
		}
		modes[k] = mode
	}
	if runtime.GOOS != "linux" {
		log.Warn("no sandbox on this system: the servers of approved skills run as skillgate's user (docs/sandbox.md)", "os", runtime.GOOS)
		return nil, nil
	}
	data, err := filepath.Abs(a.Data())
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: finding skillgate's own binary for its helper: %w", err)
	}
	if abi, err := sandbox.LandlockABI(); err != nil {
		log.Warn("Landlock is not available: confined servers rely on bubblewrap alone", "err", err)
	} else {
		log.Debug("Landlock available", "abi", abi)
	}
	l := cfg.Sandbox.Limits
	return &sandbox.Runtime{
		StateRoot: filepath.Join(data, stateDirName),
		Hide:      []string{data},
		Helper:    []string{self, sandbox.HelperCommand},
		Limits: sandbox.Limits{
			AddressSpace: l.MemoryBytes, Processes: l.Processes, OpenFiles: l.OpenFiles,
			FileSize: l.FileSizeBytes, CPUSeconds: l.CPUSeconds, TmpBytes: l.TmpBytes,
		},
		Modes: modes,
	}, nil
}

// envCredentialKey supplies the credential store's age identity instead
// of the key file DATA/credentials.key.
const envCredentialKey = "SKILLGATE_CREDENTIAL_KEY"

// OpenCredentials opens the credential store: kept in the metadata store
// when that is PostgreSQL (shared by every replica on it), else in the data
// directory; its identity from SKILLGATE_CREDENTIAL_KEY, else
// DATA/credentials.key; its last resolution step is the process
// environment, for the variables credentials.from_environment of the
// configuration lists. db is the store the command already opened, or nil.
func (a *App) OpenCredentials(ctx context.Context, db ...store.DB) (*credential.Store, error) {
	var opened store.DB
	if len(db) > 0 {
		opened = db[0]
	}
	shared, err := a.sharedStore(ctx, opened)
	if err != nil {
		return nil, err
	}
	cfg, err := a.Config()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	opts := credential.Options{
		Identity:        a.getenv(envCredentialKey),
		IdentitySource:  envCredentialKey,
		Environ:         a.getenv,
		FromEnvironment: cfg.Credentials.FromEnvironment,
	}
	if shared != nil {
		if err := a.adoptFile(ctx, shared, credential.StoreFile, filepath.Join(a.Data(), credential.StoreFile)); err != nil {
			return nil, fmt.Errorf("credential store: %w", err)
		}
		opts.Shared = shared
	}
	return credential.Open(ctx, a.Data(), opts)
}

// TokenSet returns where the bearer tokens are kept: in the metadata store
// when it is PostgreSQL (shared by every replica on it), else the file
// DATA/tokens.json. db is the store the command already opened, or nil.
func (a *App) TokenSet(ctx context.Context, db store.DB) (*server.TokenSet, error) {
	shared, err := a.sharedStore(ctx, db)
	if err != nil {
		return nil, err
	}
	local := filepath.Join(a.Data(), server.TokensFile)
	if shared != nil {
		if err := a.adoptFile(ctx, shared, server.TokensFile, local); err != nil {
			return nil, fmt.Errorf("tokens: %w", err)
		}
		return server.SharedTokens(shared), nil
	}
	return server.FileTokens(local), nil
}

// Files of the audit checkpoints in the data directory.
const (
	AuditKeyFile        = "audit-signing.key"
	AuditCheckpointFile = "audit-checkpoints.jsonl"
)

// AuditKeyPath is the data directory's audit signing key.
func (a *App) AuditKeyPath() string { return filepath.Join(a.Data(), AuditKeyFile) }

// HeadSource is what a checkpoint reads of the log.
type HeadSource interface {
	Head(ctx context.Context) (audit.Head, error)
}

// Checkpoint signs the log's head and appends it to file.
func (a *App) Checkpoint(ctx context.Context, log HeadSource, file string) (audit.Checkpoint, error) {
	h, err := log.Head(ctx)
	if err != nil {
		return audit.Checkpoint{}, err
	}
	if h.Seq == 0 {
		return audit.Checkpoint{}, errors.New("audit log is empty: nothing to checkpoint yet")
	}
	key, err := audit.LoadOrCreateKey(a.AuditKeyPath())
	if err != nil {
		return audit.Checkpoint{}, err
	}
	cp := audit.SignCheckpoint(h, time.Now(), key)
	if err := audit.AppendCheckpoint(file, cp); err != nil {
		return audit.Checkpoint{}, fmt.Errorf("audit checkpoint: %w", err)
	}
	return cp, nil
}

// CheckpointEvery appends a checkpoint to DATA/audit-checkpoints.jsonl
// every interval while the log grows and leading reports true (replicas on
// one store sign once: the leader does), until the returned stop is
// called or ctx ends. interval 0 disables it.
func (a *App) CheckpointEvery(ctx context.Context, log HeadSource, interval time.Duration, leading func() bool, lg *slog.Logger) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	file := filepath.Join(a.Data(), AuditCheckpointFile)
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		var last audit.Head
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !leading() {
				continue
			}
			h, err := log.Head(ctx)
			if err != nil || h.Seq == 0 || h == last {
				continue
			}
			cp, err := a.Checkpoint(ctx, log, file)
			if err != nil {
				lg.Warn("audit checkpoint failed", "file", file, "err", err)
				continue
			}
			last = cp.Head
			lg.Info("audit checkpoint", "head", cp.Head.String(), "file", file)
		}
	}()
	return func() { cancel(); <-done }
}

// NewChanges wires the changes queue over the install service: its smoke
// check builds the executors the gateway would serve, with the
// configuration's executor options, without calling any server.
func (a *App) NewChanges(db store.ChangeStore, svc *install.Service) (*change.Service, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	opts, err := ExecutorOptions(cfg)
	if err != nil {
		return nil, err
	}
	opts.Registered = db.Registrations
	return change.New(change.Options{Store: db, Installs: svc, Smoke: broker.Smoke(broker.LoadInstalled(svc), opts)})
}

// OpenChanges opens the store, the install service and the changes queue.
func (a *App) OpenChanges(ctx context.Context) (*change.Service, func(), error) {
	svc, db, closeFn, err := a.OpenInstallsDB(ctx)
	if err != nil {
		return nil, nil, err
	}
	cs, err := a.NewChanges(db, svc)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return cs, closeFn, nil
}

// VerifyCheckpoint reads the newest checkpoint of file, signed by key
// (ed25519:BASE64) when key is set, else by this data directory's key when
// it has one.
func (a *App) VerifyCheckpoint(file, key string) (audit.Checkpoint, error) {
	var trusted ed25519.PublicKey
	switch {
	case key != "":
		k, err := audit.ParsePublicKey(key)
		if err != nil {
			return audit.Checkpoint{}, Usagef("--key: %v", err)
		}
		trusted = k
	default:
		priv, err := audit.LoadKey(a.AuditKeyPath())
		switch {
		case err == nil:
			trusted = priv.Public().(ed25519.PublicKey)
		case !errors.Is(err, fs.ErrNotExist):
			return audit.Checkpoint{}, err
		}
	}
	cp, err := audit.ReadCheckpoints(file, trusted)
	if err != nil {
		return audit.Checkpoint{}, err
	}
	return cp, nil
}
