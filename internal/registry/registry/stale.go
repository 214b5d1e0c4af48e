package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/registry/discover"
)

// StaleEmpty is what [Registry.Stale] says of a registry that holds no
// root yet while one of the roots exists.
const StaleEmpty = "the registry is empty"

// Stale says why a [Registry.Scan] of roots would change the registry, or
// "" when it would not: a server scans at start only when its registry is
// older than its roots. The registry is older when
//
//   - it holds no root yet (an empty data directory) while a root exists;
//   - a root exists that the last scan did not cover, or covered with
//     another scope, trust or position;
//   - the last scan covered a root that roots leave out (a scan would
//     forget it); a root whose directory is gone is not a reason, since a
//     scan at start would forget its skills (a replica has no roots);
//   - the record of a root's last walk (its stamp: the times and sizes
//     of every directory and file it read, see [discover.Changed]) is
//     missing or no longer matches the tree: a file was edited, added or
//     removed.
//
// It reads the recorded roots and stats each directory and file of the
// roots once; it writes nothing. Roots are given as to Scan. What a stamp
// cannot see (trusted signing keys changed in the configuration, tenant
// libraries in a bucket) needs a scan.
func (r *Registry) Stale(ctx context.Context, roots []discover.Root) (string, error) {
	recorded, err := r.store.Roots(ctx)
	if err != nil {
		return "", err
	}
	type rec struct {
		scope, trust string
		pos          int
	}
	byPath := make(map[string]rec, len(recorded))
	for _, rr := range recorded {
		if rr.Scope == ScopeImported || rr.Scope == discover.ScopeTenant.String() {
			continue // installs' managed skills and tenant libraries: not roots
		}
		byPath[rr.Path] = rec{rr.Scope, rr.Trust, rr.Position}
	}
	given := make(map[string]bool, len(roots))
	for i, root := range roots {
		abs, err := filepath.Abs(root.Path)
		if err != nil {
			return "", fmt.Errorf("root %s: %w", root.Path, err)
		}
		if given[abs] {
			continue // a scan skips a repeated root too
		}
		given[abs] = true
		fi, err := os.Stat(abs)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("root %s: %w", abs, err)
		}
		got, known := byPath[abs]
		switch {
		case err != nil:
			// A missing directory is no reason to scan at start: the scan
			// would forget its skills (a replica serving the mirror has no
			// roots); an explicit scan does that.
			continue
		case !fi.IsDir():
			return fmt.Sprintf("root %s is not a directory", abs), nil
		case len(byPath) == 0:
			return StaleEmpty, nil
		case !known:
			return fmt.Sprintf("root %s was not scanned", abs), nil
		case got != rec{root.Scope.String(), string(rootTrust(root)), i}:
			return fmt.Sprintf("root %s was scanned with another scope, trust or position", abs), nil
		}
		why, err := discover.Changed(ctx, root, r.limits(root), r.cache)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return fmt.Sprintf("root %s: %v", abs, err), nil
		}
		if why != "" {
			return fmt.Sprintf("root %s %s", abs, why), nil
		}
	}
	for p := range byPath {
		if !given[p] {
			return fmt.Sprintf("root %s is no longer configured", p), nil
		}
	}
	return "", nil
}
