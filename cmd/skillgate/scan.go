package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
	"github.com/skillgate/skillgate/internal/registry/registry"
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
			// Most of what a scan allocates stays live until the commit
			// (about 200 MB at 100,000 skills): at the default 100%
			// growth the GC runs some 20 times, at 400% 6 times, saving
			// about 15% of the CPU time, but then the heap peaks at 5x
			// the live data (a 1 GB RSS at 100,000 skills). So a scan
			// collects at 400% under a soft limit of 400 MiB, from which
			// the GC collects as needed: measured at 100,000 skills,
			// 470 MB peak RSS against 560 MB at GOGC=100 and 1 GB at
			// GOGC=400 alone (bench/README.md). GOGC or GOMEMLIMIT in the
			// environment take precedence.
			if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
				defer debug.SetGCPercent(debug.SetGCPercent(400))
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(scanMemoryLimit))
			}
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
			var progress registry.Progress
			tty, isTTY := app.Terminal(m.Stderr)
			if isTTY && !asJSON {
				last := time.Time{}
				progress = func(phase string, done, total int) {
					if time.Since(last) < 100*time.Millisecond && done != total {
						return
					}
					last = time.Now()
					fmt.Fprintf(tty, "\r\033[Kscanning: %s %d/%d", phase, done, total)
				}
			}
			res, err := m.app().ScanAll(cmd.Context(), reg, rs, cfg, app.ScanOptions{Storage: &sf, Mirror: mirrorS3}, progress)
			if progress != nil {
				fmt.Fprint(tty, "\r\033[K")
			}
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

// scanMemoryLimit is the soft memory limit of a scan (see scanCommand).
const scanMemoryLimit = 400 << 20
