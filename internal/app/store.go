package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/postgres"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// storeLocation is the metadata store the command uses: --store, else
// SKILLGATE_STORE, else the configuration's store:, else the SQLite file
// DATA/skillgate.db. A postgres:// or postgresql:// URL names a
// PostgreSQL database; anything else is the path of a SQLite file.
func (a *App) storeLocation() (string, error) {
	if a.opts.Store != "" {
		return a.opts.Store, nil
	}
	if s := a.getenv("SKILLGATE_STORE"); s != "" {
		return s, nil
	}
	cfg, err := a.Config()
	if err != nil {
		return "", err
	}
	if cfg.Store != "" {
		return cfg.Store, nil
	}
	return filepath.Join(a.Data(), "skillgate.db"), nil
}

// openStore opens the metadata store (see storeLocation), migrated to
// this build's schema.
func (a *App) OpenStore(ctx context.Context) (store.DB, error) {
	loc, err := a.storeLocation()
	if err != nil {
		return nil, err
	}
	if postgres.IsDSN(loc) {
		return postgres.Open(ctx, loc)
	}
	if scheme, _, ok := strings.Cut(loc, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
		return nil, Usagef("--store %s: a store is a postgres:// or postgresql:// URL, or the path of a SQLite file", scheme+"://…")
	}
	return sqlite.Open(ctx, loc)
}

// storeExists reports whether the metadata store may hold a registry
// already: a PostgreSQL database always may, a SQLite file when it exists.
func (a *App) storeExists() bool {
	loc, err := a.storeLocation()
	if err != nil {
		return false
	}
	if postgres.IsDSN(loc) {
		return true
	}
	_, err = os.Stat(loc)
	return err == nil
}

// sharedFiles is a store that keeps documents every process on it shares
// (store/postgres): with it, the bearer tokens and the encrypted
// credential store live in the store instead of the data directory, so
// that every replica on the database sees the same ones.
type sharedFiles interface {
	ReadFile(ctx context.Context, name string) ([]byte, int64, error)
	FileRevision(ctx context.Context, name string) (int64, error)
	UpdateFile(ctx context.Context, name string, change func(old []byte) ([]byte, error)) (int64, error)
}

// sharedStore returns the store's shared documents when the metadata
// store is PostgreSQL, and nil otherwise. db, when not nil, is the store
// the command already opened; else the store is opened for the rest of
// the command.
func (a *App) sharedStore(ctx context.Context, db store.DB) (sharedFiles, error) {
	if db != nil {
		sf, _ := db.(sharedFiles)
		return sf, nil
	}
	loc, err := a.storeLocation()
	if err != nil {
		return nil, err
	}
	if !postgres.IsDSN(loc) {
		return nil, nil
	}
	if a.shared == nil {
		pg, err := postgres.Open(ctx, loc)
		if err != nil {
			return nil, err
		}
		a.shared = pg
	}
	return a.shared, nil
}

// errShared aborts adoptFile's update: the store holds the document
// already.
var errShared = errors.New("already in the store")

// adoptFile copies the data directory's file local into the store as the
// shared document name the first time a command uses the store's copy
// (the store has none yet and the file exists), so that tokens and
// credentials made before the store was PostgreSQL keep working. The file
// is left in place, unused from then on; a note on stderr says so.
func (a *App) adoptFile(ctx context.Context, sf sharedFiles, name, local string) error {
	rev, err := sf.FileRevision(ctx, name)
	if err != nil || rev != 0 {
		return err
	}
	b, err := os.ReadFile(local)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = sf.UpdateFile(ctx, name, func(old []byte) ([]byte, error) {
		if old != nil {
			return nil, errShared
		}
		return b, nil
	})
	if errors.Is(err, errShared) {
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "skillgate: %s copied into the PostgreSQL store, where every process on it reads it from now on; the file is no longer used\n", local)
	return nil
}
