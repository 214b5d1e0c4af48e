package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func (m *Main) policyCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "policy check|test|put|rm|ls",
		Short: "Check policy files and replay requests against the policy",
		Long: `Cedar policies decide which capability calls agents may make. They live in
DATA/policies/*.cedar and in the store ('policy put', shared by every process
on the store); with none configured, skillgate uses its default policy
(permit every invoke in scope). See docs/policy.md.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageErr("policy needs a subcommand: check, test, put, rm or ls (see 'skillgate policy --help')")
		},
	}
	c.AddCommand(m.policyCheckCommand(), m.policyTestCommand())
	c.AddCommand(m.policyStoreCommands()...)
	return c
}

func (m *Main) policyCheckCommand() *cobra.Command {
	var asJSON bool
	var capsFile string
	c := &cobra.Command{
		Use:   "check [FILE...] [--capabilities FILE] [--json]",
		Short: "Validate policy files (default: DATA/policies and the stored policies)",
		Long: `Parse and validate Cedar policy files: syntax, @id annotations (unique),
@constraints annotations (a valid constraint set, on permits only), and
every policy against skillgate's Cedar schema (docs/schemas/skillgate.cedarschema)
with Cedar's validator. Errors are policies that can never apply as written
(an unknown entity type, action or attribute, such as resource.riskLvel);
warnings are policies that may fail to evaluate for some calls (a type
mismatch, an optional attribute read without has). Syntax errors are
reported as file:line:col, the others as file:line of the policy.

