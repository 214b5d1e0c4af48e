package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/agent/catalog"
	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

func (m *Main) lsCommand() *cobra.Command {
	var asJSON, all bool
	var tier int
	var inv, category, scope, prefix, trust, tenant string
	c := &cobra.Command{
		Use:   "ls [--json] [--tier N] [--invokable-by T3] [--tenant T] [--category C] [--trust T]",
		Short: "List the skills in the registry",
		Long: `List registered skills: enabled, valid, and winning precedence, unless --all.

--invokable-by T3 gives the pool of an agent of tier T3: the skills whose
invokable_by includes it. --tenant acme lists what acme's agents see: the
shared skills and acme's own library (docs/storage.md), none of another
tenant's; without it every tenant's library is listed (scope tenant).
--trust first_party (or imported) keeps the skills
of that trust: first_party for roots configured "trust: first_party",
imported for every other root and for skills installed with 'skillgate
install' (enabled ones are listed with scope imported). --json prints the
skill_list JSON that agents get over MCP: an array of
{name, description, tier, invokable_by, source, category, version, trust}.`,
		Example: "  skillgate ls\n  skillgate ls --invokable-by T4 --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := app.ListQuery(registry.Query{Tier: tier, Category: category, Scope: scope, NamePrefix: prefix, Trust: trust, Tenant: tenant}, inv, all)
			if err != nil {
				return err
			}
			es, err := m.app().List(cmd.Context(), q)
			if err != nil {
				return err
			}
			if asJSON {
				_, err := fmt.Fprintln(m.Stdout, catalog.JSON(app.CatalogItems(es)))
				return err
			}
			if len(es) == 0 {
				fmt.Fprintln(m.Stderr, "no skills match; run 'skillgate scan' first, or widen the filters")
				return nil
			}
			return registry.WriteEntries(m.Stdout, es)
		},
	}
	f := c.Flags()
	f.BoolVar(&asJSON, "json", false, "print the skill_list JSON that agents get over MCP")
	f.IntVar(&tier, "tier", 0, "only skills of this tier (1, 2 or 3)")
	f.StringVar(&inv, "invokable-by", "", "only skills an agent of this tier may invoke (T0–T4)")
	f.StringVar(&category, "category", "", "only skills of this category")
	f.StringVar(&scope, "scope", "", "only skills from roots of this scope")
	f.StringVar(&prefix, "prefix", "", "only skills whose name starts with this")
	f.StringVar(&tenant, "tenant", "", "what this tenant's agents see: the shared skills and its own library")
	f.StringVar(&trust, "trust", "", "only skills of this trust (first_party or imported)")
	f.BoolVar(&all, "all", false, "include disabled, rejected and shadowed skills")
	return c
}

func (m *Main) showCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show NAME [--json]",
		Short: "Show one skill: metadata, files, diagnostics, shadowing, history",
		Long: `Show everything the registry knows about a skill. NAME is a name, or a
category/name identity when a name is used in several categories. A
rejected skill can be named by its name or its directory, to read why.

Exit codes: 0 found, 1 not found or ambiguous, 2 usage error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := m.app().ShowSkill(cmd.Context(), args[0])
			if err != nil {
				if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrAmbiguous) {
					return &exitError{code: exitFail, err: err}
				}
				return err
			}
			if asJSON {
				return jsonout.Write(m.Stdout, d)
			}
			d.WriteText(m.Stdout)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return c
}

func (m *Main) promptCommand() *cobra.Command {
	var format, inv string
	var budget int
	var asJSON bool
	c := &cobra.Command{
		Use:   "prompt [--format xml|json] [--budget CHARS] [--json] [PATH...]",
		Short: "Print the catalog of skills for a system prompt",
		Long: `Print a skill catalog for an agent's prompt.

With PATHs (skill directories), the XML is byte-identical to skills-ref's
to-prompt for the same directories. Without PATHs, the catalog lists the
registry's enabled skills (optionally the pool of one agent tier).

