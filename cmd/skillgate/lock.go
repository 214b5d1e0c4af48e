package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/model/lockfile"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
	"github.com/skillgate/skillgate/internal/platform/plural"
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
			f, b, err := m.app().WriteLock(cmd.Context(), out)
			if err != nil {
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
			lc, err := m.app().CheckLock(cmd.Context(), lockPath)
			if err != nil {
				return err
			}
			if asJSON {
				if err := jsonout.Write(m.Stdout, lc); err != nil {
					return err
				}
			} else {
				lc.WriteText(m.Stdout, m.Stderr)
			}
			if !lc.Match {
				return errFailed
			}
			return nil
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lockfile.FileName, "lock file to compare with")
	c.Flags().BoolVar(&asJSON, "json", false, `print {"match", "differences"} as JSON`)
	return c
}
