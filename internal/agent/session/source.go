package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/mirror"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blobsync"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
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
//
// A skill of a tenant library (package library) is mounted for that
// tenant only, and only while its cached directory still holds exactly the
// version the registry recorded: its digest is checked (once per version
// and directory, when Verified is set) unless the scan recorded each file's
// own digest, against which every read is then checked.
type LocalSource struct {
	// HardLinkRoots are the scanned roots (as recorded, store.Version.Root)
	// whose files may have several names.
	HardLinkRoots []string
	// Verified remembers the tenant library versions whose digest was
	// checked; nil checks on every mount.
	Verified *Verified
}

// Mount implements [Source].
func (l LocalSource) Mount(ctx context.Context, tenant string, v store.Version) (blob.Store, string, error) {
	t, err := newTree(v.Dir, v.Files)
	if err != nil {
		return nil, "", err
	}
	t.allowHardLinks = slices.Contains(l.HardLinkRoots, v.Root)
	if owner := discover.TenantOf(v.Scope, v.Root); owner != "" {
		if owner != tenant {
			// Never another tenant's: as if it did not exist.
			return nil, "", fmt.Errorf("%w: %q", ErrSkillNotFound, v.Key)
		}
		// The cache is replaced by the next sync before the scan that
		// follows records it: every read is checked against the file's
		// recorded digest, or, for a version recorded without them, the
		// whole tree once.
		if t.verifyFiles(); t.digests == nil {
			if err := l.Verified.check(ctx, t, v); err != nil {
				return nil, "", err
			}
		}
	}
	return t, "", nil
}

// Verified remembers which skill versions were found to hold exactly their
// recorded content, so that a tree is hashed once per version and
// directory, not on every read. The zero value is ready; it is safe for
// concurrent use.
type Verified struct {
	mu sync.Mutex
	ok map[verifiedKey]bool
}

// verifiedKey names a checked tree: the directory (with its inode, so that
// a tree replaced by a sync is checked again) and the digest.
type verifiedKey struct {
	dir, digest string
	ino         uint64
}

// maxVerified bounds the versions remembered.
const maxVerified = 100_000

// check hashes t's recorded files and compares the digest with v's, unless
// vf already saw that directory hold that digest.
func (vf *Verified) check(ctx context.Context, t *tree, v store.Version) error {
	key := verifiedKey{dir: v.Dir, digest: v.Digest, ino: dirIno(v.Dir)}
	if vf.seen(key) {
		return nil
	}
	files := make([]skill.File, 0, len(t.keys))
	for _, k := range t.keys {
		info, err := t.Stat(ctx, k)
		if err != nil {
			return fmt.Errorf("session: %s changed since it was scanned (%s: %v); rescan", v.Key, k, err)
		}
		files = append(files, skill.File{Path: k, Size: info.Size})
	}
	got, err := blobsync.Digest(ctx, t, "", files)
	if err == nil && got != v.Digest {
		err = fmt.Errorf("digest %s, recorded %s", got, v.Digest)
	}
	if err != nil {
		return fmt.Errorf("session: %s changed since it was scanned (%v); rescan", v.Key, err)
	}
	vf.add(key)
	return nil
}

// seen reports whether key was checked.
func (vf *Verified) seen(key verifiedKey) bool {
	if vf == nil {
		return false
	}
	vf.mu.Lock()
	defer vf.mu.Unlock()
	return vf.ok[key]
}

// add remembers key as checked.
func (vf *Verified) add(key verifiedKey) {
	if vf == nil {
		return
	}
	vf.mu.Lock()
	defer vf.mu.Unlock()
	if vf.ok == nil || len(vf.ok) >= maxVerified {
		vf.ok = map[verifiedKey]bool{}
	}
	vf.ok[key] = true
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
//
// A skill of a tenant library is never written to the store (its prefix
// is the tenant's own upload): it is mounted from the local cache the
// registry scanned, as [LocalSource] mounts it, for its tenant only. When
// tenant libraries share the bucket, set Shared: the other skills are then
// kept once for every tenant under {Shared}skills/… (and their digests
// under {Shared}skill-versions/…), never under a tenant's skills/ prefix.
type BlobSource struct {
	// Store holds the trees; required.
	Store blob.Store
	// Shared, when set ("_global/"), is the prefix of the one copy of the
	// skills that are not a tenant's own.
	Shared string
	// Local mounts tenant library skills (see above).
	Local LocalSource
	// Mirror, when set (bucket.DefaultMirrorPrefix), is where package mirror
	// keeps the scanned roots' skills: a version found there complete is
	// mounted from there (its digest checked once), so a process without
	// the scanned directory serves it; otherwise it is uploaded from its
	// directory as above.
	Mirror string
	// Logger receives upload events; nil discards them.
	Logger *slog.Logger

	mu     sync.Mutex
	synced map[string]string // prefix → digest uploaded by this process
}

// Mount implements [Source].
func (b *BlobSource) Mount(ctx context.Context, tenant string, v store.Version) (blob.Store, string, error) {
	if discover.TenantOf(v.Scope, v.Root) != "" {
		return b.Local.Mount(ctx, tenant, v)
	}
	prefix, marker, err := bucket.SkillVersionKeys(tenant, v.Category, v.Name)
	if b.Shared != "" {
		prefix, marker, err = bucket.SharedSkillKeys(b.Shared, v.Category, v.Name)
	}
	if err != nil {
		return nil, "", err
	}
	b.mu.Lock()
	done := b.synced[prefix] == v.Digest && v.Digest != ""
	b.mu.Unlock()
	if done {
		return b.Store, prefix, nil
	}
	// The mirror first: one small read, and the only way for a process
	// without the skill's directory.
	if b.Mirror != "" && v.Digest != "" {
		tree, ok, err := b.fromMirror(ctx, v)
		if err != nil {
			return nil, "", err
		}
		if ok {
			return b.Store, tree, nil
		}
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

// fromMirror returns the prefix of v's tree in the mirror, when it is
// there complete and holds v's digest.
func (b *BlobSource) fromMirror(ctx context.Context, v store.Version) (string, bool, error) {
	if tree, _, err := bucket.MirrorTree(b.Mirror, v.Digest); err == nil && b.Local.Verified.seen(verifiedKey{dir: tree, digest: v.Digest}) {
		return tree, true, nil
	}
	tree, files, err := mirror.Files(ctx, b.Store, b.Mirror, v.Digest)
	if errors.Is(err, blob.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	key := verifiedKey{dir: tree, digest: v.Digest}
	if b.Local.Verified.seen(key) {
		return tree, true, nil
	}
	got, err := blobsync.Digest(ctx, b.Store, tree, files)
	if err != nil || got != v.Digest {
		if b.Logger != nil {
			b.Logger.WarnContext(ctx, "mirrored skill does not match its digest; serving it from its directory", "skill", v.Key, "tree", tree, "digest", got, "want", v.Digest, "err", err)
		}
		return "", false, nil
	}
	b.Local.Verified.add(key)
	return tree, true, nil
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
