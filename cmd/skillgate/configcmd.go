package main

import (
	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func (m *Main) configCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Check the configuration file",
	}
	var asJSON bool
	check := &cobra.Command{
		Use:   "check [--config F] [--json]",
		Short: "Check a configuration file as every command loads it, and say what to fix",
		Long: `Load the configuration file (--config F, else DATA/config.yaml) exactly as
every command does, its shape and then its values (durations, scopes, trust
levels, sandbox modes, executor providers, package settings, signing keys
and their files), and print 'config FILE: valid' or every problem, each
naming the file, the line or field, and what to write instead. Without
--config and with no DATA/config.yaml, say so: skillgate then runs with its
defaults. examples/config.yaml shows every key the file accepts.

--json prints {path, found, valid, problems}.

Exit codes: 0 valid (or no file), 1 problems found, 2 usage error.`,
		Example: "  skillgate config check\n  skillgate config check --config examples/config.yaml --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := m.app().CheckConfig()
			if err != nil {
				return err
			}
			if asJSON {
				err = jsonout.Write(m.Stdout, r)
			} else {
				err = r.WriteText(m.Stdout, m.Stderr)
			}
			if err != nil {
				return err
			}
			if !r.Valid {
				return errFailed
			}
			return nil
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print the verdict and the problems as JSON")
	c.AddCommand(check)
	return c
}
