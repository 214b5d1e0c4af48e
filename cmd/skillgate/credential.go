package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// credentialFailure maps a store error to its exit code: bad input is
// usage (2), anything else a failure (1).
func credentialFailure(err error) error {
	switch {
	case errors.Is(err, credential.ErrInvalidName), errors.Is(err, credential.ErrInvalidScope), errors.Is(err, credential.ErrInvalidValue):
		return usageErr("%v", err)
	default:
		return &exitError{code: exitFail, err: err}
	}
}

func (m *Main) credentialCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "credential set|ls|rm|keygen",
		Short: "Manage the credentials skills' MCP servers are started with",
		Long: `Manage per-tenant and per-agent credentials: the values of ${NAME}
references in a skill's mcp.json. For a principal (tenant, agent) a name
resolves to the agent's entry, else the tenant's entry, else skillgate's own
environment for the names config.yaml lists (credentials: from_environment:
[NAME, ...]); no other variable is ever given to a server. Each distinct set of values gets its own upstream server
process, so two tenants never share a server started with the other's token.

The store is DATA/credentials.age, encrypted with age; when the metadata
store is PostgreSQL it is kept there instead (the document credentials.age),
so that every replica on the database sees the same credentials. Its key is
SKILLGATE_CREDENTIAL_KEY (an age identity, AGE-SECRET-KEY-1…) when set, else
DATA/credentials.key, made by 'credential keygen' or, when missing, with mode
0600 by the first 'credential set'.
Keep the key: without it the store cannot be read. A store that cannot be
decrypted or read is refused, never emptied or overwritten. A running
server picks changes up within its watch interval (at once on PostgreSQL).
Every process sharing the store needs the same key: set
SKILLGATE_CREDENTIAL_KEY on each.

Values are read from standard input, never from arguments, and are never
printed, logged or audited.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr("credential needs a subcommand: set, ls, rm or keygen (see 'skillgate credential --help')")
		},
	}

	var scope credential.Scope
	set := &cobra.Command{
		Use:   "set NAME --tenant T [--agent A] < secret",
		Short: "Store a credential read from standard input",
		Long: `Store the credential NAME for a tenant (or one agent of it), replacing the
value it had. The value is read from standard input, up to 64 KiB; one
trailing newline is removed; an empty value is refused. On a terminal the
value is asked for without echo.`,
		Example: `  printf '%s' "$TOKEN" | skillgate credential set GITHUB_TOKEN --tenant acme
  skillgate credential set GITLAB_TOKEN --tenant acme --agent drafter < token.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := app.CheckCredential(args[0], scope); err != nil {
				return err
			}
			in := m.Stdin
			if in == nil {
				in = os.Stdin
			}
			value, err := app.ReadSecret(in, m.Stderr, args[0], scope)
			if err != nil {
				return failure(err)
			}
			if err := m.app().SetCredential(cmd.Context(), args[0], scope, value); err != nil {
				return credentialFailure(err)
			}
			fmt.Fprintf(m.Stdout, "set %s for %s\n", args[0], scope)
			return nil
		},
	}
	set.Flags().StringVar(&scope.Tenant, "tenant", "", "tenant the credential serves (required)")
	set.Flags().StringVar(&scope.Agent, "agent", "", "only this agent of the tenant")

	var lsTenant string
	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls [--tenant T] [--json]",
		Short: "List credentials: names and scopes, never values",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := m.app().Credentials(cmd.Context(), lsTenant)
			if err != nil {
				return credentialFailure(err)
			}
			return m.list(lsJSON, list, len(list), "no credentials; add one with 'skillgate credential set NAME --tenant T'", func(w io.Writer) error { return credential.WriteTable(w, list) })
		},
	}
	ls.Flags().StringVar(&lsTenant, "tenant", "", "only this tenant's credentials")
	ls.Flags().BoolVar(&lsJSON, "json", false, "print as JSON: [{name, tenant, agent}]")

	var rmScope credential.Scope
	rm := &cobra.Command{
		Use:   "rm NAME --tenant T [--agent A]",
		Short: "Delete a credential (exit 1 when there is none)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := app.CheckCredential(args[0], rmScope); err != nil {
				return err
			}
			if err := m.app().RemoveCredential(cmd.Context(), args[0], rmScope); err != nil {
				return credentialFailure(err)
			}
			fmt.Fprintf(m.Stdout, "removed %s for %s\n", args[0], rmScope)
			return nil
		},
	}
	rm.Flags().StringVar(&rmScope.Tenant, "tenant", "", "tenant of the credential (required)")
	rm.Flags().StringVar(&rmScope.Agent, "agent", "", "the agent, for an agent's own credential")
	var keyOut string
	keygen := &cobra.Command{
		Use:   "keygen [--out FILE]",
		Short: "Make the credential store's key (an age identity)",
		Long: `Make a new key for the credential store, an age X25519 identity, and write
it with mode 0600 to DATA/credentials.key (creating the data directory), or
to --out FILE. The file holds one line, AGE-SECRET-KEY-1…, which is also
what SKILLGATE_CREDENTIAL_KEY takes, so that replicas share one key kept in
a secret manager. An existing file is never replaced: it may be the key of
a store, and replacing it would lose every credential. Prints the file and
the key's public recipient (age1…), never the key.`,
		Example: `  skillgate credential keygen
  skillgate credential keygen --out credentials.key
  export SKILLGATE_CREDENTIAL_KEY="$(cat credentials.key)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, recipient, err := m.app().CredentialKeygen(keyOut)
			if err != nil {
				return credentialFailure(err)
			}
			fmt.Fprintf(m.Stdout, "created %s (mode 0600; public key %s)\n", out, recipient)
			return nil
		},
	}
	keygen.Flags().StringVar(&keyOut, "out", "", "file to write the key to (default DATA/credentials.key)")
	c.AddCommand(set, ls, rm, keygen)
	return c
}
