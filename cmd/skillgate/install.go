package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

// installErr maps install errors to exit codes: a bad request or a name
// that matches several versions is a usage error (2), everything else a
// failure (1).
func installErr(err error) error {
	if hasExitCode(err) {
		return err
	}
	if errors.Is(err, install.ErrUsage) || errors.Is(err, install.ErrAmbiguous) {
		return &app.UsageError{Err: err}
	}
	return &exitError{code: exitFail, err: err}
}

// endedBlocked is returned by an analysis (install, recheck) that left
// the install blocked: its review is printed and the command exits 1, as
// docs/cli.md says.
type endedBlocked struct{ review *install.Review }

func (e *endedBlocked) Error() string { return "blocked" }

// failBlocked turns an analysis whose install ends blocked into an
// endedBlocked error: the install itself blocked, or, after approval,
// capabilities blocked by drift from their approved pins.
func failBlocked(r *install.Review, err error) (*install.Review, error) {
	if err == nil && app.Blocked(r) {
		return nil, &endedBlocked{review: r}
	}
	return r, err
}

// reviewOut prints a review as JSON or text.
func (m *Main) reviewOut(r *install.Review, asJSON bool) error {
	if asJSON {
		return jsonout.Write(m.Stdout, r)
	}
	_, err := fmt.Fprint(m.Stdout, r.Text())
	return err
}

// installAction is the shape of every command that acts on one install.
func (m *Main) installAction(use, short, long string, args cobra.PositionalArgs, flags func(*cobra.Command),
	act func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error)) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long + "\n\nExit codes: 0 done, 1 failure (not found, blocked, wrong state), 2 usage error.",
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			m.app().ShowProgress(m.Stderr, asJSON)
			svc, closeFn, err := m.app().OpenInstalls(cmd.Context())
			if err != nil {
				return err
			}
			defer closeFn()
			r, err := act(cmd.Context(), svc, args)
			m.app().EndProgress()
			var eb *endedBlocked
			if errors.As(err, &eb) {
				// The review says what to complete or fix; the exit code
				// says the install is not done.
				if err := m.reviewOut(eb.review, asJSON); err != nil {
					return err
				}
				return errFailed
			}
			if err != nil {
				return installErr(err)
			}
			if r == nil { // the action printed its own outcome
				return nil
			}
			return m.reviewOut(r, asJSON)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the review as JSON (the same body as the REST API)")
	if flags != nil {
		flags(c)
	}
	return c
}

// credentialScopeFlags adds --tenant and --agent: the principal whose
// credentials (credential store, then environment) the skill's servers get
// while they are introspected.
func (m *Main) credentialScopeFlags(c *cobra.Command) {
	c.Flags().StringVar(&m.introspectAs.Tenant, "tenant", "", "introspect with this tenant's credentials (skillgate credential set; then the environment) instead of the environment's")
	c.Flags().StringVar(&m.introspectAs.Agent, "agent", "", "with --tenant: this agent's own credentials first")
}

// introspectionFlags adds the flags that say what a skill's servers may
// have while they are introspected.
func (m *Main) introspectionFlags(intro *install.Introspection) func(*cobra.Command) {
	return func(c *cobra.Command) {
		m.credentialScopeFlags(c)
		c.Flags().StringArrayVar(&intro.Credentials, "credential", nil, "give this credential (a ${NAME} of mcp.json, resolved for --tenant from the credential store, else from the environment when config.yaml lists it under credentials.from_environment) to the skill's servers; repeatable; others are withheld until approval")
		c.Flags().BoolVar(&intro.Network, "allow-network", false, "let the skill's servers reach the network while they are introspected")
		c.Flags().BoolVar(&intro.Unconfined, "unconfined", false, "run the servers without the sandbox, as your own user (only for code you trust)")
	}
}

