package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// rescanRoots returns the roots a running server rescans: --root flags,
// else the roots the registry was last scanned with (so that a server never
// forgets skills a `skillgate scan --root` added), else the configured or
// conventional roots. Each keeps the bounds of its last walk where they
// were wider than the registry's (`skillgate scan --max-dirs`): a rescan
// must not drop skills because it stopped earlier than the scan that
// found them. Narrower bounds take an explicit scan.
func (a *App) rescanRoots(ctx context.Context, reg *registry.Registry, flagRoots []string, flagTrust string) ([]discover.Root, error) {
	roots, err := a.rescanRootsOnly(ctx, reg, flagRoots, flagTrust)
	if err != nil {
		return nil, err
	}
	for i := range roots {
		abs, err := filepath.Abs(roots[i].Path)
		if err != nil {
			continue // the scan reports it
		}
		rec, ok, err := reg.RecordedLimits(ctx, abs)
		if err != nil {
			a.log.WarnContext(ctx, "scan cache unusable", "root", abs, "err", err)
			continue
		}
		if ok {
			if w := discover.Widest(reg.Limits(), rec); w != reg.Limits() {
				roots[i].Limits = w
			}
		}
	}
	return roots, nil
}

// rescanRootsOnly is rescanRoots without the recorded bounds.
func (a *App) rescanRootsOnly(ctx context.Context, reg *registry.Registry, flagRoots []string, flagTrust string) ([]discover.Root, error) {
	if len(flagRoots) == 0 {
		recorded, err := reg.Roots(ctx)
		if err != nil {
			return nil, err
		}
		var roots []discover.Root
		for _, r := range recorded {
			if r.Scope == registry.ScopeImported || r.Scope == discover.ScopeTenant.String() {
				// The managed skills of installs, and tenant libraries
				// (synced from the bucket by every scan): not roots to
				// scan as such.
				continue
			}
			sc, err := discover.ParseScope(r.Scope)
			if err != nil {
				return nil, fmt.Errorf("recorded root %s: %w", r.Path, err)
			}
			trust := capability.Trust(r.Trust)
			if !trust.Valid() {
				trust = capability.TrustImported
			}
			roots = append(roots, discover.Root{Path: r.Path, Scope: sc, Trust: trust})
		}
		if len(roots) > 0 {
			return roots, nil
		}
	}
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	return a.Roots(flagRoots, flagTrust, cfg)
}
