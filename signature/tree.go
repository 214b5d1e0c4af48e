package signature

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// TreeChecker checks, during a scan, the signatures of the skills of a
// root of one trust tier (first_party): it is the registry's
// SignatureChecker.
type TreeChecker struct {
	// Keyring holds the trusted keys; nil trusts none.
	Keyring *Keyring
	// Trust is the tier the skills are served as; default TrustFirstParty.
	Trust string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// File is the signature file's name, [FileName].
func (c *TreeChecker) File() string { return FileName }

// CheckSignature verifies the signature in tree (a skill directory) for a
// skill named name whose content digest is digest.
func (c *TreeChecker) CheckSignature(ctx context.Context, tree fs.FS, name, digest string) error {
	env, err := readFS(tree, FileName, MaxEnvelopeBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: no %s; sign the skill with skillgate sign DIR --key KEY", ErrUnsigned, FileName)
	}
	if err != nil {
		return fmt.Errorf("%s: %w: %w", FileName, ErrMalformed, err)
	}
	md := ""
	if m, err := readFS(tree, ManifestFile, maxManifestBytes); err == nil {
		sum := sha256.Sum256(m)
		md = "sha256:" + hex.EncodeToString(sum[:])
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", ManifestFile, err)
	}
	kr := c.Keyring
	if kr == nil {
		kr = &Keyring{}
	}
	if _, err := kr.VerifyEnvelope(ctx, env, Subject{Name: name, Digest: digest, ManifestDigest: md}, c.trust(), c.now()); err != nil {
		return fmt.Errorf("%s: %w", FileName, err)
	}
	return nil
}

// Generation identifies what a check's outcome depends on besides the
// skill: the trusted keys, and which of them may sign for the tier now.
func (c *TreeChecker) Generation() string {
	if c.Keyring == nil {
		return "no keys"
	}
	return c.Keyring.Generation(c.trust(), c.now())
}

func (c *TreeChecker) trust() string {
	if c.Trust == "" {
		return TrustFirstParty
	}
	return c.Trust
}

func (c *TreeChecker) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// Generation is a digest of the keys that may sign for trust at now: it
// changes when a key is added, removed, revoked or enters or leaves its
// validity window.
func (k *Keyring) Generation(trust string, now time.Time) string {
	var ids []string
	for id := range k.keys {
		if _, err := k.usable(id, trust, now); err == nil {
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
