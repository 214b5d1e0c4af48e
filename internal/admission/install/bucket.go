package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blobsync"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// bucketRecord is the marker of a version in the bucket, written after
// its tree and artefacts: what they are, so that a restore takes exactly
// them and checks them.
type bucketRecord struct {
	Key    string `json:"key"`
	Digest string `json:"digest"`
	// Files are the skill tree's files (paths relative to skill/).
	Files []skill.File `json:"files"`
	// Artefacts are the artefact files stored beside the tree, each with
	// the SHA-256 of its content.
	Artefacts map[string]string `json:"artefacts"`
	// Packages are the fetched packages' trees stored beside it, one
	// archive per server id (packages/<id>.tar.gz), with its size.
	Packages map[string]int64 `json:"packages,omitempty"`
}

// bucketKeys returns the prefix of a version's objects in the bucket and
// its marker key: {prefix}{key}/{hex}/… and {prefix}{key}/{hex}.json.
func (s *Service) bucketKeys(in store.Install) (string, string, error) {
	tree, marker, err := bucket.ImportKeys(s.bucketPrefix, in.Key, in.Digest)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return tree, marker, nil
}

// replicate writes an approved version's managed tree and artefacts to the
// bucket: the tree first, then the artefacts, then the marker, so that a
// version counts as stored only once all of it is. A version whose marker
// already records the same artefacts uploads nothing.
func (s *Service) replicate(ctx context.Context, in store.Install) error {
	if s.bucket == nil || !in.State.Approved() {
		return nil
	}
	prefix, marker, err := s.bucketKeys(in)
	if err != nil {
		return err
	}
	arts := map[string][]byte{}
	sums := map[string]string{}
	for _, f := range []struct {
		name string
		data json.RawMessage
	}{{manifest.FileProposed, in.Proposed}, {manifest.FileReport, in.Report}, {manifest.FileApproved, in.Manifest}} {
		if len(f.data) > 0 {
			arts[f.name] = f.data
			sum := sha256.Sum256(f.data)
			sums[f.name] = hex.EncodeToString(sum[:])
		}
	}
	if b, _, err := blob.ReadAll(ctx, s.bucket, marker, 64<<20); err == nil {
		var have bucketRecord
		if json.Unmarshal(b, &have) == nil && have.Digest == in.Digest && equalSums(have.Artefacts, sums) {
			return nil
		}
	} else if !errors.Is(err, blob.ErrNotFound) {
		return fmt.Errorf("%w: bucket: %w", ErrStorage, err)
	}
	dir := filepath.Join(in.Dir, SkillDir)
	files, err := managedFiles(dir, s.bucketLimits())
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
	}
	defer root.Close()
	for _, f := range files {
		err := bucket.PutFile(ctx, s.bucket, prefix+SkillDir+"/"+f.Path, root, f)
		if errors.Is(err, bucket.ErrChanged) {
			err = fmt.Errorf("%s changed while being stored", f.Path)
		}
		if err != nil {
			return fmt.Errorf("%w: bucket: %s: %w", ErrStorage, in.Key, err)
		}
	}
	pkgSizes, err := s.replicatePackages(ctx, in, prefix)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(arts)) {
		if err := s.bucket.Put(ctx, prefix+name, strings.NewReader(string(arts[name])), int64(len(arts[name]))); err != nil {
			return fmt.Errorf("%w: bucket: %s: %w", ErrStorage, in.Key, err)
		}
	}
	plain := make([]skill.File, len(files))
	for i, f := range files {
		plain[i] = skill.File{Path: f.Path, Size: f.Size}
	}
	rec, err := json.Marshal(bucketRecord{Key: in.Key, Digest: in.Digest, Files: plain, Artefacts: sums, Packages: pkgSizes})
	if err != nil {
		return err
	}
	if err := s.bucket.Put(ctx, marker, strings.NewReader(string(rec)), int64(len(rec))); err != nil {
		return fmt.Errorf("%w: bucket: %s: %w", ErrStorage, in.Key, err)
	}
	s.log.InfoContext(ctx, "install: version stored in the bucket", "key", in.Key, "digest", in.Digest, "files", len(files))
	return nil
}

// managedFiles lists every regular file of a managed tree (all of them
// make its digest, nested skills and all), sorted, bounded by lim.
func managedFiles(dir string, lim skill.TreeLimits) ([]skill.File, error) {
	var files []skill.File
	var total int64
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		total += fi.Size()
		if len(files) >= lim.MaxFiles || total > lim.MaxBytes {
			return fmt.Errorf("more than %d files or %d bytes", lim.MaxFiles, lim.MaxBytes)
		}
		files = append(files, skill.File{Path: p, Size: fi.Size()})
		return nil
	})
	skill.SortFiles(files)
	return files, err
}