// packageFlags adds the flags of commands that fetch the packages a
// skill's servers launch (install, update): the npm registry, and the
// packages whose install scripts may run, with why.
func (m *Main) packageFlags(allow *[]string, why *string) func(*cobra.Command) {
	return func(c *cobra.Command) {
		c.Flags().StringVar(&m.npmRegistry, "registry", "", "fetch npm packages (npx launches) from this registry or mirror instead of packages.npm.registry of config.yaml")
		c.Flags().StringArrayVar(allow, "allow-scripts", nil, "let this fetched package's install scripts (preinstall, install, postinstall) run, in the fetch sandbox; repeatable; needs --why")
		c.Flags().StringVar(why, "why", "", fmt.Sprintf("with --allow-scripts: why the package needs its install scripts (at least %d characters; recorded and audited)", install.MinWhyLength))
	}
}

func (m *Main) installCommand() *cobra.Command {
	var intro install.Introspection
	var scripts []string
	var scriptsWhy string
	var src install.Source
	var locked string
	return m.installAction("install SOURCE [--ref REF] [--path DIR] [--sha256 HEX] | install --locked FILE", "Install an imported skill (a directory, an archive, an archive URL or a git repository) for review",
		`Install a third-party skill. SOURCE is a skill directory, a .tar.gz/.tgz/.zip
archive, an https:// URL of such an archive (with --sha256, the SHA-256 you
expect of it: nothing is read before it matches), or a git repository:
git+https://host/repo.git, or file:///path/to/repo for a local one, at
--ref (a branch, tag or commit; default HEAD) with the skill in --path (a
directory of the repository; default its top level). Where it came from
(the URL, the ref and the commit it resolved to, the archive's digest, when)
is recorded with the version and shown by 'skillgate review'.

With --locked FILE (a lock from 'skillgate lock'), install every imported
skill of the lock from its recorded source instead, each refused when its git
ref now resolves to another commit or its content digest differs from the
lock's; each ends awaiting approval (or blocked), as any install.

Read the source within bounds (archives may not hold
links, absolute paths or paths that leave them), validate SKILL.md and mcp.json,
copy the skill into managed storage (DATA/imported, one directory per content
digest), introspect every MCP server mcp.json declares, and propose a manifest.
The skill ends blocked (something must be completed or fixed; the review is
printed and the exit code is 1) or awaiting approval (exit 0). Installing
never enables it: see 'skillgate review', 'approve' and
'enable'. Installing a version whose analysis was interrupted resumes it.

A server declared as a package launch (npx -y PKG@VER, npm exec, uvx PKG,
uv tool run, pipx run) has its package and dependencies fetched with npm or
pip in a fetch sandbox (the network, no home, no credentials, an empty cache),
pinned (exact version, integrity, registry: part of the version's digest and
shown by review), and run from managed storage, offline. Install scripts do
not run unless allowed by name (--allow-scripts PKG --why TEXT). A registry
that cannot be reached, a version that does not exist or an integrity
mismatch refuses the install and records nothing. --registry URL fetches npm
packages from a mirror; config.yaml's packages section sets the registries,
caches and offline mode.

The servers run confined while they are introspected (Linux: bubblewrap; the
host file system read-only, no home directories, the data directory hidden, no
network unless --allow-network, a memory bound, killed with skillgate). They
get no credential: a ${NAME} reference in mcp.json env and header values is
read from the environment of this command only when named with --credential
NAME; a server that needs another is not started, and the review says so.
An LLM proposer is used when
SKILLGATE_LLM_BASE_URL and SKILLGATE_LLM_MODEL are set (and
SKILLGATE_LLM_API_KEY when the endpoint needs one); otherwise the
deterministic proposer.`,
		cobra.RangeArgs(0, 1), func(c *cobra.Command) {
			m.introspectionFlags(&intro)(c)
			c.Flags().StringVar(&locked, "locked", "", "install the imported skills of this lock file, refusing any that differs from it")
			c.Flags().StringVar(&src.Ref, "ref", "", "git sources: the branch, tag or commit to install (default HEAD)")
			c.Flags().StringVar(&src.Path, "path", "", "git sources: the skill's directory in the repository (default its top level)")
			c.Flags().StringVar(&src.SHA256, "sha256", "", "archives: the SHA-256 (hex) the archive must have; required for an archive URL")
			m.packageFlags(&scripts, &scriptsWhy)(c)
		},
		func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error) {
			req := app.InstallRequest{Source: src, Locked: locked, Intro: intro, Scripts: scripts, ScriptsWhy: scriptsWhy}
			if len(args) > 0 {
				req.Source.Location = args[0]
			}
			return failBlocked(m.app().Install(ctx, svc, req, m.Stdout, m.Stderr))
		})
}

