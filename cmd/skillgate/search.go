package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/agent/catalog"
	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

func (m *Main) searchCommand() *cobra.Command {
	var asJSON, all bool
	var tier, limit int
	var inv, category, trust, tenant string
	c := &cobra.Command{
		Use:   "search QUERY [--json] [--limit N] [--tier N] [--category C]",
		Short: "Find skills for a task, ranked by relevance",
		Long: `Rank the skills 'skillgate ls' lists (the same filters) by relevance to
QUERY, as skill_list ranks them for agents: BM25F over name, category and
description, an exact name first; each with its score. --json prints the
skill_list JSON with a score per skill.

Exit codes: 0 done (also when nothing matches), 1 failure, 2 usage error.`,
		Example: "  skillgate search 'turn a scanned pdf into text'\n  skillgate search pdf --category docs --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := app.ListQuery(registry.Query{Tier: tier, Category: category, Trust: trust, Tenant: tenant}, inv, all)
			if err != nil {
				return err
			}
			rs, err := m.app().Search(cmd.Context(), q, args[0], limit)
			if err != nil {
				return err
			}
			if asJSON {
				_, err := fmt.Fprintln(m.Stdout, catalog.JSON(app.RankedItems(rs)))
				return err
			}
			if len(rs) == 0 {
				fmt.Fprintln(m.Stderr, "no skills match; try other words, or widen the filters")
				return nil
			}
			return registry.WriteRanked(m.Stdout, rs)
		},
	}
	f := c.Flags()
	f.BoolVar(&asJSON, "json", false, "print the skill_list JSON with a score per skill")
	f.IntVar(&limit, "limit", app.DefaultSearchLimit, "at most this many skills (1–1000)")
	f.IntVar(&tier, "tier", 0, "only skills of this tier (1, 2 or 3)")
	f.StringVar(&inv, "invokable-by", "", "only skills an agent of this tier may invoke (T0–T4)")
	f.StringVar(&category, "category", "", "only skills of this category")
	f.StringVar(&tenant, "tenant", "", "what this tenant's agents see: the shared skills and its own library")
	f.StringVar(&trust, "trust", "", "only skills of this trust (first_party or imported)")
	f.BoolVar(&all, "all", false, "include disabled, rejected and shadowed skills")
	return c
}
