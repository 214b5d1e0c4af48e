package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/skill"
)

type validateResult struct {
	Path        string             `json:"path"`
	Valid       bool               `json:"valid"`
	Mode        string             `json:"mode"`
	Name        string             `json:"name,omitempty"`
	Errors      []string           `json:"errors"`
	Warnings    []string           `json:"warnings"`
	Diagnostics []skill.Diagnostic `json:"diagnostics"`
	Skill       *skill.Skill       `json:"skill,omitempty"`
}

func (m *Main) validateCommand() *cobra.Command {
	var strict, asJSON bool
	c := &cobra.Command{
		Use:   "validate [--strict] [--json] PATH...",
		Short: "Validate skills (a skill directory or its SKILL.md)",
		Long: `Validate one or more skills.

By default skills are judged leniently, as discovery loads them: cosmetic
problems are warnings. With --strict the verdict and the messages are those
of the reference validator skills-ref, so tools built against it can switch;
skillgate's own extension checks then appear as warnings in --json output only.

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
			var results []validateResult
			allValid := true
			for _, a := range args {
				dir := skill.ResolvePath(a)
				s, err := skill.Load(cmd.Context(), dir, skill.Options{Mode: mode})
				if err != nil {
					return err
				}
				r := validateResult{Path: dir, Valid: s.Valid(), Mode: mode.String(), Name: s.Name,
					Errors: nonNil(s.Errors()), Warnings: nonNil(s.Warnings()), Diagnostics: nonNil(s.Diagnostics)}
				if s.Valid() {
					r.Skill = s
				}
				allValid = allValid && r.Valid
				results = append(results, r)
				if asJSON {
					continue
				}
				if r.Valid {
					fmt.Fprintf(m.Stdout, "Valid skill: %s\n", dir)
					if !strict {
						for _, w := range r.Warnings {
							fmt.Fprintf(m.Stdout, "  warning: %s\n", w)
						}
					}
					continue
				}
				fmt.Fprintf(m.Stderr, "Validation failed for %s:\n", dir)
				for _, e := range r.Errors {
					fmt.Fprintf(m.Stderr, "  - %s\n", e)
				}
				if !strict {
					for _, w := range r.Warnings {
						fmt.Fprintf(m.Stderr, "  warning: %s\n", w)
					}
				}
			}
			if asJSON {
				if err := writeJSON(m.Stdout, results); err != nil {
					return err
				}
			}
			if !allValid {
				return errFailed
			}
			return nil
		},
	}
	c.Flags().BoolVar(&strict, "strict", false, "judge exactly as the reference validator skills-ref does")
	c.Flags().BoolVar(&asJSON, "json", false, "print results as JSON")
	return c
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