func (m *Main) updateCommand() *cobra.Command {
	var intro install.Introspection
	var scripts []string
	var scriptsWhy string
	var upd install.UpdateOptions
	return m.installAction("update NAME [--ref REF] [--source URL --sha256 HEX]", "Fetch an approved skill's source again; a new version waits for approval",
		`Fetch again the source the approved version of NAME was installed from (the
recorded git URL, ref and path, archive URL or directory; --ref, --source and
--sha256 change them, for a new tag or a new archive). When it holds the same
content, say so (exit 0). Otherwise the new version goes through the whole
install analysis and its review shows what changed against the approved
version: tools added and removed, risk raised or lowered, schema and
description changes field by field, servers added and removed, new
credentials, new network egress, a change of signer; or that only files
changed. Package launches (npx PKG, uvx PKG) are fetched again: a new
package version is a new version of the skill, and the review shows the
package diff (version, integrity, dependencies added, removed, changed).
The approved version keeps serving until you approve the update
('skillgate approve NAME@DIGEST'), which is consent to that comparison: the
audit record of the approval carries its digest.`,
		cobra.ExactArgs(1), func(c *cobra.Command) {
			m.introspectionFlags(&intro)(c)
			c.Flags().StringVar(&upd.Ref, "ref", "", "git sources: fetch this ref instead of the recorded one")
			c.Flags().StringVar(&upd.Source, "source", "", "fetch from this source instead of the recorded one")
			c.Flags().StringVar(&upd.SHA256, "sha256", "", "the SHA-256 the archive must have (with --source, for an archive URL)")
			m.packageFlags(&scripts, &scriptsWhy)(c)
		},
		func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error) {
			var err error
			if intro.AllowScripts, err = app.AllowScripts(scripts, scriptsWhy); err != nil {
				return nil, err
			}
			r, err := svc.Update(ctx, args[0], upd, m.app().Actor(), intro)
			if errors.Is(err, install.ErrUpToDate) {
				fmt.Fprintln(m.Stdout, err)
				return nil, nil
			}
			return failBlocked(r, err)
		})
}

