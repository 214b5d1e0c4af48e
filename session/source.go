package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/blob"
	"github.com/skillgate/skillgate/store"
)

// Source provides the files of a loaded skill to the agent filesystem: the
// store and key prefix under which the tree of one registry version is
// found. Two implementations exist, selected by configuration: [LocalSource]
// (the skill's own directory, the default) and [BlobSource] (object storage
// laid out as {tenant}/skills/{category}/{name}/...).
type Source interface {
	// Mount returns the store and prefix ("" or ending in "/") holding the
	// tree of version v for tenant. It may do I/O (BlobSource uploads the
	// tree on first use).
	Mount(ctx context.Context, tenant string, v store.Version) (blob.Store, string, error)
}

// LocalSource mounts a skill from the directory the registry scanned: a
// read-only view of exactly the files recorded for its version, read live
// through an os.Root on the skill directory. It writes nothing. The zero
// value is ready to use.
//
// A file with more than one name (a hard link) is not served: a hard link
// inside a skill directory can name any file of the same file system the
// skill's author could link, outside the skill. Roots whose owners use hard
// links on purpose can be listed in HardLinkRoots.
type LocalSource struct {
	// HardLinkRoots are the scanned roots (as recorded, store.Version.Root)
	// whose files may have several names.
	HardLinkRoots []string
}

// Mount implements [Source].
func (l LocalSource) Mount(_ context.Context, _ string, v store.Version) (blob.Store, string, error) {
	t, err := newTree(v.Dir, v.Files)
	if err != nil {
		return nil, "", err
	}
	t.allowHardLinks = slices.Contains(l.HardLinkRoots, v.Root)
	return t, "", nil
}

// BlobSource mounts skills from a [blob.Store] (S3-compatible object storage
// in production) laid out as seed 003 describes:
//
//	{tenant}/skills/{category}/{name}/SKILL.md …
//	{tenant}/skills/{name}/…                       (no category)
//
// The registry indexes skills from local directories, so the object store is
// a mirror: the first time a version is mounted, its recorded files are
// uploaded from the skill directory (each object atomically), objects under
// the prefix that the version does not have are deleted, and the version's
// digest is written to {tenant}/skill-versions/{category}/{name}.digest
// (outside the tree, so agents never see it). Later mounts of the same
// version, from any process, find the digest and upload nothing. Agents that
// read while a new version is being uploaded may see a mix of files of both
// versions.
type BlobSource struct {
	// Store holds the trees; required.
	Store blob.Store
	// Logger receives upload events; nil discards them.
	Logger *slog.Logger

	mu     sync.Mutex
	synced map[string]string // prefix → digest uploaded by this process
}

// Mount implements [Source].
func (b *BlobSource) Mount(ctx context.Context, tenant string, v store.Version) (blob.Store, string, error) {
	prefix, marker, err := skillKeys(tenant, v)
	if err != nil {
		return nil, "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.synced[prefix] == v.Digest && v.Digest != "" {
		return b.Store, prefix, nil
	}
	if err := b.sync(ctx, prefix, marker, v); err != nil {
		return nil, "", fmt.Errorf("session: mirror %s to object storage: %w", v.Key, err)
	}
	if b.synced == nil {
		b.synced = map[string]string{}
	}
	b.synced[prefix] = v.Digest
	return b.Store, prefix, nil
}

// skillKeys returns the tree prefix and the digest marker key of a skill.
// Categories may have several levels ("a/b"); blob.SkillPrefix handles the
// common single-level case.
func skillKeys(tenant string, v store.Version) (prefix, marker string, err error) {
	if strings.Contains(v.Category, "/") {
		base, err := blob.TenantSkillsPrefix(tenant)
		if err != nil {
			return "", "", err
		}
		prefix = base + v.Category + "/" + v.Name + "/"
		if err := blob.ValidatePrefix(prefix); err != nil {
			return "", "", err
		}
	} else if prefix, err = blob.SkillPrefix(tenant, v.Category, v.Name); err != nil {
		return "", "", err
	}
	rel := strings.TrimPrefix(prefix, tenant+"/skills/")
	marker = tenant + "/skill-versions/" + strings.TrimSuffix(rel, "/") + ".digest"
	if err := blob.ValidateKey(marker); err != nil {
		return "", "", err
	}
	return prefix, marker, nil
}

func (b *BlobSource) sync(ctx context.Context, prefix, marker string, v store.Version) error {
	if v.Digest != "" {
		have, _, err := blob.ReadAll(ctx, b.Store, marker, 256)
		if err == nil && string(have) == v.Digest {
			return nil
		}
		if err != nil && !errors.Is(err, blob.ErrNotFound) {
			return err
		}
	}
	src, err := newTree(v.Dir, v.Files)
	if err != nil {
		return err
	}
	existing, err := b.Store.List(ctx, prefix, 0)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, key := range src.keys {
		rc, info, err := src.Get(ctx, key)
		if errors.Is(err, blob.ErrNotFound) {
			continue // removed since the scan: the next scan records it
		}
		if err != nil {
			return err
		}
		err = b.Store.Put(ctx, prefix+key, rc, info.Size)
		rc.Close()
		if err != nil {
			return err
		}
		want[prefix+key] = true
	}
	for _, in := range existing {
		if !want[in.Key] {
			if err := b.Store.Delete(ctx, in.Key); err != nil {
				return err
			}
		}
	}
	if v.Digest != "" {
		if err := b.Store.Put(ctx, marker, strings.NewReader(v.Digest), int64(len(v.Digest))); err != nil {
			return err
		}
	}
	if b.Logger != nil {
		b.Logger.InfoContext(ctx, "skill mirrored to object storage", "skill", v.Key, "prefix", prefix, "files", len(want), "digest", v.Digest)
	}
	return nil
}