--budget CHARS fits the catalog in CHARS characters: descriptions are
shortened first, evenly, then skills are dropped from the end; the catalog
is never empty, and what was left out is reported on stderr.

--json prints {format, skills, budget, length, shortened, omitted,
over_budget, catalog}: the skills kept in order, what the budget did, and
the catalog text (in --format) as printed without --json; nothing is
reported on stderr then.`,
		Example: "  skillgate prompt .agents/skills/pdf .agents/skills/docx\n  skillgate prompt --invokable-by T3 --budget 8000\n  skillgate prompt --budget 2000 --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := catalog.ParseFormat(format)
			if err != nil {
				return usageErr("--format: %v", err)
			}
			its, err := m.app().PromptItems(cmd.Context(), args, inv)
			if err != nil {
				return failure(err)
			}
			pc := app.BudgetCatalog(its, f, budget)
			if asJSON {
				return jsonout.Write(m.Stdout, pc)
			}
			if len(args) > 0 && f == catalog.FormatXML {
				fmt.Fprint(m.Stdout, pc.Catalog) // to-prompt prints no trailing newline
			} else {
				fmt.Fprintln(m.Stdout, pc.Catalog)
			}
			pc.Report.WriteText(m.Stderr, budget)
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "xml", "xml (skills-ref's <available_skills>) or json (skill_list)")
	c.Flags().IntVar(&budget, "budget", 0, "character budget for the catalog (0: no limit)")
	c.Flags().StringVar(&inv, "invokable-by", "", "registry catalog: only the pool of this agent tier")
	c.Flags().BoolVar(&asJSON, "json", false, "print the catalog with what the budget kept, shortened and left out, as JSON")
	return c
}

func (m *Main) driftCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "drift [--json] CANONICAL MIRROR",
		Short: "Compare a canonical skill folder with its mirror",
		Long: `Compare two skill folders, such as .agents/skills (canonical) and
.claude/skills (its mirror): skills only on one side, skills whose files
differ (and which), skills whose frontmatter differs (and which keys).

Exit codes: 0 in sync, 1 drift found (or a folder could not be read), 2
usage error (a missing argument, or a folder that does not exist).`,
		Example: "  skillgate drift .agents/skills .claude/skills",
		Args:    func(_ *cobra.Command, args []string) error { return app.DriftArgs(args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := discover.Drift(cmd.Context(), args[0], args[1], discover.DefaultLimits)
			if err != nil {
				return err
			}
			if asJSON {
				if err := jsonout.Write(m.Stdout, struct {
					*discover.DriftReport
					InSync bool `json:"in_sync"`
				}{rep, rep.InSync()}); err != nil {
					return err
				}
			} else {
				rep.WriteText(m.Stdout)
			}
			if !rep.InSync() {
				return errFailed
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}

func (m *Main) enableCommand(enable bool) *cobra.Command {
	verb := "enable"
	if !enable {
		verb = "disable"
	}
	var asJSON bool
	c := &cobra.Command{
		Use:   verb + " NAME",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " a skill in the registry",
		Long: "Mark a skill " + verb + "d. Disabled skills stay in the registry (ls --all shows them)\n" +
			"but are left out of catalogs and pools. The state survives rescans and new versions.\n" +
			"For an imported skill (skillgate install), enable needs an approved version and\n" +
			"disables the version enabled before; --json prints its review.\n\nExit codes: 0 done, 1 not found, 2 usage error.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ok, err := m.enableImported(cmd.Context(), args[0], enable, asJSON); ok || err != nil {
				return err
			}
			if err := m.app().SetEnabled(cmd.Context(), args[0], enable); err != nil {
				return &exitError{code: exitFail, err: err}
			}
			fmt.Fprintf(m.Stdout, "%sd %s\n", verb, args[0])
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "for an imported skill, print its review as JSON")
	return c
}
