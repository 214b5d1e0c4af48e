package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/plural"
)

// policyStoreCommands are `policy put`, `policy rm` and `policy ls`: the
// policies kept in the metadata store, which every process on it (every
// replica on a shared PostgreSQL) applies, unlike the files of one data
// directory's policies/.
func (m *Main) policyStoreCommands() []*cobra.Command {
	put := &cobra.Command{
		Use:   "put ID FILE|-",
		Short: "Store a Cedar policy text under ID in the store (replacing one with that ID)",
		Long: `Store the Cedar policies of FILE (or standard input, with -) in the metadata
store under ID, replacing the text stored under ID before. The policy set
they join (DATA/policies/*.cedar and every stored text) is checked first: a
text that does not parse, or whose @id clashes, is refused and nothing
changes. Every process on the store applies the change: a running serve
within its watch interval, every replica of a shared PostgreSQL store
within a second. The change is audited (policy.put).`,
		Example: "  skillgate policy put writes writes.cedar\n  skillgate policy put reads - < reads.cedar",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, file := args[0], args[1]
			if err := app.CheckPolicyID(id); err != nil {
				return err
			}
			text, err := app.ReadPolicyText(file, m.Stdin)
			if err != nil {
				return err
			}
			n, err := m.app().PutPolicy(ctx, id, text)
			if err != nil {
				return failure(err)
			}
			fmt.Fprintf(m.Stdout, "stored policy %s (%s in the set)\n", id, plural.Of(n, "policy", "policies"))
			return nil
		},
	}
	rm := &cobra.Command{
		Use:   "rm ID",
		Short: "Remove the policy text stored under ID",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := m.app().RemovePolicy(ctx, args[0]); err != nil {
				return failure(err)
			}
			fmt.Fprintf(m.Stdout, "removed policy %s\n", args[0])
			return nil
		},
	}
	var asJSON bool
	ls := &cobra.Command{
		Use:   "ls [--json]",
		Short: "List the policy texts stored in the store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, err := m.app().StoredPolicies(cmd.Context())
			if err != nil {
				return err
			}
			return m.list(asJSON, ps, len(ps), "no stored policies; add one with 'skillgate policy put ID FILE'", func(w io.Writer) error { return app.WriteStoredPolicies(w, ps) })
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print as JSON (with the texts)")
	return []*cobra.Command{put, rm, ls}
}
