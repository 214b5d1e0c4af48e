package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func (m *Main) validateCommand() *cobra.Command {
	var strict, asJSON, recursive bool
	var maxDirs int
	c := &cobra.Command{
		Use:   "validate [--strict] [--json] [-r] PATH...",
		Short: "Validate skills (a skill directory or its SKILL.md)",
		Long: `Validate one or more skills.

By default skills are judged leniently, as discovery loads them: cosmetic
problems are warnings. With --strict the verdict and the messages are those
of the reference validator skills-ref, so tools built against it can switch;
skillgate's own extension checks then appear as warnings in --json output only.
With -r, every skill found under each PATH is validated (the discovery
bounds and symlink policy of scan apply).

Exit codes: 0 all valid, 1 any invalid, 2 usage error.`,
		Example: "  skillgate validate --strict .agents/skills/my-skill\n  skillgate validate --json skills/*/SKILL.md",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("validate needs at least one PATH (see 'skillgate validate --help')")
			}
			mode := skill.Lenient
			if strict {
				mode = skill.Strict
			}
			dirs, err := app.SkillDirs(cmd.Context(), args, recursive, maxDirs, m.Stderr)
			var missing *app.MissingPathError
			if errors.As(err, &missing) {
				return &exitError{code: exitFail, err: err}
			}
			if err != nil {
				return err
			}
			results, err := app.Validate(cmd.Context(), dirs, mode)
			if err != nil {
				return err
			}
			allValid := true
			for _, r := range results {
				allValid = allValid && r.Valid
				if asJSON {
					continue
				}
				r.WriteText(m.Stdout, m.Stderr, strict)
			}
			if asJSON {
				if err := jsonout.Write(m.Stdout, results); err != nil {
					return err
				}
			}
			if !allValid {
				return errFailed
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&recursive, "recursive", "r", false, "validate every skill found under each PATH")
	c.Flags().IntVar(&maxDirs, "max-dirs", 0, "with -r: directories read per PATH before stopping (default 2000)")
	c.Flags().BoolVar(&strict, "strict", false, "judge exactly as the reference validator skills-ref does")
	c.Flags().BoolVar(&asJSON, "json", false, "print results as JSON")
	return c
}
