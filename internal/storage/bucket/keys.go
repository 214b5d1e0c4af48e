package bucket

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/blob"
)

// SkillVersionKeys returns the tree prefix of a tenant's skill and the key
// of the marker holding the digest of the tree stored there. Categories may
// have several levels ("a/b").
func SkillVersionKeys(tenant, category, name string) (prefix, marker string, err error) {
	if strings.Contains(category, "/") {
		base, err := TenantSkillsPrefix(tenant)
		if err != nil {
			return "", "", err
		}
		prefix = base + category + "/" + name + "/"
		if err := blob.ValidatePrefix(prefix); err != nil {
			return "", "", err
		}
	} else if prefix, err = SkillPrefix(tenant, category, name); err != nil {
		return "", "", err
	}
	rel := strings.TrimPrefix(prefix, tenant+"/"+skillsDir+"/")
	marker = tenant + "/skill-versions/" + strings.TrimSuffix(rel, "/") + ".digest"
	if err := blob.ValidateKey(marker); err != nil {
		return "", "", err
	}
	return prefix, marker, nil
}

// SharedSkillKeys returns the tree prefix and digest marker key of a skill
// kept once for every tenant under shared (a prefix ending in "/").
func SharedSkillKeys(shared, category, name string) (prefix, marker string, err error) {
	rel := name
	if category != "" {
		rel = category + "/" + name
	}
	prefix = shared + skillsDir + "/" + rel + "/"
	marker = shared + "skill-versions/" + rel + ".digest"
	if err := blob.ValidatePrefix(prefix); err != nil {
		return "", "", err
	}
	if err := blob.ValidateKey(marker); err != nil {
		return "", "", err
	}
	return prefix, marker, nil
}

// DefaultMirrorPrefix is where the scanned roots' valid skills are
// mirrored for replicas without the directories.
const DefaultMirrorPrefix = "_mirror/"

// MirrorMarkerExt ends the key of a mirrored tree's marker.
const MirrorMarkerExt = ".tree"

// MirrorTrees returns the prefix under which prefix's mirrored trees live.
func MirrorTrees(prefix string) string { return prefix + "trees/" }

// MirrorTree returns the prefix of the mirrored tree of digest under
// prefix, and its marker key. The error wraps blob.ErrInvalidKey for a
// digest that is not sha256:<64 hex digits>.
func MirrorTree(prefix, digest string) (tree, marker string, err error) {
	hex, ok := skill.DigestHex(digest)
	if !ok || len(hex) != 64 {
		return "", "", fmt.Errorf("%w: digest %q is not sha256:<64 hex digits>", blob.ErrInvalidKey, digest)
	}
	return MirrorTrees(prefix) + hex + "/", MirrorTrees(prefix) + hex + MirrorMarkerExt, nil
}

// DefaultLoadedPrefix is where the versions agents loaded are copied by
// digest (a mirror layout: {prefix}trees/{hex}/…), so that an agent keeps
// reading the version it loaded while its author edits the skill's files
// in place.
const DefaultLoadedPrefix = "_loaded/"

// DefaultImportsPrefix is where approved imported versions are kept: a
// name no tenant can have, since installs are shared by every tenant.
const DefaultImportsPrefix = "_global/imports/"

// ImportKeys returns the prefix of an imported version's objects under
// prefix and its marker key: {prefix}{key}/{hex}/… and
// {prefix}{key}/{hex}.json. The error wraps blob.ErrInvalidKey.
func ImportKeys(prefix, key, digest string) (tree, marker string, err error) {
	h, ok := skill.DigestHex(digest)
	if !ok {
		return "", "", fmt.Errorf("%w: %s: digest %q is not sha256:<hex>", blob.ErrInvalidKey, key, digest)
	}
	base := prefix + key + "/" + h
	if err := blob.ValidateKey(base + ".json"); err != nil {
		return "", "", fmt.Errorf("%s: %w", key, err)
	}
	return base + "/", base + ".json", nil
}

// PackageKey returns the key of the archive of a server's fetched packages
// in an imported version's tree (ImportKeys).
func PackageKey(tree, serverID string) string {
	return tree + "packages/" + serverID + ".tar.gz"
}

// ErrChanged means a file is not the regular file of the size its listing
// recorded: it changed after it was listed.
var ErrChanged = errors.New("changed since it was listed")

// PutFile copies the listed file f of root to key of st, refusing
// anything but the regular file of the listed size (an error wrapping
// [ErrChanged] that names the file). Every copy of a skill tree into the
// bucket goes through it or, from another store, [CopyFile].
func PutFile(ctx context.Context, st blob.Store, key string, root *os.Root, f skill.File) error {
	r, err := root.Open(filepath.FromSlash(f.Path))
	if err != nil {
		return err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() != f.Size {
		return fmt.Errorf("%s: %w", f.Path, ErrChanged)
	}
	return st.Put(ctx, key, r, f.Size)
}

// CopyFile copies the listed file f, found at srcKey of src, to key of
// dst, refusing anything but the listed size (an error wrapping
// [ErrChanged] that names the file): [PutFile] for a skill tree read
// through a [blob.Store] (a session's view of a skill directory).
func CopyFile(ctx context.Context, dst blob.Store, key string, src blob.Store, srcKey string, f skill.File) error {
	r, info, err := src.Get(ctx, srcKey)
	if err != nil {
		return err
	}
	defer r.Close()
	if info.Size != f.Size {
		return fmt.Errorf("%s: %w", f.Path, ErrChanged)
	}
	return dst.Put(ctx, key, r, f.Size)
}
