package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/install"
	"github.com/skillgate/skillgate/internal/fileinfo"
	"github.com/skillgate/skillgate/internal/plural"
	"github.com/skillgate/skillgate/lockfile"
)

func (m *Main) lockCommand() *cobra.Command {
	var out string
	var asJSON bool
	c := &cobra.Command{
		Use:   "lock [--out FILE] [--json]",
		Short: "Write skillgate.lock: every enabled skill, where it came from and its digest",
		Long: `Write a lock file (JSON, docs/schemas/lock.v1.json) listing every enabled
skill: the scanned skills of the registry (origin root: the root, the content
digest, the signer when a trusted key signed it) and the enabled imported
skills (origin install: the source, the git ref and the commit it resolved to
or the archive's SHA-256, the content digest, the verified signer, and the
digest of each server's approved tool pins). Check a data directory against
it with 'skillgate verify'; reproduce its installs on a fresh data directory
with 'skillgate install --locked FILE'.`,
		Example: "  skillgate lock\n  skillgate lock --out deploy/skillgate.lock",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := m.app().CurrentLock(cmd.Context())
			if err != nil {
				return err
			}
			b, err := f.Marshal()
			if err != nil {
				return err
			}
			if err := writeFileAtomic(out, b, 0o644); err != nil {
				return err
			}
			if asJSON {
				_, err := m.Stdout.Write(b)
				return err
			}
			fmt.Fprintf(m.Stdout, "locked %s in %s\n", plural.Of(len(f.Skills), "skill", "skills"), out)
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", lockfile.FileName, "lock file to write")
	c.Flags().BoolVar(&asJSON, "json", false, "also print the lock on standard output")
	return c
}

func (m *Main) verifyCommand() *cobra.Command {
	var lockPath string
	var asJSON bool
	c := &cobra.Command{
		Use:   "verify [--lock FILE] [--json]",
		Short: "Compare the enabled skills with a lock file",
		Long: `Rescan the registry's roots (as 'skillgate scan' with no --root does), then
compare every enabled skill, scanned and imported, with the lock file: skills
missing or not locked, and for each skill every field that differs (digest,
source, ref, commit, archive digest, signer, pins). Exit 0 when they match, 1
listing each difference, 2 for a lock file that cannot be read.`,
		Example: "  skillgate verify --lock deploy/skillgate.lock",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			locked, err := readLock(lockPath)
			if err != nil {
				return usageErr("%v", err)
			}
			if err := m.app().Rescan(cmd.Context()); err != nil {
				return err
			}
			now, err := m.app().CurrentLock(cmd.Context())
			if err != nil {
				return err
			}
			diffs := lockfile.Compare(locked, now)
			if asJSON {
				if diffs == nil {
					diffs = []lockfile.Difference{}
				}
				if err := writeJSON(m.Stdout, struct {
					Match       bool                  `json:"match"`
					Differences []lockfile.Difference `json:"differences"`
				}{len(diffs) == 0, diffs}); err != nil {
					return err
				}
			} else {
				for _, d := range diffs {
					fmt.Fprintln(m.Stdout, d.String())
				}
			}
			if len(diffs) > 0 {
				if !asJSON {
					fmt.Fprintf(m.Stderr, "%s from %s\n", plural.Of(len(diffs), "difference", "differences"), lockPath)
				}
				return errFailed
			}
			if !asJSON {
				fmt.Fprintf(m.Stdout, "%s %s\n", plural.Of(len(now.Skills), "skill matches", "skills match"), lockPath)
			}
			return nil
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lockfile.FileName, "lock file to compare with")
	c.Flags().BoolVar(&asJSON, "json", false, `print {"match", "differences"} as JSON`)
	return c
}

// installLocked installs every imported skill of the lock at lockPath from
// its recorded source, pinned to the recorded commit and digest.
func (m *Main) installLocked(ctx context.Context, svc *install.Service, lockPath string, intro install.Introspection) error {
	f, err := readLock(lockPath)
	if err != nil {
		return usageErr("%v", err)
	}
	failed := 0
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
		r, err := failBlocked(svc.InstallFrom(ctx, src, m.app().Actor(), intro))
		var eb *endedBlocked
		switch {
		case err == nil:
			fmt.Fprintf(m.Stdout, "%s %s: %s\n", e.Key, r.Digest, r.State)
		case errors.As(err, &eb):
			fmt.Fprintf(m.Stdout, "%s %s: blocked (see skillgate review %s)\n", e.Key, e.Digest, e.Key)
		case errors.Is(err, install.ErrState):
			fmt.Fprintf(m.Stdout, "%s %s: already recorded (%v)\n", e.Key, e.Digest, err)
		default:
			failed++
			fmt.Fprintf(m.Stderr, "%s: %v\n", e.Key, err)
		}
	}
	if failed > 0 {
		return &exitError{code: exitFail, err: fmt.Errorf("%d of the lock's installs were refused", failed)}
	}
	return nil
}

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

// writeFileAtomic writes data to path through a temporary file beside it.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
