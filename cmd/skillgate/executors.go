package main

import (
	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
)

func (m *Main) executorsCommand() *cobra.Command {
	var agent, tier, tenant string
	var asJSON bool
	c := &cobra.Command{
		Use:   "executors [--agent A --tier T --tenant X] [--json]",
		Short: "Show every executor, its backends, and why each backend is live or off",
		Long: `executors lists the provider-neutral executors (create_issue,
read_file_contents …) for one principal: for each executor whether it is
live or dormant, the backend a call without a provider would go to and why,
and every backend (provider, skill, server, tool) with why it is live or
off: skill disabled or not installed, capability not approved or blocked by
drift, credential missing for the tenant, out of the agent's scope or
forbidden by policy, or a mapping refused. See docs/executors.md.

Exit status: 0 ok, 1 failure, 2 usage.`,
		Example: "  skillgate executors --agent drafter --tier T3 --tenant acme\n  skillgate executors --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := app.Principal(agent, tier, tenant)
			if err != nil {
				return err
			}
			rep, err := m.app().Executors(cmd.Context(), p)
			if err != nil {
				return err
			}
			if asJSON {
				return rep.WriteJSON(m.Stdout)
			}
			rep.WriteText(m.Stdout)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&agent, "agent", envOr(m.Getenv("SKILLGATE_AGENT"), "operator"), "agent id ($SKILLGATE_AGENT)")
	f.StringVar(&tier, "tier", envOr(m.Getenv("SKILLGATE_TIER"), "T1"), "agent tier, T0–T4 ($SKILLGATE_TIER)")
	f.StringVar(&tenant, "tenant", envOr(m.Getenv("SKILLGATE_TENANT"), "default"), "tenant ($SKILLGATE_TENANT)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
