package signature

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
)

// TreeChecker checks, during a scan, the signatures of the skills of the
// roots of one trust tier (first_party): [TreeChecker.Root] is what the
// registry calls once per root.
type TreeChecker struct {
	// Keyring holds the trusted keys; nil trusts none.
	Keyring *Keyring
	// Trust is the tier the skills are served as; default TrustFirstParty.
	Trust string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Root prepares the checks of the skills under root (an absolute path)
// for one scan: it reads and verifies the root's signed index once, when
// there is one.
func (c *TreeChecker) Root(ctx context.Context, root string) *RootCheck {
	kr := c.Keyring
	if kr == nil {
		kr = &Keyring{}
	}
	trust := c.Trust
	if trust == "" {
		trust = TrustFirstParty
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	return kr.Root(ctx, root, trust, now)
}

// RootCheck checks the signatures of the skills under one root for one
// tier at one time. A skill the root's signed index ([IndexFileName])
// lists is valid when its content is what the index signed: the index
// alone decides for the skills it lists. Any other skill needs a valid
// signature of its own ([FileName]). An index that cannot be used (not
// well formed, untrusted, revoked or expired key, altered) rejects every
// skill without a signature of its own, with the index's reason. It is
// safe for concurrent use.
type RootCheck struct {
	root, trust string
	kr          *Keyring
	now         time.Time
	// gen is the keyring's generation for trust at now.
	gen string
	// index is the verified index, or nil; indexErr says why an index
	// present cannot be used; state summarises both for fingerprints.
	index    *Index
	indexErr error
	state    string
	// listed is the start of the fingerprint of each skill the index
	// lists, which its entry completes.
	listed string
}

// Root prepares the checks of the skills under root for tier trust at
// now, reading and verifying root's signed index once.
func (k *Keyring) Root(ctx context.Context, root, trust string, now time.Time) *RootCheck {
	rc := &RootCheck{root: root, trust: trust, kr: k, now: now, gen: k.Generation(trust, now), state: "no index"}
	data, err := readIndexFile(root, rc.fix())
	switch {
	case err != nil:
		rc.indexErr, rc.state = err, "unreadable index: "+err.Error()
	case data != nil:
		rc.index, rc.indexErr = k.verifyIndex(ctx, data, trust, now, rc.fix())
		rc.state = "index " + indexDigest(data)
		if rc.index != nil {
			rc.listed = rc.gen + "\x00" + rc.state + "\x00listed by " + rc.index.KeyID + "\x00" + rc.index.Predicate.Trust + "\x00"
		}
	}
	return rc
}

// fix is what to do about this root's index.
func (rc *RootCheck) fix() fix {
	return fix{"root", "skillgate sign --root " + rc.root + " --key KEY"}
}

// IndexPath is the root's signed index file (whether or not there is one).
func (rc *RootCheck) IndexPath() string { return filepath.Join(rc.root, IndexFileName) }

// Index returns the root's verified index (nil when there is none, or
// when it cannot be used) and why an index present cannot be used.
func (rc *RootCheck) Index() (*Index, error) { return rc.index, rc.indexErr }

// Evidence reads what the check of the skill in dir, at rel (slash
// separated, "." for the root itself) under the root, rests on besides
// its files, once: nothing more for a skill the index lists, else its own
// signature file (data; nil when there is none or it is not a regular
// file, which the check then reports). fingerprint changes whenever the
// check's outcome may change although the skill's files did not: the
// trusted keys, the index, the skill's entry in it or its own signature
// file. A scan mixes both into the skill's fingerprint, and hands data
// to [RootCheck.Check], so that the file is read once.
func (rc *RootCheck) Evidence(_ context.Context, rel, dir string) (fingerprint string, data []byte) {
	if rc.index != nil {
		if e, ok := rc.index.entries[rel]; ok {
			return rc.listed + e.digest + "\x00" + e.manifest, nil
		}
	}
	fingerprint = rc.gen + "\x00" + rc.state + "\x00"
	data, err := readRegular(filepath.Join(dir, FileName), MaxEnvelopeBytes)
	if err != nil {
		return fingerprint + "own: none", nil
	}
	return fingerprint + "own", data
}

// Check returns nil when the skill at rel under the root, named name,
// whose content digest is digest and whose files (with their own digests,
// as [skill.DigestFiles] records them) are files, is signed: by the
// root's index when it lists rel, else by its own signature, given as
// data by [RootCheck.Evidence] (nil: read from tree, the skill
// directory). Its errors name the file at fault and what to do, and wrap
// the reasons [Keyring.Verify] uses.
func (rc *RootCheck) Check(ctx context.Context, tree fs.FS, rel string, data []byte, name, digest string, files []skill.File) error {
	want := Subject{Name: name, Digest: digest, ManifestDigest: listedManifest(files)}
	if rc.index != nil && rc.index.Lists(rel) {
		// The common case of a signed root: a comparison, nothing kept.
		if _, err := rc.index.match(rel, want); err != nil {
			return rc.indexMismatch(err)
		}
		return nil
	}
	_, err := rc.check(ctx, tree, rel, data, want, FileName)
	return err
}

// indexMismatch words err, the index's verdict on a skill it lists.
func (rc *RootCheck) indexMismatch(err error) error {
	return fmt.Errorf("%s: %w; review the change and %s", rc.IndexPath(), err, rc.fix())
}

// check is Check, returning the provenance of a valid signature; own is
// how its errors name the skill's own signature file.
func (rc *RootCheck) check(ctx context.Context, tree fs.FS, rel string, data []byte, want Subject, own string) (*Provenance, error) {
	if rc.index != nil && rc.index.Lists(rel) {
		p, err := rc.index.Check(rel, want)
		if err != nil {
			return nil, rc.indexMismatch(err)
		}
		p.Index = rc.IndexPath()
		return p, nil
	}
	if data == nil {
		var err error
		data, err = readFS(tree, FileName, MaxEnvelopeBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist) && rc.indexErr != nil:
			return nil, fmt.Errorf("%s: %w; %s has no %s of its own", rc.IndexPath(), rc.indexErr, printable(rel), FileName)
		case errors.Is(err, fs.ErrNotExist) && rc.index != nil:
			return nil, fmt.Errorf("%w: %s is not in the signed index %s and has no %s of its own; sign the root again (skillgate sign --root %s --key KEY) or the skill (skillgate sign DIR --key KEY)", ErrUnsigned, printable(rel), rc.IndexPath(), FileName, rc.root)
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%w: no %s; sign the skill with skillgate sign DIR --key KEY, or the root with skillgate sign --root %s --key KEY", ErrUnsigned, FileName, rc.root)
		case err != nil:
			return nil, fmt.Errorf("%s: %w: %w", own, ErrMalformed, err)
		}
	}
	p, err := rc.kr.VerifyEnvelope(ctx, data, want, rc.trust, rc.now)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", own, err)
	}
	return p, nil
}

