package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

// stdin is what `skillgate mcp` reads; tests replace it.
var stdin io.Reader = os.Stdin

func (m *Main) mcpCommand() *cobra.Command {
	var pf principalFlags
	var sf storageFlags
	var parent, parentTier string
	var forward []string
	var noScan bool
	c := &cobra.Command{
		Use:   "mcp --agent ID --tier T3 [--tenant T] [--session ID] [--parent TENANT/AGENT --parent-tier T2 --forward EXT/CAP,...]",
		Short: "Serve one agent over MCP on stdin/stdout",
		Long: `Serve one agent session over MCP on stdin and stdout (what Claude Code, Codex
and deepagents' MCP adapters launch). The principal comes from the flags or
SKILLGATE_AGENT, SKILLGATE_TIER, SKILLGATE_TENANT; the session from --session
or SKILLGATE_SESSION (empty starts a new one, whose id is printed on stderr:
pass it again to resume the loaded skills and /workspace).

Tools: skill_list, load_skill, unload_skill, ls, read_file, grep, glob,
write_file, edit_file. Prompt: skills. Resources: skillgate://disclosure,
skillgate://session. The agent sees only skills its tier may invoke. At start the
roots (those of the last scan, else the configured ones) are scanned when
the registry is empty or older than them; --no-scan reads it as it is.

Capabilities of enabled installed skills that the agent's scope allows are
listed as tools too (see docs/policy.md); every call is decided by policy
and audited. A sub-agent is started with --parent, --parent-tier and
--forward: its scope is what was forwarded, intersected with its parent's
scope, the registry and the policy; its tier may not be above its parent's.

With OTEL_EXPORTER_OTLP_ENDPOINT set, requests and forwarded calls are traced
with OpenTelemetry, the trace context read from and written into
params._meta (see docs/deploy.md).`,
		Example: "  skillgate mcp --agent drafter --tier T3 --tenant acme\n  SKILLGATE_AGENT=drafter SKILLGATE_TIER=T3 skillgate mcp --session 7f3a",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := pf.principal()
			if err != nil {
				return err
			}
			err = m.app().ServeStdio(cmd.Context(), app.StdioOptions{
				Principal: p, Session: pf.session, Storage: &sf, In: stdin, Out: m.Stdout,
				NoScan: noScan, Scanned: m.bootScanned("skillgate mcp"),
				Prepare: func(d *app.Runtime) error {
					if parent != "" {
						return m.delegate(d, p, parent, parentTier, forward)
					} else if len(forward) > 0 || parentTier != "" {
						return usageErr("--forward and --parent-tier need --parent")
					}
					return nil
				},
				Started: func(id string) {
					fmt.Fprintf(m.Stderr, "skillgate mcp: session %s for %s (resume with --session %s)\n", id, p, id)
				},
			})
			return sessionErr(err)
		},
	}
	m.addPrincipalFlags(c, &pf)
	m.addStorageFlags(c, &sf)
	c.Flags().BoolVar(&noScan, "no-scan", false, "do not scan the roots at start, even when the registry is empty or older than them")
	c.Flags().StringVar(&parent, "parent", "", "run as a sub-agent of this agent (TENANT/AGENT)")
	c.Flags().StringVar(&parentTier, "parent-tier", "", "the parent agent's tier, T0–T4 (with --parent)")
	c.Flags().StringSliceVar(&forward, "forward", nil, "capabilities the parent forwards to the sub-agent, SKILL:EXT/CAP,… (EXT/CAP when one skill offers it; with --parent)")
	return c
}

// delegate registers the session's principal as a sub-agent of parent.
func (m *Main) delegate(d *app.Runtime, child capability.Principal, parent, parentTier string, forward []string) error {
	n, err := d.Delegate(child, parent, parentTier, forward)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "skillgate mcp: sub-agent %s of %s with %d of %d forwarded capabilities\n", child, parent, n, len(forward))
	return nil
}

// sessionErr turns refusals of a session into exit-code-1 failures with
// their message.
func sessionErr(err error) error {
	if errors.Is(err, session.ErrSessionUnavailable) || errors.Is(err, session.ErrInvalidSessionID) || errors.Is(err, session.ErrInvalidPrincipal) {
		return &exitError{code: exitFail, err: err}
	}
	return err
}

func (m *Main) discloseCommand() *cobra.Command {
	var tier, sessionID, category, tenant string
	var budget int
	var asJSON bool
	var sf storageFlags
	c := &cobra.Command{
		Use:   "disclose --tier T3 [--tenant T] [--session ID] [--category C] [--budget N] [--json]",
		Short: "Print what an agent sees of skills: the discovery fragment or its loaded skills",
		Long: `Print the progressive disclosure an agent gets (the MCP prompt 'skills' and
the resource skillgate://disclosure). Without --session: the discovery
fragment for an agent of --tier, the skills it may load (name, description,
category) within --budget characters, optionally of one --category, and
with --tenant the skills of that tenant's library too. With
--session: that session's view: the discovery fragment while nothing is
loaded, else the SKILL.md bodies of its loaded skills in <skill_content>
blocks with their directories and files.

--json prints {tier, tenant, session, category, budget, view, loaded, text}:
view is "discovery" or "loaded", loaded the session's loaded skills
({skill, name, category, mount, loaded_at}), text what is printed without
--json.

Exit codes: 0 printed, 1 unknown session, 2 usage error.`,
		Example: "  skillgate disclose --tier T3 --budget 2000\n  skillgate disclose --session 7f3a",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			req, err := app.DiscloseFlags(tier, tenant, sessionID, category, budget)
			if err != nil {
				return err
			}
			out, err := m.app().Disclose(ctx, &sf, req)
			if err != nil {
				return failure(err)
			}
			if asJSON {
				return jsonout.Write(m.Stdout, out)
			}
			_, err = fmt.Fprintln(m.Stdout, out.Text)
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&tier, "tier", "", "agent tier, T0–T4")
	f.StringVar(&tenant, "tenant", "", "the tenant whose library's skills are shown too (without --session)")
	f.StringVar(&sessionID, "session", "", "show this session's view")
	f.StringVar(&category, "category", "", "only skills of this category (discovery fragment)")
	f.IntVar(&budget, "budget", 0, fmt.Sprintf("character budget of the discovery fragment (default %d)", session.DefaultBudget))
	f.BoolVar(&asJSON, "json", false, "print the disclosure and what it was made for as JSON")
	m.addStorageFlags(c, &sf)
	return c
}