Reads of call arguments (context.args.NAME) are checked against each
installed, enabled capability the policy's scope can apply to, with the
arguments typed from the capability's approved input schema: a read that
fails to evaluate for valid arguments (like on an array, an argument the
tool does not take or may leave out read without has, a JSON Schema number
compared with <) is a warning naming the capability, the argument and the
fix. skillgate denies a call when a forbid fails to evaluate. A permit
whose @constraints cannot restrict some capability it covers (pathGlobs on
a tool with no path argument, argValues or urlArgs it does not take) is a
warning naming the permit, the constraint and the capabilities: the permit
lets those calls through unchecked. With
--capabilities, the capability records come from that JSON file instead
(as in 'policy test'); with FILE arguments and no data directory, only the
schema checks run.
Without FILE arguments, checks the policy set skillgate would load:
DATA/policies/*.cedar and the stored policies.
Exit 0 when valid (warnings included), 1 when a policy is invalid.`,
		Example: "  skillgate policy check\n  skillgate policy check --json my.cedar",
		RunE: func(cmd *cobra.Command, files []string) error {
			rep, err := m.app().CheckPolicies(cmd.Context(), files, capsFile)
			if err != nil {
				return failure(err)
			}
			if asJSON {
				if err := jsonout.Write(m.Stdout, rep); err != nil {
					return err
				}
			} else {
				rep.WriteText(m.Stdout, m.Stderr, m.app().PolicyDir())
			}
			if !rep.OK {
				return errFailed
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.Flags().StringVar(&capsFile, "capabilities", "", "a JSON file of capability records (with inputSchema) to check call arguments against, instead of the installed skills")
	return c
}

func (m *Main) policyTestCommand() *cobra.Command {
	var principal, capName, argsJSON, tier, parent, capsFile string
	var asJSON bool
	c := &cobra.Command{
		Use:   `test --principal Agent::"tenant/agent" --capability skill:ext/tool [--args JSON] [--tier T3] [--json]`,
		Short: "Replay a request against the current registry and policy",
		Long: `Decide a capability call as the gateway would, without side effects (no
rate-limit token is taken, no grant use consumed), and print the decision
with the reasons: which check, which policy (@id or file:line), which
constraint. The capability names its skill, skill:server/tool
(acme/notes:fs/write_file); the short form server/tool is accepted when
only one installed skill offers it. Exit 0 when the call would be allowed,
1 when it would be denied or need approval, 2 on a usage error.`,
		Example: `  skillgate policy test --principal 'Agent::"acme/drafter"' --tier T3 \
    --capability dev/issues:github/search_issues --args '{"client":"github"}' --capabilities caps.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			p, args, err := app.PolicyTestPrincipal(principal, tier, parent, argsJSON)
			if err != nil {
				return err
			}
			rep, grant, err := m.app().TestPolicy(ctx, p, capName, args, capsFile)
			if err != nil {
				return err
			}
			if asJSON {
				if err := jsonout.Write(m.Stdout, rep); err != nil {
					return err
				}
			} else {
				rep.WriteText(m.Stdout, p, grant)
			}
			if rep.Effect != capability.Allow {
				return errFailed
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&principal, "principal", "", `principal: Agent::"tenant/agent", tenant/agent, or an agent id (tenant "default")`)
	f.StringVar(&capName, "capability", "", "capability: skill:extensionId/capabilityId (extensionId/capabilityId when only one skill offers it)")
	f.StringVar(&argsJSON, "args", "", "the call's arguments as a JSON object")
	f.StringVar(&tier, "tier", "T3", "the principal's agent tier, T0–T4")
	f.StringVar(&parent, "parent", "", "the parent principal (tenant/agent) of a sub-agent")
	f.StringVar(&capsFile, "capabilities", "", "a JSON file of capability records to use as the registry")
	f.BoolVar(&asJSON, "json", false, "print the decision as JSON")
	_ = c.MarkFlagRequired("principal")
	_ = c.MarkFlagRequired("capability")
	return c
}

func (m *Main) grantCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "grant add|ls|revoke",
		Short: "Manage approval grants for risky capability calls",
		Long: `A call to a destructive, externally side-effecting or network-egress
capability needs a grant: a human's approval for a principal (pattern) to
invoke a capability (pattern), optionally with certain argument values, up to
a risk level, until it expires or its uses run out. A capability names its
skill (skill:server/tool), so a grant never covers another skill's tool of
the same name. Grants are stored in the registry, and adding and revoking
one are written to the audit log (grant.add, grant.revoke); a running
server sees new grants at its next policy reload (POST /v1/grants takes
effect at once), and revocations at the grant's next use.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageErr("grant needs a subcommand: add, ls or revoke (see 'skillgate grant --help')")
		},
	}
	c.AddCommand(m.grantAddCommand(), m.grantLsCommand(), m.grantRevokeCommand())
	return c
}

func (m *Main) grantAddCommand() *cobra.Command {
	var argsJSON, expires, level, reason, by string
	var uses int
	var asJSON bool
	c := &cobra.Command{
		Use:   "add PRINCIPAL CAPABILITY [--level L] [--uses N] [--expires 2h] [--args JSON] [--json]",
		Short: "Grant a principal (pattern) a risky capability (pattern)",
		Long: `Grant a principal (pattern) a risky capability (pattern). CAPABILITY is
skill:server/tool (files/notes:fs/delete_file), a pattern naming the skill
(files/notes:fs/*, files/notes:*, *:fs/delete_file for every skill), or *.
The short form server/tool (or a pattern such as fs/*) is accepted when the
capabilities it matches belong to one installed skill, and is bound to it;
otherwise the error lists the skills to choose from.`,
		Example: `  skillgate grant add acme/drafter files/notes:fs/delete_file --level destructive --uses 1 --expires 1h \
    --args '{"path":"/srv/tmp/*"}' --reason "clean the scratch area"
  skillgate grant add 'acme/*' 'research/web:web/*' --level read --expires 7d`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			g, err := app.GrantFlags(policy.Grant{Principal: args[0], Capability: args[1], Level: capability.RiskLevel(level), Uses: uses, Reason: reason}, expires, argsJSON, by, m.Getenv)
			if err != nil {
				return err
			}
			if g, err = m.app().AddGrant(ctx, g); err != nil {
				return err
			}
			if asJSON {
				return jsonout.Write(m.Stdout, g)
			}
			fmt.Fprintln(m.Stdout, g.ID)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&level, "level", "write", "highest risk level covered: read, write or destructive")
	f.IntVar(&uses, "uses", 0, "number of calls allowed (0: unlimited)")
	f.StringVar(&expires, "expires", "", "expiry: a duration (30m, 2h, 7d) or an RFC 3339 time (default: never)")
	f.StringVar(&argsJSON, "args", "", `argument patterns, like '{"path":["/srv/*"]}' ('*' is a wildcard)`)
	f.StringVar(&reason, "reason", "", "why the grant was given (kept with it)")
	f.StringVar(&by, "by", "", "who grants it (default $USER)")
	f.BoolVar(&asJSON, "json", false, "print the grant as JSON")
	return c
}

func (m *Main) grantLsCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "ls [--json]",
		Short: "List grants (revoked ones are not listed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gs, err := m.app().Grants(cmd.Context())
			if err != nil {
				return err
			}
			return m.list(asJSON, gs, len(gs), "no grants; add one with 'skillgate grant add PRINCIPAL CAPABILITY --level L'", func(w io.Writer) error { return policy.WriteGrants(w, gs, time.Now()) })
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return c
}

func (m *Main) grantRevokeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a grant; it stops matching at its next use",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := m.app().RevokeGrant(cmd.Context(), args[0]); err != nil {
				if errors.Is(err, policy.ErrGrantNotFound) {
					return &exitError{code: exitFail, err: err}
				}
				return err
			}
			fmt.Fprintf(m.Stdout, "revoked %s\n", args[0])
			return nil
		},
	}
}
