package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/library"
	"github.com/skillgate/skillgate/internal/registry/mirror"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/s3"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Storage selects where loaded skills and workspaces are stored (the
// --skills-store, --s3-* and --mount flags of cmd, each defaulting to its
// environment variable); the S3 credentials come from the environment
// only, so they never show in a process listing.
type Storage struct {
	Kind     string // "local" or "s3"
	Endpoint string
	Bucket   string
	Region   string
	Prefix   string
	Mounts   []string // PATH=DIR, read-only
}

// sharedPrefix is where, with tenant libraries in the bucket, the skills
// every tenant may load are kept once (session.BlobSource.Shared), and the
// prefix of imported versions: no tenant id starts with "_".
const sharedPrefix = "_global/"

// bucket opens the S3 bucket the flags (or SKILLGATE_S3_*, or the
// configuration's s3 section) name.
func (a *App) bucket(sf *Storage, cfg *Config) (*s3.Store, error) {
	pick := func(flag, conf string) string {
		if flag != "" {
			return flag
		}
		return conf
	}
	return s3.New(s3.Config{
		Endpoint: pick(sf.Endpoint, cfg.S3.Endpoint), Bucket: pick(sf.Bucket, cfg.S3.Bucket),
		Region: pick(sf.Region, cfg.S3.Region), Prefix: pick(sf.Prefix, cfg.S3.Prefix),
		AccessKey: a.getenv("SKILLGATE_S3_ACCESS_KEY"), SecretKey: a.getenv("SKILLGATE_S3_SECRET_KEY"),
	})
}

// envStorage is the storage selection of a command without storage flags:
// the SKILLGATE_* variables alone.
func (a *App) envStorage() *Storage {
	return &Storage{
		Kind:     envOr(a.getenv("SKILLGATE_SKILLS_STORE"), "local"),
		Endpoint: a.getenv("SKILLGATE_S3_ENDPOINT"), Bucket: a.getenv("SKILLGATE_S3_BUCKET"),
		Region: a.getenv("SKILLGATE_S3_REGION"), Prefix: a.getenv("SKILLGATE_S3_PREFIX"),
	}
}

// blobSource is the session source of --skills-store s3: tenant library
// skills from their cache, the others from the mirror when it holds them,
// else uploaded on first load (once for all tenants when tenant libraries
// share the bucket).
func (a *App) blobSource(st blob.Store, cfg *Config, hardLinks []string, log *slog.Logger) *session.BlobSource {
	src := &session.BlobSource{Store: st, Logger: log, Mirror: bucket.DefaultMirrorPrefix,
		Local: session.LocalSource{HardLinkRoots: hardLinks, Verified: &session.Verified{}}}
	if cfg.TenantLibraries.Store != "" {
		src.Shared = sharedPrefix
	}
	return src
}

// ScanOptions are what a scan does besides walking the roots.
type ScanOptions struct {
	// Storage names the bucket; nil: the SKILLGATE_* variables.
	Storage *Storage
	// Mirror uploads the scanned roots' skills to the bucket, as
	// s3.mirror_roots in the configuration does.
	Mirror bool
}

// ScanResult is a scan's report with what the bucket added to it.
type ScanResult struct {
	*registry.ScanReport
	Libraries *library.Report `json:"libraries,omitempty"`
	Mirror    *mirror.Report  `json:"mirror,omitempty"`
}

// ScanAll syncs the tenant libraries (when configured), scans them with
// roots, and mirrors the result (when asked).
func (a *App) ScanAll(ctx context.Context, reg *registry.Registry,
	roots []discover.Root, cfg *Config, so ScanOptions, progress registry.Progress) (*ScanResult, error) {
	res := &ScanResult{}
	var st *s3.Store
	openBucket := func() (*s3.Store, error) {
		if st != nil {
			return st, nil
		}
		sf := so.Storage
		if sf == nil {
			sf = a.envStorage()
		}
		var err error
		if st, err = a.bucket(sf, cfg); err != nil {
			return nil, Usagef("the bucket: %v (set --s3-endpoint and --s3-bucket, SKILLGATE_S3_*, or s3: in the configuration; credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)", err)
		}
		return st, nil
	}
	switch cfg.TenantLibraries.Store {
	case "":
	case "s3":
		b, err := openBucket()
		if err != nil {
			return nil, err
		}
		lib, err := a.tenantLibrary(cfg, b)
		if err != nil {
			return nil, err
		}
		rep, troots, err := lib.Sync(ctx)
		if err != nil {
			return nil, err
		}
		res.Libraries = rep
		roots = append(roots, troots...)
	default:
		return nil, Usagef("tenant_libraries.store must be s3 (or left out), not %q", cfg.TenantLibraries.Store)
	}
	rep, err := reg.Scan(ctx, roots, progress)
	if err != nil {
		return nil, err
	}
	res.ScanReport = rep
	if so.Mirror || cfg.S3.MirrorRoots {
		b, err := openBucket()
		if err != nil {
			return nil, err
		}
		vs, err := reg.Versions(ctx, store.Filter{})
		if err != nil {
			return nil, err
		}
		if res.Mirror, err = mirror.Mirror(ctx, b, bucket.DefaultMirrorPrefix, vs, a.log); err != nil {
			return nil, fmt.Errorf("mirror: %w", err)
		}
	}
	return res, nil
}

// envOr is v, or def when v is empty.
func envOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
