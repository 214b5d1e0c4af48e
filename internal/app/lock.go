package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/model/lockfile"
	"github.com/skillgate/skillgate/internal/platform/atomicfile"
	"github.com/skillgate/skillgate/internal/platform/fileinfo"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/registry/signature"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// WriteLock writes the lock of what is enabled now to path (through a
// temporary file beside it) and returns it with its bytes.
func (a *App) WriteLock(ctx context.Context, path string) (*lockfile.File, []byte, error) {
	f, err := a.currentLock(ctx)
	if err != nil {
		return nil, nil, err
	}
	b, err := f.Marshal()
	if err != nil {
		return nil, nil, err
	}
	if err := atomicfile.Write(path, b, 0o644); err != nil {
		return nil, nil, err
	}
	return f, b, nil
}

// VerifyLock rescans the registry's roots (as 'skillgate scan' without
// --root) and compares what is enabled then with the lock at path; a lock
// that cannot be read is a usage error.
func (a *App) VerifyLock(ctx context.Context, path string) (now *lockfile.File, diffs []lockfile.Difference, err error) {
	locked, err := readLock(path)
	if err != nil {
		return nil, nil, Usagef("%v", err)
	}
	if err := a.Rescan(ctx); err != nil {
		return nil, nil, err
	}
	if now, err = a.currentLock(ctx); err != nil {
		return nil, nil, err
	}
	return now, lockfile.Compare(locked, now), nil
}

// LockedInstall is the outcome of one install of a lock ([App.InstallLocked]).
type LockedInstall struct {
	Entry lockfile.Entry
	// Review is the install's review when it was recorded.
	Review *install.Review
	// Blocked says the install ended blocked.
	Blocked bool
	// Err is why the install was refused; an install the service had
	// recorded already has install.ErrState.
	Err error
}

// Blocked reports whether an analysis left r blocked: the install itself
// blocked, or, after approval, capabilities blocked by drift from their
// approved pins.
func Blocked(r *install.Review) bool {
	return r != nil && (r.State == store.StateBlocked || len(r.Blocked) > 0)
}

// InstallLocked installs every imported skill of the lock at path from its
// recorded source, pinned to the recorded commit and digest, and tells
// each outcome to each as it is known; a lock that cannot be read is a
// usage error.
func (a *App) InstallLocked(ctx context.Context, svc *install.Service, path string, intro install.Introspection, each func(LockedInstall)) error {
	f, err := readLock(path)
	if err != nil {
		return Usagef("%v", err)
	}
	for _, e := range f.Skills {
		if e.Origin != lockfile.OriginInstall {
			continue
		}
		src := install.Source{Location: e.Source, Ref: e.Ref, Path: e.Path, SHA256: e.ArchiveSHA256, Commit: e.Commit, Digest: e.Digest}
		if e.Commit != "" && e.Ref == "" {
			src.Ref = e.Commit
		}
		for id, p := range e.Packages {
			if src.Packages == nil {
				src.Packages = map[string]string{}
			}
			src.Packages[id] = p.Version
		}
		r, err := svc.InstallFrom(ctx, src, a.Actor(), intro)
		each(LockedInstall{Entry: e, Review: r, Blocked: err == nil && Blocked(r), Err: err})
	}
	return nil
}

// readLock reads and parses the lock file at path.
func readLock(path string) (*lockfile.File, error) {
	b, err := fileinfo.ReadRegular(path, lockfile.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	f, err := lockfile.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// currentLock is the lock of what is enabled now.
func (a *App) currentLock(ctx context.Context) (*lockfile.File, error) {
	_, kr, err := a.configKeyring()
	if err != nil {
		return nil, err
	}
	svc, closeInst, err := a.OpenInstalls(ctx)
	if err != nil {
		return nil, err
	}
	defer closeInst()
	inst, err := svc.LockEntries(ctx)
	if err != nil {
		return nil, err
	}
	// Enabled installs are in the registry too, under managed storage:
	// they are locked as installs, with their sources.
	managed, err := filepath.Abs(svc.Storage().Root)
	if err != nil {
		return nil, err
	}
	reg, closeReg, err := a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		return nil, err
	}
	es, err := reg.List(ctx, registry.Query{})
	closeReg()
	if err != nil {
		return nil, err
	}
	var entries []lockfile.Entry
	now := time.Now()
	roots := map[string]*signature.RootCheck{}
	for _, e := range es {
		if root, err := filepath.Abs(e.Root); err == nil && root == managed {
			continue
		}
		le := lockfile.Entry{Key: e.Key, Origin: lockfile.OriginRoot, Trust: e.Trust, Source: e.Root, Digest: e.Digest}
		// The signer of a skill its root's signed index lists, or of its
		// own signature, as a scan verifies them; one verification of
		// each root's index.
		trust := e.Trust
		if trust != signature.TrustFirstParty {
			trust = signature.TrustImported
		}
		rk := e.Root + "\x00" + trust
		rc, ok := roots[rk]
		if !ok {
			rc = kr.Root(ctx, e.Root, trust, now)
			roots[rk] = rc
		}
		if ix, _ := rc.Index(); ix != nil || fileExists(filepath.Join(e.Dir, signature.FileName)) {
			if p, err := rc.Verify(ctx, e.Dir); err == nil {
				le.Signer = p.Signer
			}
		}
		entries = append(entries, le)
	}
	return lockfile.New(append(entries, inst...)), nil
}

// Rescan scans the registry's roots again, as `scan` without --root.
func (a *App) Rescan(ctx context.Context) error {
	reg, closeReg, err := a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		return err
	}
	defer closeReg()
	roots, err := a.rescanRoots(ctx, reg, nil, "")
	if err != nil {
		return err
	}
	if len(roots) == 0 {
		return nil
	}
	_, err = reg.Scan(ctx, roots, nil)
	return err
}

// fileExists reports whether p names something, not following a link.
func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// LockCheck is the outcome of 'skillgate verify': the differences between
// the enabled skills and the lock at Path ('verify --json' prints Match and
// Differences).
type LockCheck struct {
	Match       bool                  `json:"match"`
	Differences []lockfile.Difference `json:"differences"`
	now         *lockfile.File
	path        string
}

// CheckLock is [App.VerifyLock] as a LockCheck.
func (a *App) CheckLock(ctx context.Context, path string) (*LockCheck, error) {
	now, diffs, err := a.VerifyLock(ctx, path)
	if err != nil {
		return nil, err
	}
	if diffs == nil {
		diffs = []lockfile.Difference{}
	}
	return &LockCheck{Match: len(diffs) == 0, Differences: diffs, now: now, path: path}, nil
}

// WriteText writes one line per difference to w and their count to notes,
// or that every skill matches.
func (c *LockCheck) WriteText(w, notes io.Writer) {
	for _, d := range c.Differences {
		fmt.Fprintln(w, d.String())
	}
	if !c.Match {
		fmt.Fprintf(notes, "%s from %s\n", plural.Of(len(c.Differences), "difference", "differences"), c.path)
		return
	}
	fmt.Fprintf(w, "%s %s\n", plural.Of(len(c.now.Skills), "skill matches", "skills match"), c.path)
}
