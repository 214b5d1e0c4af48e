package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

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

// credentialFailure marks the credential store's refusals of bad input
// (an invalid name, scope or value) as usage errors.
func credentialFailure(err error) error {
	switch {
	case errors.Is(err, credential.ErrInvalidName), errors.Is(err, credential.ErrInvalidScope), errors.Is(err, credential.ErrInvalidValue):
		return Usagef("%v", err)
	}
	return err
}