func (m *Main) installCommands() []*cobra.Command {
	var intro install.Introspection
	var comp install.Completion
	var only, allowDynamic, allowTools, constraints, approvals []string
	var why string
	var reviewSARIF bool
	return []*cobra.Command{
		m.installCommand(),
		m.updateCommand(),
		m.pendingCommand(),
		m.installAction("review NAME", "Show an install for review: proposal, risk and sources, what is missing, what changed",
			`Show everything needed to decide about an install: the proposed manifest,
each capability's risk metadata and where it came from (server_meta,
annotations, operator), what is missing, the corrections made to the proposal,
operator overrides, drift since approval, what differs from the previous
approved version (including pin diffs), and what to run next.

NAME is the skill's key (category/name) or name; add @DIGEST-PREFIX to pick a
version. --sarif prints the content scan (layer 4) as SARIF 2.1.0 instead: its
findings, and what the skill is derived from with the results on the lines it
added marked.`,
			cobra.ExactArgs(1), func(c *cobra.Command) {
				c.Flags().BoolVar(&reviewSARIF, "sarif", false, "print the content scan's findings and lineage as SARIF 2.1.0")
			},
			func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error) {
				r, err := svc.Review(ctx, args[0])
				if err != nil || !reviewSARIF {
					return r, err
				}
				out, err := r.SARIF(version)
				if err != nil {
					return nil, err
				}
				fmt.Fprintln(m.Stdout, string(out))
				return nil, nil
			}),
		m.installAction("complete NAME CAPABILITY --risk R --side-effects S --egress E --why TEXT",
			"Supply risk metadata for a capability the server did not describe",
			`Supply, as the operator, the risk metadata a server left unknown (or override
what it stated) for one capability, written serverId/tool. The values are
stored as operator-supplied with your explanation and shown as such
everywhere. A value below what the server declared needs --force and is
flagged in the install report.

  --risk          read | write | destructive
  --side-effects  none | internal | external
  --egress        none | network`,
			cobra.ExactArgs(2),
			func(c *cobra.Command) {
				f := c.Flags()
				f.StringVar(&comp.RiskLevel, "risk", "", "riskLevel: read, write or destructive")
				f.StringVar(&comp.SideEffects, "side-effects", "", "sideEffects: none, internal or external")
				f.StringVar(&comp.DataEgress, "egress", "", "dataEgress: none or network")
				f.StringVar(&comp.Why, "why", "", fmt.Sprintf("why these values are right (required, at least %d characters)", install.MinWhyLength))
				f.BoolVar(&comp.Force, "force", false, "allow a value below what the server declared (flagged in the report)")
			},
			func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error) {
				comp.Capability = args[1]
				return svc.Complete(ctx, args[0], comp, m.app().Actor())
			}),
		m.installAction("approve NAME [--only CAP,CAP]", "Approve an install's proposed capabilities and pin them",
			`Approve the proposed capabilities of an install (or only those named with
--only, as serverId/tool), each of which must have complete risk metadata.
Each approved tool is pinned (SHA-256 of its canonical definition, with the
server's name and version) and manifest.json is written; the skill becomes
installed, not enabled. For an approved skill blocked by drift, approve
accepts the definitions found by the last 'skillgate recheck'.

Skills the install's servers publish through the MCP Skills extension are
approved with it: every one that passed verification, bound to its files'
URIs, digests and sizes, and served onwards to agents. One whose resources
are "dynamic" (no digests) is refused unless named with --allow-dynamic;
the allowed-tools a published skill's frontmatter asks for are ignored
unless it is named with --allow-tools. Name them as review lists them
(serverId/uri, or the uri alone when one server publishes it).

--constraints sets a capability's constraints, replacing the proposal's
({} removes them), and --approval when its calls need a human's grant:
by-risk (the default), always, or never (not for a destructive one). Both
are checked against the policy engine's rules (an argument named must be
one the tool takes) and carry over to the skill's next approved version;
on an approved skill they change its settings in place (docs/install.md).`,
			cobra.ExactArgs(1),
			func(c *cobra.Command) {
				c.Flags().StringSliceVar(&only, "only", nil, "approve only these capabilities (serverId/tool, comma-separated)")
				c.Flags().StringArrayVar(&allowDynamic, "allow-dynamic", nil, "serve this published skill whose resources are \"dynamic\", without integrity checks (serverId/uri; repeat for several)")
				c.Flags().StringArrayVar(&allowTools, "allow-tools", nil, "honour the allowed-tools of this published skill (serverId/uri; repeat for several)")
				c.Flags().StringArrayVar(&constraints, "constraints", nil, "serverId/tool=JSON: the capability's constraint set (repeat for several)")
				c.Flags().StringArrayVar(&approvals, "approval", nil, "serverId/tool=by-risk|always|never: when its calls need a grant (repeat for several)")
			},
			func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error) {
				settings, err := install.ParseSettings(constraints, approvals)
				if err != nil {
					return nil, err
				}
				return svc.ApproveWith(ctx, args[0], install.ApproveOptions{Only: only, AllowDynamic: allowDynamic, AllowTools: allowTools, Settings: settings}, m.app().Actor())
			}),
		m.installAction("suppress NAME RULE[@FILE[:LINE]] --why TEXT", "Suppress content-scan findings of an install, with a reason",
			`Decide, as the operator, that findings of the content scan (admission layer
4, docs/admission.md) are not a threat in this install: every finding of
RULE (an id such as SG501, or its name), or only those in FILE, or only the
one at FILE:LINE. Suppressed findings stay in the report, marked with who
suppressed them and why, and no longer block approval. The decision is
audited. A target that matches no finding is refused.`,
			cobra.ExactArgs(2),
			func(c *cobra.Command) {
				c.Flags().StringVar(&why, "why", "", fmt.Sprintf("why the findings are not a threat (required, at least %d characters)", install.MinWhyLength))
			},
			func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error) {
				return svc.Suppress(ctx, args[0], args[1], why, m.app().Actor())
			}),
		m.installAction("reject NAME --why TEXT", "Reject an install that is not approved",
			"Reject an install awaiting approval or blocked, with an explanation kept in the audit log.",
			cobra.ExactArgs(1),
			func(c *cobra.Command) {
				c.Flags().StringVar(&why, "why", "", fmt.Sprintf("why it is rejected (required, at least %d characters)", install.MinWhyLength))
			},
			func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error) {
				return svc.Reject(ctx, args[0], why, m.app().Actor())
			}),
		m.installAction("remove NAME", "Remove an imported skill version and its files",
			"Remove an imported skill version in any state: it leaves catalogs and its managed files are deleted. The record stays, as removed.",
			cobra.ExactArgs(1), nil,
			func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error) {
				return svc.Remove(ctx, args[0], m.app().Actor())
			}),
		m.installAction("recheck NAME", "Introspect an install's servers again; detect drift from the approved pins",
			`Start or connect to the install's MCP servers again. Before approval this is a
new analysis (resuming an interrupted one). After approval the live tools are
compared with the approved pins: an added, removed or changed tool blocks the
affected capabilities until 'skillgate approve' accepts them, and 'skillgate
review' shows the diff. The proposer is never called for an approved version.
Servers run confined as for 'install'; before approval they get only the
credentials named with --credential, after approval all of theirs. A recheck
that leaves the install blocked, or finds drift that blocks capabilities of
an approved install, prints its review and exits 1.`,
			cobra.ExactArgs(1), m.introspectionFlags(&intro),
			func(ctx context.Context, svc *install.Service, args []string) (*install.Review, error) {
				return failBlocked(svc.RecheckWith(ctx, args[0], m.app().Actor(), intro))
			}),
	}
}