// bucketLimits bound a version's tree in the bucket: the install source's
// limits, else a skill tree's.
func (s *Service) bucketLimits() skill.TreeLimits {
	lim := skill.DefaultTreeLimits
	if s.lim.MaxFiles > 0 {
		lim.MaxFiles = s.lim.MaxFiles
	}
	if s.lim.MaxBytes > 0 {
		lim.MaxBytes = s.lim.MaxBytes
	}
	return lim
}
func equalSums(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// restore brings back from the bucket the managed tree of in, which this
// process lacks (another replica installed it): only the files its marker
// lists, bounded by the source limits, written whole under a temporary
// name and renamed into place, and kept only when their digest is the
// install's. It reports whether the tree is back; the artefacts follow
// from the store (Recover rewrites them).
func (s *Service) restore(ctx context.Context, in store.Install) (bool, error) {
	if s.bucket == nil {
		return false, nil
	}
	prefix, marker, err := s.bucketKeys(in)
	if err != nil {
		return false, err
	}
	b, _, err := blob.ReadAll(ctx, s.bucket, marker, 64<<20)
	if errors.Is(err, blob.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: bucket: %w", ErrStorage, err)
	}
	var rec bucketRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Digest != in.Digest {
		return false, fmt.Errorf("%w: bucket: marker %s is not that of %s", ErrStorage, marker, in.Digest)
	}
	tree := prefix + SkillDir + "/"
	objs := make([]blob.Info, len(rec.Files))
	for i, f := range rec.Files {
		objs[i] = blob.Info{Key: tree + f.Path, Size: f.Size}
	}
	tl := s.bucketLimits()
	lim := blobsync.Limits{MaxFiles: tl.MaxFiles, MaxBytes: tl.MaxBytes, MaxDepth: blobsync.DefaultLimits.MaxDepth}
	dst := filepath.Join(in.Dir, SkillDir)
	if err := blobsync.Materialize(ctx, s.bucket, tree, objs, dst, lim); err != nil {
		return false, fmt.Errorf("%w: restore %s from the bucket: %w", ErrStorage, in.Key, err)
	}
	got, err := dirDigest(dst)
	if want := contentOf(in); err == nil && got != want {
		err = fmt.Errorf("digest %s, recorded %s", got, want)
	}
	if err == nil {
		err = s.restorePackages(ctx, in, prefix, rec)
	}
	if err != nil {
		os.RemoveAll(dst)
		return false, fmt.Errorf("%w: restore %s from the bucket: %w", ErrStorage, in.Key, err)
	}
	s.log.InfoContext(ctx, "install: version restored from the bucket", "key", in.Key, "digest", in.Digest, "files", len(rec.Files))
	return true, nil
}

// dirDigest is the install digest (skill.DigestBytes) of the files under
// dir.
func dirDigest(dir string) (string, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		files[path.Clean(p)] = b
		return nil
	})
	if err != nil {
		return "", err
	}
	return skill.DigestBytes(files), nil
}

// replicatePackages stores the fetched packages of in (their trees, one
// archive per server) under prefix, and returns each archive's size.
func (s *Service) replicatePackages(ctx context.Context, in store.Install, prefix string) (map[string]int64, error) {
	pkgs, err := packagesOf(in)
	if err != nil || len(pkgs) == 0 {
		return nil, err
	}
	sizes := map[string]int64{}
	for _, p := range pkgs {
		tmp, err := os.CreateTemp(s.storage.Root, tmpPrefix+"package-")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStorage, err)
		}
		err = launch.WriteArchive(ctx, tmp, filepath.Join(in.Dir, PackagesDir, p.Server))
		var size int64
		if err == nil {
			size, err = tmp.Seek(0, io.SeekCurrent)
		}
		if err == nil {
			_, err = tmp.Seek(0, io.SeekStart)
		}
		if err == nil {
			err = s.bucket.Put(ctx, bucket.PackageKey(prefix, p.Server), tmp, size)
		}
		tmp.Close()
		os.Remove(tmp.Name())
		if err != nil {
			return nil, fmt.Errorf("%w: bucket: %s: package of server %s: %w", ErrStorage, in.Key, p.Server, err)
		}
		sizes[p.Server] = size
	}
	return sizes, nil
}

// restorePackages brings back from the bucket the fetched packages of in
// that rec lists, each kept only when its tree hashes to the digest
// pinned for it.
func (s *Service) restorePackages(ctx context.Context, in store.Install, prefix string, rec bucketRecord) error {
	pkgs, err := packagesOf(in)
	if err != nil || len(pkgs) == 0 {
		return err
	}
	root := filepath.Join(in.Dir, PackagesDir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	for _, p := range pkgs {
		if _, ok := rec.Packages[p.Server]; !ok {
			return fmt.Errorf("the bucket holds no package for server %s", p.Server)
		}
		r, _, err := s.bucket.Get(ctx, bucket.PackageKey(prefix, p.Server))
		if err != nil {
			return fmt.Errorf("package of server %s: %w", p.Server, err)
		}
		tmp := filepath.Join(root, tmpPrefix+p.Server)
		os.RemoveAll(tmp)
		err = launch.ExtractArchive(ctx, r, tmp)
		r.Close()
		if err != nil {
			return fmt.Errorf("package of server %s: %w", p.Server, err)
		}
		if got, err := launch.TreeDigest(ctx, tmp); err != nil || got != p.Tree {
			os.RemoveAll(tmp)
			return fmt.Errorf("package of server %s: its tree hashes to %s, pinned %s (%v)", p.Server, got, p.Tree, err)
		}
		dst := filepath.Join(root, p.Server)
		os.RemoveAll(dst)
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
	}
	return nil
}
