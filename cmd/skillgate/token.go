package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func (m *Main) tokenCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "token add|ls|rm",
		Short: "Manage the bearer tokens of 'skillgate serve'",
		Long: `Manage the bearer tokens that 'skillgate serve' accepts. Each token stands
for one principal: an agent id, an agent tier (T0–T4) and a tenant. Tokens
are kept in DATA/tokens.json (mode 0600) as SHA-256 hashes, or in the
metadata store when that is PostgreSQL (so that every replica on it accepts
them): the secret is printed once, by 'token add'. A running server picks
changes up at the next request (within a second on PostgreSQL).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr("token needs a subcommand: add, ls or rm (see 'skillgate token --help')")
		},
	}
	var agent, tier, tenant, parent string
	var forward []string
	var asJSON bool
	add := &cobra.Command{
		Use:   "add --agent ID --tier T3 [--tenant T] [--parent TENANT/AGENT --forward EXT/CAP,...] [--json]",
		Short: "Create a token for a principal and print its secret",
		Long: `Create a token for a principal and print its secret. With --parent and
--forward the principal is a sub-agent, as with 'mcp --parent': its scope is
what was forwarded within its parent's (whose token gives its tier).`,
		Example: "  skillgate token add --agent drafter --tier T3 --tenant acme\n  skillgate token add --agent scout --tier T3 --tenant acme --parent acme/drafter --forward fs/read_text_file",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			secret, tok, p, err := m.app().AddSubAgentToken(cmd.Context(), agent, tier, tenant, parent, forward)
			if err != nil {
				return err
			}
			if asJSON {
				return jsonout.Write(m.Stdout, struct {
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
	add.Flags().StringVar(&parent, "parent", "", "make it a sub-agent of this agent (TENANT/AGENT, which has a token)")
	add.Flags().StringSliceVar(&forward, "forward", nil, "capabilities the parent forwards, SKILL:EXT/CAP,… (with --parent)")

	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls [--json]",
		Short: "List tokens (ids and principals, never secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			toks, err := m.app().Tokens(cmd.Context())
			if err != nil {
				return err
			}
			return m.list(lsJSON, toks, len(toks), "no tokens; add one with 'skillgate token add --agent ID --tier T3'", func(w io.Writer) error { return server.WriteTokens(w, toks) })
		},
	}
	ls.Flags().BoolVar(&lsJSON, "json", false, "print as JSON")

	rm := &cobra.Command{
		Use:   "rm ID",
		Short: "Delete a token; it stops working at the next request",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := m.app().RemoveToken(cmd.Context(), args[0]); err != nil {
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
