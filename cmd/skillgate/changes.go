package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/admission/change"
	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

// changeFailure maps the changes queue's errors to exit codes: an unknown
// ID, a decided change, or a decision without a reason is a usage error;
// a change that cannot be applied is a failure.
func changeFailure(err error) error {
	switch {
	case hasExitCode(err):
		return err
	case errors.Is(err, change.ErrNotFound), errors.Is(err, change.ErrInvalid), errors.Is(err, change.ErrDecided):
		return usageErr("%v", err)
	}
	return &exitError{code: exitFail, err: err}
}

func (m *Main) changesCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "changes",
		Short: "The changes queue: promote_provider and update changes that wait for a human",
		Long: `changes lists and decides the changes that wait for a human and are never
applied automatically (docs/admin.md, "Changes"):

  promote_provider  tools of several providers' skills that do the same thing
                    (the npm GitHub and GitLab servers' create_repository),
                    drafted as one executor with one backend per provider.
                    Queued when an install or enable finds them; applying
                    checks the draft again against the approved installs,
                    runs a smoke check (the executor lists and resolves for
                    every provider) and registers executor and backends in
                    one transaction. Rejecting keeps the record: the same
                    proposal is not queued again.
  update            a new version of an approved skill awaiting re-consent
                    (approving it is 'skillgate approve KEY@DIGEST').

Every decision is audited with who made it and why. The admin console's
changes page does the same.

Exit status: 0 ok, 1 the change cannot be applied (the message says what to
do first), 2 usage (unknown ID, missing reason, already decided).`,
	}
	var asJSON, all bool
	ls := &cobra.Command{
		Use:     "ls [--all] [--json]",
		Short:   "List pending changes (--all: decided ones too)",
		Example: "  skillgate changes ls\n  skillgate changes ls --all --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			items, err := m.app().Changes(cmd.Context(), all)
			if err != nil {
				return err
			}
			if asJSON {
				return jsonout.Write(m.Stdout, items)
			}
			return change.WriteList(m.Stdout, items)
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	ls.Flags().BoolVar(&all, "all", false, "list decided changes too")

	var showJSON bool
	show := &cobra.Command{
		Use:     "show ID [--json]",
		Short:   "Show one change: its proposal, evidence and state",
		Example: "  skillgate changes show 3\n  skillgate changes show update:tools/notes@0123456789ab",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return m.onChange(cmd.Context(), showJSON, func(cs *change.Service) (change.Item, error) { return cs.Get(cmd.Context(), args[0]) })
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print JSON")

	decide := func(use, short string, apply bool) *cobra.Command {
		var why, smoke string
		var asJSON bool
		d := &cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return m.onChange(cmd.Context(), asJSON, func(cs *change.Service) (change.Item, error) {
					if apply {
						var o change.ApplyOptions
						if smoke != "" {
							call, err := change.ParseSmokeCall(smoke)
							if err != nil {
								return change.Item{}, err
							}
							o.SmokeCall = call
						}
						return cs.ApproveWith(cmd.Context(), args[0], why, m.app().Actor(), o)
					}
					return cs.Reject(cmd.Context(), args[0], why, m.app().Actor())
				})
			},
		}
		d.Flags().StringVar(&why, "why", "", fmt.Sprintf("why (required for promote_provider and for rejections, at least %d characters)", install.MinWhyLength))
		d.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		if apply {
			d.Flags().StringVar(&smoke, "smoke-call", "", `call a read-only executor through each new backend first: EXECUTOR=JSON`)
		}
		return d
	}
	approve := decide("approve ID --why TEXT", "Apply a change: register a promote_provider executor, or approve an update", true)
	approve.Example = `  skillgate changes approve 3 --why "one create_repository for both forges"`
	reject := decide("reject ID --why TEXT", "Reject a change, keeping its record", false)
	reject.Example = `  skillgate changes reject 3 --why "we keep GitLab repositories separate"`
	c.AddCommand(ls, show, approve, reject)
	return c
}

// onChange opens the queue, runs do and prints the change it returns.
func (m *Main) onChange(ctx context.Context, asJSON bool, do func(*change.Service) (change.Item, error)) error {
	it, err := m.app().OnChange(ctx, do)
	if err != nil {
		return changeFailure(err)
	}
	if asJSON {
		return jsonout.Write(m.Stdout, it)
	}
	it.WriteText(m.Stdout)
	return nil
}
