package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// connectionFailure maps a connection error to its exit code: bad input
// is usage (2), anything else a failure (1).
func connectionFailure(err error) error {
	if errors.Is(err, credential.ErrInvalidConnection) || errors.Is(err, credential.ErrInvalidScope) {
		return usageErr("%v", err)
	}
	return failure(err)
}

// connectionKey reads PROVIDER ACCOUNT and the scope flags into a key.
func connectionKey(args []string, scope credential.Scope) credential.ConnectionKey {
	return credential.ConnectionKey{Scope: scope, Provider: args[0], Account: args[1]}
}

func (m *Main) connectCommand() *cobra.Command {
	var req app.ConnectRequest
	var noBrowser, asJSON bool
	c := &cobra.Command{
		Use:   "connect PROVIDER --tenant T [--agent A] [--account LABEL] [--url URL] [--default] [--scope S]... [--no-browser] [--timeout 10m] [--json]",
		Short: "Connect a tenant to a remote MCP server with OAuth",
		Long: `Connect a tenant (or one agent of it) to a remote MCP server protected by
OAuth: PROVIDER is the mcp.json ID of a remote (http) server an enabled
skill declares, or any name with --url. skillgate discovers the server's
authorization server, registers a client (or uses the one configured under
connections.clients), listens on 127.0.0.1 for the callback, and prints the
URL to open in a browser; once access is allowed there, the grant is stored
in the credential store as the connection PROVIDER account LABEL, bound to
the server's URL. Tokens are never printed.

A tenant may hold several accounts of one provider; the first is its
default, --default makes this one the default. Connecting an existing
account again replaces its grant (and wakes an expired connection).
See docs/connections.md.

Exit codes: 0 connected; 1 denied, exchange failed, no answer within
--timeout; 2 usage error.`,
		Example: `  skillgate connect github --tenant acme
  skillgate connect github --tenant acme --account work --default
  skillgate connect linear --tenant acme --url https://mcp.linear.app/mcp --no-browser`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Key.Provider = args[0]
			if err := app.CheckConnectionKey(req.Key); err != nil {
				return err
			}
			if req.Wait <= 0 {
				return usageErr("--timeout %s: give how long to wait for the browser, e.g. 10m", req.Wait)
			}
			browse := !noBrowser && app.IsTerminal(m.Stderr)
			req.Open = func(u string) {
				fmt.Fprintf(m.Stderr, "Open this URL to connect %s for %s (account %s):\n  %s\n", req.Key.Provider, req.Key.Scope, req.Key.Account, u)
				if browse {
					app.OpenBrowser(u)
				}
			}
			info, err := m.app().Connect(cmd.Context(), req)
			if err != nil {
				return connectionFailure(err)
			}
			if asJSON {
				return jsonout.Write(m.Stdout, info)
			}
			fmt.Fprintf(m.Stdout, "connected %s\n", info)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&req.Key.Tenant, "tenant", "", "tenant the connection serves (required)")
	f.StringVar(&req.Key.Agent, "agent", "", "only this agent of the tenant")
	f.StringVar(&req.Key.Account, "account", "default", "label of the account, e.g. work or alice@example.com")
	f.StringVar(&req.URL, "url", "", "the remote MCP server's URL (default: the URL of the server PROVIDER that enabled skills declare)")
	f.BoolVar(&req.Default, "default", false, "make this account the tenant's default for the provider")
	f.StringArrayVar(&req.Scopes, "scope", nil, "OAuth scope to request; repeatable (default: what the server announces)")
	f.BoolVar(&noBrowser, "no-browser", false, "only print the URL; never open a browser")
	f.DurationVar(&req.Wait, "timeout", 10*time.Minute, "how long to wait for the browser to come back")
	f.BoolVar(&asJSON, "json", false, "print the connection as JSON (never its tokens)")
	return c
}

