package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/admission/secscan"
	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func (m *Main) scanSecurityCommand() *cobra.Command {
	var asJSON, asSARIF bool
	var failOn string
	c := &cobra.Command{
		Use:   "scan-security [--json | --sarif] [--fail-on SEVERITY] PATH",
		Short: "Scan a skill's files for hidden instructions, payloads and exfiltration",
		Long: `Scan a skill directory (or one file) with skillgate's content scanner, the
same one every install runs as its admission layer 4 (docs/admission.md):
instructions aimed at the model to ignore its instructions or to hide what it
does; hidden Unicode (tag characters, bidi controls, zero-width runs);
reading credential files or dumping the environment; sending data to the
network from scripts and DNS tunnelling; download-and-execute and encoded
payloads run through a shell or eval; obfuscated code; destructive commands;
persistence (cron, shell start-up files, systemd units, authorized_keys).
Prose is also read with look-alike letters folded and invisible characters
removed; encoded literals in scripts are decoded and read again; shell
scripts and Markdown shell blocks are read by a shell parser, Python and
JavaScript by tokenizers that follow data from downloads, decoded constants
and secrets into runs and sends. Files are classified by how they run (#!
line, mcp.json, an interpreter naming them), not by their extension.
Lineage (a skill derived from a known one) is part of an install's scan,
not of this command.

Each finding has a stable rule id, a severity, FILE:LINE:COLUMN, the
excerpt (invisible characters written as <U+XXXX>), why it matters and how
to fix it. Links are never followed; a binary, oversized or non-UTF-8 file is
a finding, high when the skill runs it. --sarif writes SARIF 2.1.0.

Exit codes: 0 no finding at or above --fail-on (default high), 1 some,
2 usage error (PATH missing, bad flag).`,
		Example: "  skillgate scan-security ./my-skill\n  skillgate scan-security --sarif ./my-skill > skill.sarif\n  skillgate scan-security --fail-on medium --json ./my-skill",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && asSARIF {
				return usageErr("--json and --sarif: choose one")
			}
			rep, threshold, err := app.ScanSecurity(cmd.Context(), args[0], failOn)
			if err != nil {
				return failure(err)
			}
			switch {
			case asSARIF:
				out, err := secscan.SARIF(rep.Findings, nil, version)
				if err != nil {
					return err
				}
				fmt.Fprintln(m.Stdout, string(out))
			case asJSON:
				if err := jsonout.Write(m.Stdout, rep); err != nil {
					return err
				}
			default:
				rep.WriteText(m.Stdout)
			}
			if rep.Worst().Rank() >= threshold.Rank() {
				return errFailed
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.Flags().BoolVar(&asSARIF, "sarif", false, "print the findings as SARIF 2.1.0")
	c.Flags().StringVar(&failOn, "fail-on", "high", "exit 1 when a finding is at least this severe: low, medium, high or critical")
	return c
}
