package main

import (
	"context"
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
func (m *Main) storeLocation() (string, error) {
	if m.storeFlag != "" {
		return m.storeFlag, nil
	}
	if s := m.Getenv("SKILLGATE_STORE"); s != "" {
		return s, nil
	}
	cfg, err := m.config()
	if err != nil {
		return "", err
	}
	if cfg.Store != "" {
		return cfg.Store, nil
	}
	return filepath.Join(m.data(), "skillgate.db"), nil
}

// openStore opens the metadata store (see storeLocation), migrated to
// this build's schema.
func (m *Main) openStore(ctx context.Context) (store.DB, error) {
	loc, err := m.storeLocation()
	if err != nil {
		return nil, err
	}
	if postgres.IsDSN(loc) {
		return postgres.Open(ctx, loc)
	}
	if scheme, _, ok := strings.Cut(loc, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
		return nil, usageErr("--store %s: a store is a postgres:// or postgresql:// URL, or the path of a SQLite file", scheme+"://…")
	}
	return sqlite.Open(ctx, loc)
}

// storeExists reports whether the metadata store may hold a registry
// already: a PostgreSQL database always may, a SQLite file when it exists.
func (m *Main) storeExists() bool {
	loc, err := m.storeLocation()
	if err != nil {
		return false
	}
	if postgres.IsDSN(loc) {
		return true
	}
	_, err = os.Stat(loc)
	return err == nil
}
