package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/server"
	"github.com/skillgate/skillgate/skill"
)

func (m *Main) tokenCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "token add|ls|rm",
		Short: "Manage the bearer tokens of 'skillgate serve'",
		Long: `Manage the bearer tokens that 'skillgate serve' accepts. Each token stands
for one principal: an agent id, an agent tier (T0–T4) and a tenant. Tokens
are kept in DATA/tokens.json (mode 0600) as SHA-256 hashes: the secret is
printed once, by 'token add'. A running server picks changes up at the next
request.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr("token needs a subcommand: add, ls or rm (see 'skillgate token --help')")
		},
	}
	path := func() string { return filepath.Join(m.data(), server.TokensFile) }

	var agent, tier, tenant string
	var asJSON bool
	add := &cobra.Command{
		Use:     "add --agent ID --tier T3 [--tenant T] [--json]",
		Short:   "Create a token for a principal and print its secret",
		Example: "  skillgate token add --agent drafter --tier T3 --tenant acme",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := skill.ParseAgentTier(tier)
			if err != nil {
				return usageErr("--tier: %v", err)
			}
			p := capability.Principal{Tenant: tenant, Agent: agent, Tier: t}
			if err := p.Validate(); err != nil {
				return usageErr("%v", err)
			}
			secret, tok, err := server.AddToken(path(), p, time.Now())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(m.Stdout, struct {
					server.Token
					Secret string `json:"secret"`
				}{tok, secret})
			}
			fmt.Fprintln(m.Stdout, secret)
			fmt.Fprintf(m.Stderr, "token %s for %s; the secret above is shown only now\n", tok.ID, p)
			return nil
		},
	}
	add.Flags().StringVar(&agent, "agent", "", "agent id")
	add.Flags().StringVar(&tier, "tier", "", "agent tier, T0–T4")
	add.Flags().StringVar(&tenant, "tenant", "default", "tenant")
	add.Flags().BoolVar(&asJSON, "json", false, "print the token record and secret as JSON")

	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls [--json]",
		Short: "List tokens (ids and principals, never secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			toks, err := server.ListTokens(path())
			if err != nil {
				return err
			}
			if lsJSON {
				if toks == nil {
					toks = []server.Token{}
				}
				return writeJSON(m.Stdout, toks)
			}
			if len(toks) == 0 {
				fmt.Fprintln(m.Stderr, "no tokens; add one with 'skillgate token add --agent ID --tier T3'")
				return nil
			}
			tw := tabwriter.NewWriter(m.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTENANT\tAGENT\tTIER\tCREATED")
			for _, t := range toks {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Tenant, t.Agent, t.Tier, t.CreatedAt.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	ls.Flags().BoolVar(&lsJSON, "json", false, "print as JSON")

	rm := &cobra.Command{
		Use:   "rm ID",
		Short: "Delete a token; it stops working at the next request",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := server.RemoveToken(path(), args[0]); err != nil {
				if errors.Is(err, server.ErrTokenNotFound) {
					return &exitError{code: exitFail, err: err}
				}
				return err
			}
			fmt.Fprintf(m.Stdout, "removed %s\n", args[0])
			return nil
		},
	}
	c.AddCommand(add, ls, rm)
	return c
}
