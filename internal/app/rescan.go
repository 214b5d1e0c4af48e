package app

import (
	"context"
	"fmt"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// rescanRoots returns the roots a running server rescans: --root flags,
// else the roots the registry was last scanned with (so that a server never
// forgets skills a `skillgate scan --root` added), else the configured or
// conventional roots.
func (a *App) rescanRoots(ctx context.Context, reg *registry.Registry, flagRoots []string, flagTrust string) ([]discover.Root, error) {
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
