// Package registry is the skill registry service: it scans configured
// roots into the store incrementally, resolves precedence between scopes,
// and answers the queries the CLI, the catalog and agents need.
package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// ErrNotFound means no skill matches a name.
var ErrNotFound = errors.New("skill not found")

// ErrAmbiguous means a bare name matches skills in several categories.
var ErrAmbiguous = errors.New("skill name is ambiguous")

// Options configures a Registry. The zero value is usable.
type Options struct {
	// Limits bound each root's walk; zero means discover.DefaultLimits.
	Limits discover.Limits
	// Workers parse and hash changed skills in parallel; zero means one
	// per CPU.
	Workers int
	// Logger receives scan events; nil discards them.
	Logger *slog.Logger
	// Signatures checks the signatures of the skills of first_party
	// roots: a skill there without a valid one is rejected, with the
	// reason. Nil trusts no key, so every such skill is rejected.
	Signatures SignatureChecker
}

// SignatureChecker verifies the signatures of the skills of first_party
// roots (package signature implements it; the registry knows no keys and
// no signature formats).
type SignatureChecker interface {
	// Root prepares the checks of the skills under the first_party root
	// (an absolute path) for one scan: what the root holds for all of its
	// skills (a signed index) is read and verified here, once.
	Root(ctx context.Context, root string) RootSignatures
}

// SignatureCheckerFunc is a function as a [SignatureChecker].
type SignatureCheckerFunc func(ctx context.Context, root string) RootSignatures

// Root calls f.
func (f SignatureCheckerFunc) Root(ctx context.Context, root string) RootSignatures {
	return f(ctx, root)
}

// RootSignatures checks the signatures of the skills of one root during
// one scan. It must be safe for concurrent use.
type RootSignatures interface {
	// Evidence reads what the check of the skill in dir (rel: its path
	// under the root, slash-separated, "." for the root itself) rests on
	// besides its files. fingerprint and data change whenever the check's
	// outcome may change although the skill's files did not (its
	// signature file, the root's index, the trusted keys or their validity
	// windows): the scan mixes both into the skill's fingerprint, so that
	// a rescan checks such a skill again. data is handed back to Check,
	// so that nothing is read twice.
	Evidence(ctx context.Context, rel, dir string) (fingerprint string, data []byte)
	// Check returns nil when the skill at rel, named name, with content
	// digest digest and files (with their own digests) is validly signed,
	// else why not. tree is the skill directory, read without following
	// links.
	Check(ctx context.Context, tree fs.FS, rel string, data []byte, name, digest string, files []skill.File) error
}

// unsignedRoots rejects every skill of a first_party root when no keys
// are trusted.
type unsignedRoots struct{}

// Root is the same for every root: nothing to read.
func (unsignedRoots) Root(context.Context, string) RootSignatures { return unsignedRoots{} }

// Evidence is constant: with no key trusted, every skill is rejected
// whatever its signature file holds, so nothing is read.
func (unsignedRoots) Evidence(context.Context, string, string) (string, []byte) {
	return "unchecked", nil
}
func (unsignedRoots) Check(context.Context, fs.FS, string, []byte, string, string, []skill.File) error {
	return errors.New("no signing keys are trusted for first_party skills; list them under signing.keys in config.yaml (see docs/supply-chain.md)")
}

// Registry is the registry service over a store. It is safe for concurrent
// use; scans are serialised.
type Registry struct {
	store store.Store
	// cache is the store, when it keeps the scan cache (discover.Cache).
	cache  discover.Cache
	opts   Options
	log    *slog.Logger
	scanMu sync.Mutex
	// snap is the latest catalog snapshot; snapMu serialises its builds.
	snap   atomic.Pointer[Snapshot]
	snapMu sync.Mutex
	// tenantSnaps are the snapshots of tenants with a library, at
	// generation tenantGen (see TenantSnapshot).
	tenantMu    sync.Mutex
	tenantGen   int64
	tenantSnaps map[string]*Snapshot
}

// New returns a registry over st.
func New(st store.Store, opts Options) *Registry {
	if opts.Limits == (discover.Limits{}) {
		opts.Limits = discover.DefaultLimits
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cache, _ := st.(discover.Cache)
	return &Registry{store: st, cache: cache, opts: opts, log: log}
}

// signatures is the checker of first_party skills.
func (r *Registry) signatures() SignatureChecker {
	if r.opts.Signatures == nil {
		return unsignedRoots{}
	}
	return r.opts.Signatures
}

// Versions returns the store's versions matching f, with everything
// recorded of them (file lists included unless f says otherwise).
func (r *Registry) Versions(ctx context.Context, f store.Filter) ([]store.Version, error) {
	return r.store.Versions(ctx, f)
}

// Roots returns the configured roots as last scanned.
func (r *Registry) Roots(ctx context.Context) ([]store.Root, error) { return r.store.Roots(ctx) }

// NotScanned returns the warnings of the last scan about skills it left
// out for their depth whose directory is dir, or whose directory's name
// (what a skill's name must be) is dir: why show finds no such skill.
func (r *Registry) NotScanned(ctx context.Context, dir string) ([]string, error) {
	roots, err := r.store.Roots(ctx)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	var out []string
	for _, rt := range roots {
		for _, n := range rt.Notes {
			if d, ok := discover.DroppedDir(n); ok && (d == abs || filepath.Base(d) == dir) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// SetEnabled enables or disables a skill by name or key.
func (r *Registry) SetEnabled(ctx context.Context, name string, enabled bool) error {
	v, err := r.Get(ctx, name)
	if err != nil {
		return err
	}
	return r.store.SetEnabled(ctx, v.Key, enabled)
}

func errorf(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)
}