func (m *Main) pendingCommand() *cobra.Command {
	var asJSON, all bool
	c := &cobra.Command{
		Use:   "pending [--all] [--json]",
		Short: "List imported skills that need a human",
		Long: `List imported skills waiting for a human: interrupted analyses, blocked
installs, installs awaiting approval, and approved skills with capabilities
blocked by drift. --all lists every install in every state.

Then, in text output, the capability calls of the last 24 hours that were
refused until a human approves them (and not allowed since), each with the
command that grants one call. Agents are only told that a human must
approve: the command is for operators (it is also in the audit record and
the server's log). Then the tenants whose agents' calls were refused because
a remote server needs a connection they lack (none, or an expired one), each
with the 'skillgate connect' command that connects it (docs/connections.md).

Exit codes: 0 done, 1 failure, 2 usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, reqs, conns, err := m.app().Pending(cmd.Context(), all, !asJSON)
			if err != nil {
				return installErr(err)
			}
			if asJSON {
				return jsonout.Write(m.Stdout, ps)
			}
			if len(ps) == 0 && len(reqs) == 0 && len(conns) == 0 {
				fmt.Fprintln(m.Stderr, "nothing waits for review; install a skill with 'skillgate install PATH'")
				return nil
			}
			return app.WritePending(m.Stdout, ps, reqs, conns)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (the same body as GET /v1/installs/pending)")
	c.Flags().BoolVar(&all, "all", false, "list every install, whatever its state")
	return c
}

// enableImported enables or disables an imported skill when name is one
// and prints its review; ok is false when no install has that name (the
// registry's skills then).
func (m *Main) enableImported(ctx context.Context, name string, enable, asJSON bool) (ok bool, err error) {
	r, ok, err := m.app().EnableImported(ctx, name, enable)
	if !ok || err != nil {
		if ok {
			err = installErr(err)
		}
		return ok, err
	}
	return true, m.reviewOut(r, asJSON)
}
