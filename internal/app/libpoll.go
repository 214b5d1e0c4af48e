package app

import (
	"context"
	"path/filepath"
	"time"

	"github.com/skillgate/skillgate/internal/registry/library"
	"github.com/skillgate/skillgate/internal/storage/blob"
)

// DefaultLibraryPoll is how often 'serve' lists the bucket for changes
// of the tenant libraries when tenant_libraries.poll_interval is not set.
const DefaultLibraryPoll = 10 * time.Second

// minLibraryPoll bounds the poll interval from below: each poll lists the
// bucket once per tenant.
const minLibraryPoll = 500 * time.Millisecond

// tenantLibrary returns the tenant libraries of cfg over the bucket b.
func (a *App) tenantLibrary(cfg *Config, b blob.Store) (*library.Library, error) {
	lib, err := library.New(library.Options{Store: b, Dir: filepath.Join(a.Data(), "libraries"),
		Tenants: cfg.TenantLibraries.Tenants, MaxTenants: cfg.TenantLibraries.MaxTenants,
		MaxObjects: cfg.TenantLibraries.MaxObjects, Logger: a.log})
	if err != nil {
		return nil, Usagef("tenant_libraries: %v", err)
	}
	return lib, nil
}

// libraryPoll returns the interval of tenant_libraries.poll_interval (0:
// off, or libraries off) and a check that reports whether the bucket's
// libraries changed since the last sync (library.Changed). A listing that
// fails counts as a change, so the rescan that follows reports it.
func (a *App) libraryPoll(cfg *Config, so ScanOptions) (time.Duration, func(context.Context) bool, error) {
	if cfg.TenantLibraries.Store != "s3" {
		return 0, nil, nil
	}
	every := DefaultLibraryPoll
	switch s := cfg.TenantLibraries.PollInterval; s {
	case "":
	case "0", "never":
		return 0, nil, nil
	default:
		d, err := time.ParseDuration(s)
		if err != nil || d < minLibraryPoll {
			return 0, nil, Usagef("tenant_libraries.poll_interval: %q is not a duration of at least %s like 10s or 1m (0 turns polling off)", s, minLibraryPoll)
		}
		every = d
	}
	sf := so.Storage
	if sf == nil {
		sf = a.envStorage()
	}
	b, err := a.bucket(sf, cfg)
	if err != nil {
		return 0, nil, Usagef("tenant_libraries: the bucket: %v", err)
	}
	lib, err := a.tenantLibrary(cfg, b)
	if err != nil {
		return 0, nil, err
	}
	return every, func(ctx context.Context) bool {
		changed, err := lib.Changed(ctx)
		if err != nil {
			a.log.WarnContext(ctx, "tenant libraries: poll failed; rescanning", "err", err)
		}
		return changed
	}, nil
}