func (m *Main) connectionCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "connection ls|rename|default|revoke|rm",
		Short: "Manage OAuth connections to remote MCP servers",
		Long: `Manage the connections 'skillgate connect' made: list them (state, expiry,
last refresh; never tokens), rename an account, choose the default account
of a provider, revoke a grant, or forget a connection. A connection is
PROVIDER ACCOUNT of a tenant (or of one agent, --agent). See
docs/connections.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr("connection needs a subcommand: ls, rename, default, revoke or rm (see 'skillgate connection --help')")
		},
	}

	var lsTenant string
	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls [--tenant T] [--json]",
		Short: "List connections: state, default, expiry; never tokens",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := m.app().Connections(cmd.Context(), lsTenant)
			if err != nil {
				return connectionFailure(err)
			}
			return m.list(lsJSON, list, len(list), "no connections; make one with 'skillgate connect PROVIDER --tenant T'", func(w io.Writer) error { return app.WriteConnectionTable(w, list) })
		},
	}
	ls.Flags().StringVar(&lsTenant, "tenant", "", "only this tenant's connections")
	ls.Flags().BoolVar(&lsJSON, "json", false, "print as JSON: [{tenant, agent, provider, account, kind, state, default, issuer, scopes, expiry, refreshable, created, refreshed, last_error}]")

	// keyed builds a subcommand acting on PROVIDER ACCOUNT of a scope.
	keyed := func(use, short, long string, nargs int, run func(cmd *cobra.Command, k credential.ConnectionKey, args []string) (string, error)) *cobra.Command {
		var scope credential.Scope
		sub := &cobra.Command{
			Use: use, Short: short, Long: long,
			Args: cobra.ExactArgs(nargs),
			RunE: func(cmd *cobra.Command, args []string) error {
				msg, err := run(cmd, connectionKey(args, scope), args)
				if err != nil {
					return connectionFailure(err)
				}
				fmt.Fprintln(m.Stdout, msg)
				return nil
			},
		}
		sub.Flags().StringVar(&scope.Tenant, "tenant", "", "tenant of the connection (required)")
		sub.Flags().StringVar(&scope.Agent, "agent", "", "the agent, for an agent's own connection")
		return sub
	}
	rename := keyed("rename PROVIDER ACCOUNT NEW --tenant T [--agent A]", "Give an account a new label",
		"Give the connection PROVIDER ACCOUNT the label NEW, keeping its grant and\nits default flag. A label taken by another account is refused.", 3,
		func(cmd *cobra.Command, k credential.ConnectionKey, args []string) (string, error) {
			if err := m.app().RenameConnection(cmd.Context(), k, args[2]); err != nil {
				return "", err
			}
			return fmt.Sprintf("renamed %s account %s to %s for %s", k.Provider, k.Account, args[2], k.Scope), nil
		})
	def := keyed("default PROVIDER ACCOUNT --tenant T [--agent A]", "Make an account the provider's default",
		"Make PROVIDER ACCOUNT the default account of the tenant (or agent) for the\nprovider: the one a call that pins no account uses.", 2,
		func(cmd *cobra.Command, k credential.ConnectionKey, _ []string) (string, error) {
			if err := m.app().SetDefaultConnection(cmd.Context(), k); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s is the default", k), nil
		})
	var forget bool
	revoke := keyed("revoke PROVIDER ACCOUNT --tenant T [--agent A] [--forget]", "Revoke a connection's grant at its authorization server",
		`Revoke the grant of PROVIDER ACCOUNT at its authorization server (RFC 7009)
when the server offers revocation, then mark the connection revoked, or
forget it with --forget. When the server refuses or cannot be reached the
connection is left as it was (exit 1): retry, or forget it with
'connection rm'.`, 2,
		func(cmd *cobra.Command, k credential.ConnectionKey, _ []string) (string, error) {
			if err := m.app().RevokeConnection(cmd.Context(), k, forget); err != nil {
				return "", err
			}
			if forget {
				return fmt.Sprintf("revoked and removed %s", k), nil
			}
			return fmt.Sprintf("revoked %s", k), nil
		})
	revoke.Flags().BoolVar(&forget, "forget", false, "remove the connection after revoking it")
	rm := keyed("rm PROVIDER ACCOUNT --tenant T [--agent A]", "Forget a connection without revoking it (exit 1 when there is none)",
		"Remove the connection PROVIDER ACCOUNT from the credential store without\ncontacting its authorization server ('connection revoke --forget' revokes\nfirst). When it was the default, another account becomes the default.", 2,
		func(cmd *cobra.Command, k credential.ConnectionKey, _ []string) (string, error) {
			if err := m.app().RemoveConnection(cmd.Context(), k); err != nil {
				return "", err
			}
			return fmt.Sprintf("removed %s", k), nil
		})
	c.AddCommand(ls, rename, def, revoke, rm)
	return c
}
