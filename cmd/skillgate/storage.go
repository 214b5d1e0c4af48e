package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/library"
	"github.com/skillgate/skillgate/internal/registry/mirror"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/s3"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// sharedPrefix is where, with tenant libraries in the bucket, the skills
// every tenant may load are kept once (session.BlobSource.Shared), and the
// prefix of imported versions: no tenant id starts with "_".
const sharedPrefix = "_global/"

// configS3 names the bucket when neither the --s3-* flags nor the
// SKILLGATE_S3_* variables do (credentials come from the environment only).
type configS3 struct {
	Endpoint string `yaml:"endpoint"`
	Bucket   string `yaml:"bucket"`
	Region   string `yaml:"region"`
	Prefix   string `yaml:"prefix"`
	// MirrorRoots uploads the scanned roots' valid skills to the bucket
	// after every scan (scan --mirror-s3 does it once).
	MirrorRoots bool `yaml:"mirror_roots"`
}

// configTenantLibraries turns on per-tenant skill libraries
// (docs/storage.md).
type configTenantLibraries struct {
	// Store is "s3" (the bucket of the S3 settings); "" turns libraries off.
	Store string `yaml:"store"`
	// Tenants limits the libraries to these tenants; empty: every tenant
	// with a {tenant}/skills/ prefix in the bucket.
	Tenants    []string `yaml:"tenants"`
	MaxTenants int      `yaml:"max_tenants"`
	MaxObjects int      `yaml:"max_objects"`
}

// bucket opens the S3 bucket the flags (or SKILLGATE_S3_*, or the
// configuration's s3 section) name.
func (m *Main) bucket(sf *storageFlags, cfg *Config) (*s3.Store, error) {
	pick := func(flag, conf string) string {
		if flag != "" {
			return flag
		}
		return conf
	}
	return s3.New(s3.Config{
		Endpoint: pick(sf.endpoint, cfg.S3.Endpoint), Bucket: pick(sf.bucket, cfg.S3.Bucket),
		Region: pick(sf.region, cfg.S3.Region), Prefix: pick(sf.prefix, cfg.S3.Prefix),
		AccessKey: m.Getenv("SKILLGATE_S3_ACCESS_KEY"), SecretKey: m.Getenv("SKILLGATE_S3_SECRET_KEY"),
	})
}

// envStorage is the storage selection of a command without storage flags:
// the SKILLGATE_* variables alone.
func (m *Main) envStorage() *storageFlags {
	return &storageFlags{
		kind:     envOr(m.Getenv("SKILLGATE_SKILLS_STORE"), "local"),
		endpoint: m.Getenv("SKILLGATE_S3_ENDPOINT"), bucket: m.Getenv("SKILLGATE_S3_BUCKET"),
		region: m.Getenv("SKILLGATE_S3_REGION"), prefix: m.Getenv("SKILLGATE_S3_PREFIX"),
	}
}

// blobSource is the session source of --skills-store s3: tenant library
// skills from their cache, the others from the mirror when it holds them,
// else uploaded on first load (once for all tenants when tenant libraries
// share the bucket).
func (m *Main) blobSource(st blob.Store, cfg *Config, hardLinks []string, log *slog.Logger) *session.BlobSource {
	src := &session.BlobSource{Store: st, Logger: log, Mirror: mirror.DefaultPrefix,
		Local: session.LocalSource{HardLinkRoots: hardLinks, Verified: &session.Verified{}}}
	if cfg.TenantLibraries.Store != "" {
		src.Shared = sharedPrefix
	}
	return src
}

// scanOptions are what a scan does besides walking the roots.
type scanOptions struct {
	storage *storageFlags
	// mirror uploads the scanned roots' skills to the bucket, as
	// s3.mirror_roots in the configuration does.
	mirror bool
}

// scanResult is a scan's report with what the bucket added to it.
type scanResult struct {
	*registry.ScanReport
	Libraries *library.Report `json:"libraries,omitempty"`
	Mirror    *mirror.Report  `json:"mirror,omitempty"`
}

// scanAll syncs the tenant libraries (when configured), scans them with
// roots, and mirrors the result (when asked).
func (m *Main) scanAll(ctx context.Context, reg *registry.Registry,
	roots []discover.Root, cfg *Config, so scanOptions, progress registry.Progress) (*scanResult, error) {
	res := &scanResult{}
	var st *s3.Store
	bucket := func() (*s3.Store, error) {
		if st != nil {
			return st, nil
		}
		sf := so.storage
		if sf == nil {
			sf = m.envStorage()
		}
		var err error
		if st, err = m.bucket(sf, cfg); err != nil {
			return nil, usageErr("the bucket: %v (set --s3-endpoint and --s3-bucket, SKILLGATE_S3_*, or s3: in the configuration; credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)", err)
		}
		return st, nil
	}
	switch cfg.TenantLibraries.Store {
	case "":
	case "s3":
		b, err := bucket()
		if err != nil {
			return nil, err
		}
		lib, err := library.New(library.Options{Store: b, Dir: filepath.Join(m.data(), "libraries"),
			Tenants: cfg.TenantLibraries.Tenants, MaxTenants: cfg.TenantLibraries.MaxTenants,
			MaxObjects: cfg.TenantLibraries.MaxObjects, Logger: m.logger()})
		if err != nil {
			return nil, usageErr("tenant_libraries: %v", err)
		}
		rep, troots, err := lib.Sync(ctx)
		if err != nil {
			return nil, err
		}
		res.Libraries = rep
		roots = append(roots, troots...)
	default:
		return nil, usageErr("tenant_libraries.store must be s3 (or left out), not %q", cfg.TenantLibraries.Store)
	}
	rep, err := reg.Scan(ctx, roots, progress)
	if err != nil {
		return nil, err
	}
	res.ScanReport = rep
	if so.mirror || cfg.S3.MirrorRoots {
		b, err := bucket()
		if err != nil {
			return nil, err
		}
		vs, err := reg.Versions(ctx, store.Filter{})
		if err != nil {
			return nil, err
		}
		if res.Mirror, err = mirror.Mirror(ctx, b, mirror.DefaultPrefix, vs, m.logger()); err != nil {
			return nil, fmt.Errorf("mirror: %w", err)
		}
	}
	return res, nil
}

// printStorage prints what the bucket added to a scan's report.
func printStorage(m *Main, res *scanResult) {
	if res.Libraries != nil {
		for _, n := range res.Libraries.Notes {
			fmt.Fprintf(m.Stdout, "tenant libraries: %s\n", n)
		}
		for _, t := range res.Libraries.Tenants {
			fmt.Fprintf(m.Stdout, "tenant library %s: %s in the bucket, %d copied, %d unchanged, %d removed\n",
				t.Tenant, plural.Of(t.Skills, "skill", "skills"), t.Copied, t.Unchanged, t.Removed)
			for _, r := range t.Refused {
				fmt.Fprintf(m.Stdout, "  refused: %s: %s\n", r.Skill, r.Reason)
			}
			for _, n := range t.Notes {
				fmt.Fprintf(m.Stdout, "  note: %s\n", n)
			}
		}
	}
	if r := res.Mirror; r != nil {
		fmt.Fprintf(m.Stdout, "mirror: %s, %d uploaded, %d unchanged, %d removed\n", plural.Of(r.Skills, "skill", "skills"), r.Uploaded, r.Unchanged, r.Removed)
		for _, f := range r.Failed {
			fmt.Fprintf(m.Stdout, "  failed: %s\n", f)
		}
	}
}