// Verify checks the signature of the skill in dir, a directory under the
// root (not through a link), as a scan does, and returns its provenance.
func (rc *RootCheck) Verify(ctx context.Context, dir string) (*Provenance, error) {
	rel, err := relUnder(rc.root, dir)
	if err != nil {
		return nil, err
	}
	sub, err := subjectOf(ctx, dir)
	if err != nil {
		return nil, err
	}
	tree, err := discover.OpenTree(dir)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	return rc.check(ctx, tree, rel, nil, sub, filepath.Join(dir, FileName))
}

// relUnder is dir relative to root, slash-separated, when dir is root or
// below it with no link on the way.
func relUnder(root, dir string) (string, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absRoot, absDir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not under the root %s", dir, root)
	}
	realRoot, err1 := filepath.EvalSymlinks(absRoot)
	realDir, err2 := filepath.EvalSymlinks(absDir)
	if err := errors.Join(err1, err2); err != nil {
		return "", err
	}
	if filepath.Join(realRoot, rel) != realDir {
		return "", fmt.Errorf("%s is reached through a symbolic link under %s: a scan never follows one", dir, root)
	}
	return filepath.ToSlash(rel), nil
}

// Generation is a digest of the keys that may sign for trust at now: it
// changes when a key is added, removed, revoked or enters or leaves its
// validity window.
func (k *Keyring) Generation(trust string, now time.Time) string {
	var ids []string
	for id := range k.keys {
		if _, err := k.usable(id, trust, now, againSkill); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	sum := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	return hex.EncodeToString(sum[:8])
}

// readFS reads the regular file name of fsys, at most max bytes.
func readFS(fsys fs.FS, name string, max int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}
