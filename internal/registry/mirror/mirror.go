// Package mirror uploads the valid skills of the scanned roots to object
// storage, so that a process that lacks the roots' directories (another
// replica) can serve them from the bucket.
//
// The mirror is content-addressed: the tree of a version with digest
// sha256:<hex> is stored once under
//
//	{Prefix}trees/<hex>/…          the files, exactly as scanned
//	{Prefix}trees/<hex>.tree       its file list, written last
//
// A tree counts only once its .tree marker exists, and the marker is
// written after every file has been uploaded and the uploaded tree's digest
// checked against the version's, so a crash mid-upload leaves a tree that
// no one serves and the next run completes. Mirroring is idempotent: a
// version whose marker exists uploads nothing (one listing of the markers
// finds them, not a request per skill), and trees no scanned version uses
// any more are removed (marker first). Missing trees are uploaded 16 at a
// time.
package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blobsync"
	"github.com/skillgate/skillgate/internal/storage/bucket"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Workers is how many skills Mirror uploads at once.
const Workers = 16

// Report is what one mirroring did.
type Report struct {
	// Skills are the versions mirrored: Uploaded now, Unchanged already
	// there. Removed are trees of versions no longer scanned.
	Skills    int `json:"skills"`
	Uploaded  int `json:"uploaded"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
	// Failed are the skills that could not be mirrored, with why.
	Failed []string `json:"failed"`
}

// Mirrorable reports whether v is mirrored: a valid current version of a
// scanned root (not a tenant's library, which already lives in the
// bucket, nor an install, kept by the install flow).
func Mirrorable(v store.Version) bool {
	return v.Valid && v.Current && v.Digest != "" && v.Scope != store.ScopeImported && discover.TenantOf(v.Scope, v.Root) == ""
}

// Mirror uploads the mirrorable versions of vs (with their recorded file
// lists) under prefix of st and removes the trees no version of vs uses.
// A version that cannot be uploaded (its files changed since the scan) is
// reported in Failed and does not stop the others.
func Mirror(ctx context.Context, st blob.Store, prefix string, vs []store.Version, log *slog.Logger) (*Report, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := blob.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	rep := &Report{Failed: []string{}}
	// One listing says which trees are complete (their markers), instead
	// of a request per skill.
	listed, err := blob.ListDir(ctx, st, bucket.MirrorTrees(prefix), 0)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, f := range listed.Files {
		have[strings.TrimSuffix(strings.TrimPrefix(f.Key, bucket.MirrorTrees(prefix)), bucket.MirrorMarkerExt)] = true
	}
	type job struct {
		v            store.Version
		hex          string
		tree, marker string
		err          error
	}
	var jobs []*job
	want := map[string]bool{} // hex digests
	for _, v := range vs {
		if !Mirrorable(v) {
			continue
		}
		tree, marker, err := bucket.MirrorTree(prefix, v.Digest)
		if err != nil {
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s (%s): %v", v.Key, v.Dir, err))
			continue
		}
		rep.Skills++
		hex := strings.TrimSuffix(strings.TrimPrefix(tree, bucket.MirrorTrees(prefix)), "/")
		if want[hex] || have[hex] {
			want[hex] = true
			rep.Unchanged++
			continue
		}
		want[hex] = true
		jobs = append(jobs, &job{v: v, hex: hex, tree: tree, marker: marker})
	}
	work := make(chan *job)
	var wg sync.WaitGroup
	for range min(Workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.err = upload(ctx, st, j.tree, j.marker, j.v)
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if j.err != nil {
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s (%s): %v", j.v.Key, j.v.Dir, j.err))
			delete(want, j.hex) // not served: its leftovers go
			continue
		}
		rep.Uploaded++
		log.InfoContext(ctx, "skill mirrored", "skill", j.v.Key, "dir", j.v.Dir, "digest", j.v.Digest)
	}
	n, err := sweep(ctx, st, prefix, want)
	rep.Removed = n
	if err != nil {
		return rep, err
	}
	return rep, nil
}

// upload copies v's recorded files from its directory to tree, checks the
// uploaded tree's digest and writes the marker last.
func upload(ctx context.Context, st blob.Store, tree, marker string, v store.Version) error {
	var files []skill.File
	if err := json.Unmarshal(v.Files, &files); err != nil {
		return fmt.Errorf("file list: %w", err)
	}
	// The directory is read through an os.Root: nothing outside it is
	// reachable, and the digest check below catches any other change.
	root, err := os.OpenRoot(v.Dir)
	if err != nil {
		return err
	}
	defer root.Close()
	keys := make([]string, len(files))
	for i, f := range files {
		keys[i] = f.Path
		if err := bucket.PutFile(ctx, st, tree+f.Path, root, f); errors.Is(err, bucket.ErrChanged) {
			return fmt.Errorf("%s changed since the scan; scan again", f.Path)
		} else if err != nil {
			return err
		}
	}
	return seal(ctx, st, tree, marker, keys, files, v.Digest)
}

// seal finishes the upload of a tree holding keys: it removes objects of
// an earlier, interrupted upload that the version lacks, checks the
// uploaded tree's digest against digest and writes the marker last.
func seal(ctx context.Context, st blob.Store, tree, marker string, keys []string, files []skill.File, digest string) error {
	keep := map[string]bool{}
	for _, k := range keys {
		keep[k] = true
	}
	if _, err := blobsync.Prune(ctx, st, tree, keep); err != nil {
		return err
	}
	skill.SortFiles(files)
	plain := make([]skill.File, len(files))
	for i, f := range files {
		plain[i] = skill.File{Path: f.Path, Size: f.Size}
	}
	got, err := blobsync.Digest(ctx, st, tree, plain)
	if err != nil {
		return err
	}
	if got != digest {
		return fmt.Errorf("its files changed since the scan (digest %s, scanned %s); scan again", got, digest)
	}
	b, err := json.Marshal(plain)
	if err != nil {
		return err
	}
	return st.Put(ctx, marker, strings.NewReader(string(b)), int64(len(b)))
}

// sweep removes the trees under prefix whose digest want does not hold:
// the marker first, so that no one serves a tree being removed.
func sweep(ctx context.Context, st blob.Store, prefix string, want map[string]bool) (int, error) {
	d, err := blob.ListDir(ctx, st, bucket.MirrorTrees(prefix), 0)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range d.Files {
		hex := strings.TrimSuffix(strings.TrimPrefix(f.Key, bucket.MirrorTrees(prefix)), bucket.MirrorMarkerExt)
		if want[hex] {
			continue
		}
		if err := st.Delete(ctx, f.Key); err != nil {
			return n, err
		}
		if !slices.Contains(d.Dirs, hex) {
			n++
		}
	}
	for _, hex := range d.Dirs {
		if want[hex] {
			continue
		}
		if _, err := blobsync.Prune(ctx, st, bucket.MirrorTrees(prefix)+hex+"/", nil); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Files returns the file list of the mirrored tree of digest, or an error
// wrapping blob.ErrNotFound when it is not (completely) mirrored.
func Files(ctx context.Context, st blob.Store, prefix, digest string) (tree string, files []skill.File, err error) {
	tree, marker, err := bucket.MirrorTree(prefix, digest)
	if err != nil {
		return "", nil, err
	}
	b, _, err := blob.ReadAll(ctx, st, marker, 16<<20)
	if err != nil {
		return "", nil, err
	}
	if err := json.Unmarshal(b, &files); err != nil {
		return "", nil, fmt.Errorf("mirror: marker %s: %w", marker, err)
	}
	return tree, files, nil
}

// ErrTooLarge means a version is over the bounds of a [CopyTree].
var ErrTooLarge = errors.New("skill version too large to copy")

// CopyTree makes the content-addressed tree of version v under prefix of
// dst ({prefix}trees/<hex>/…, the layout of [Mirror]) from its recorded
// files as src serves them under srcPrefix, unless that tree is already
// complete, and returns the tree's prefix. The copy is checked against
// v.Digest before its marker is written, so a file changed since the scan
// leaves no tree (an error saying so). A version of more than maxFiles
// files or maxBytes bytes is not copied ([ErrTooLarge]).
func CopyTree(ctx context.Context, dst blob.Store, prefix string, v store.Version, src blob.Store, srcPrefix string, maxFiles int, maxBytes int64) (string, error) {
	tree, marker, err := bucket.MirrorTree(prefix, v.Digest)
	if err != nil {
		return "", err
	}
	if _, _, err := Files(ctx, dst, prefix, v.Digest); err == nil {
		return tree, nil
	} else if !errors.Is(err, blob.ErrNotFound) {
		return "", err
	}
	var files []skill.File
	if err := json.Unmarshal(v.Files, &files); err != nil {
		return "", fmt.Errorf("file list: %w", err)
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	if len(files) > maxFiles || total > maxBytes {
		return "", fmt.Errorf("%w: %d files, %d bytes (at most %d files, %d bytes)", ErrTooLarge, len(files), total, maxFiles, maxBytes)
	}
	keys := make([]string, len(files))
	for i, f := range files {
		keys[i] = f.Path
		if err := bucket.CopyFile(ctx, dst, tree+f.Path, src, srcPrefix+f.Path, f); errors.Is(err, bucket.ErrChanged) || errors.Is(err, blob.ErrNotFound) {
			return "", fmt.Errorf("%s changed since the scan; scan again", f.Path)
		} else if err != nil {
			return "", err
		}
	}
	if err := seal(ctx, dst, tree, marker, keys, files, v.Digest); err != nil {
		return "", err
	}
	return tree, nil
}

// Sweep removes the trees under prefix whose digest keep does not hold
// (digests as recorded, sha256:<hex>), except those whose marker is more
// recent than since (copies another process may have just made), and
// returns how many it removed.
func Sweep(ctx context.Context, st blob.Store, prefix string, keep map[string]bool, since time.Time) (int, error) {
	d, err := blob.ListDir(ctx, st, bucket.MirrorTrees(prefix), 0)
	if err != nil {
		return 0, err
	}
	want := map[string]bool{}
	for digest := range keep {
		if hex, ok := skill.DigestHex(digest); ok {
			want[hex] = true
		}
	}
	for _, f := range d.Files {
		if f.ModTime.After(since) {
			want[strings.TrimSuffix(strings.TrimPrefix(f.Key, bucket.MirrorTrees(prefix)), bucket.MirrorMarkerExt)] = true
		}
	}
	return sweep(ctx, st, prefix, want)
}
