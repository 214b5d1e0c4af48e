package app

import (
	"context"
	"time"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/registry/signature"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
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

// rootSignature verifies the signature of the skill in dir under the
// first_party root root as a scan does (the root's signed index when it
// lists the skill, else its own signature) with the keys of signing.keys.
func (a *App) rootSignature(ctx context.Context, root, dir string) (*signature.Provenance, error) {
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
