package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func (m *Main) scanCommand() *cobra.Command {
	var roots []string
	var trust string
	var asJSON bool
	var maxDepth, maxDirs int
	var sf storageFlags
	var mirrorS3 bool
	c := &cobra.Command{
		Use:   "scan [--root DIR[=scope]]... [--trust first_party] [--json]",
		Short: "Discover, validate and index skills into the registry",
		Long: `Scan skill roots into the registry.

Roots come from --root flags (scope builtin, user or project; project by
default), else from the configuration file, else the conventional locations:
~/.agents/skills (user), ./.agents/skills and ./.claude/skills (project).
A higher scope shadows a skill with the same identity in a lower one, and
the shadowing is reported. Rescans are incremental: an unchanged skill costs
a stat, not a parse. The registry mirrors the roots of the last scan: roots
scanned before but not now (or no longer present) are forgotten with their
skills, and the report counts and names them ("removed: ...").

Each root has a trust: imported unless the configuration file says
"trust: first_party" for it (or, for --root flags, --trust first_party).
Skills under a first_party root activate automatically: the capabilities
their shipped manifest.json declares are served without an operator's
approval, dormant until their credentials are configured. Nothing is
first_party unless configured so.

With tenant_libraries in the configuration, the skill libraries tenants
upload to the bucket are synced first and scanned as one root per tenant
(scope tenant), whose skills only that tenant's agents see. With
--mirror-s3 (or s3.mirror_roots: true), the valid skills of the scanned roots
are uploaded to the bucket afterwards, so that replicas without the
directories serve them (docs/storage.md).

Rejected skills are reported with their reasons; they do not fail the scan.
Exit codes: 0 scanned, 1 a root could not be read, 2 usage error.`,
		Example: "  skillgate scan --root examples/skills\n  skillgate scan --root ~/.agents/skills=user --root .agents/skills --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer app.ScanMemory(os.Getenv)()
			cfg, err := m.config()
			if err != nil {
				return err
			}
			rs, err := m.app().Roots(roots, trust, cfg)
			if err != nil {
				return err
			}
			reg, closeFn, err := m.app().OpenRegistry(cmd.Context(), app.Limits(cfg, maxDepth, maxDirs), true)
			if err != nil {
				return err
			}
			defer closeFn()
			progress, endProgress := app.ScanProgress(m.Stderr, asJSON)
			res, err := m.app().ScanAll(cmd.Context(), reg, rs, cfg, app.ScanOptions{Storage: &sf, Mirror: mirrorS3}, progress)
			endProgress()
			if err != nil {
				return err
			}
			if asJSON {
				return jsonout.Write(m.Stdout, res)
			}
			res.WriteText(m.Stdout)
			return nil
		},
	}
	c.Flags().StringArrayVar(&roots, "root", nil, "a root to scan, as DIR or DIR=scope (repeatable)")
	c.Flags().StringVar(&trust, "trust", "", "trust of the --root roots: imported (default) or first_party")
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.Flags().IntVar(&maxDepth, "max-depth", 0, "how deep below a root skills are found (default 6)")
	c.Flags().IntVar(&maxDirs, "max-dirs", 0, "directories read per root before stopping (default 2000)")
	c.Flags().BoolVar(&mirrorS3, "mirror-s3", false, "upload the scanned roots' valid skills to the bucket (see docs/storage.md)")
	m.addS3Flags(c, &sf)
	return c
}
