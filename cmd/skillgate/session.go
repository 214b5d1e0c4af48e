package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func (m *Main) sessionCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "session ls|rm|prune",
		Short: "List, remove and prune agent sessions",
		Long: `Manage stored agent sessions: who each belongs to, the skills it has loaded,
when it was created and last used, and its /workspace files.

A session is "used" when it is created, resumed, changes its loaded skills
or ends, and every few minutes while a connection keeps it open; not on
every tool call. A session is stored once it loads a skill or writes to its
workspace; one that never did leaves nothing. Sessions unused for 24 hours
expire ('sessions: idle_expiry' in the configuration file: 30d, 12h, or 0
or never to keep them): 'skillgate serve' prunes them, and a client that
resumes an expired session gets a fresh one under the same id (no loaded
skills, empty workspace). Removing a session deletes its workspace.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageErr("session needs a subcommand: ls, rm or prune (see 'skillgate session --help')")
		},
	}

	var lsSF storageFlags
	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls [--json]",
		Short: "List sessions, least recently used first",
		Long: `List the stored sessions, least recently used first: id, principal
(tenant/agent@tier), loaded skills, created and last used (UTC). --json
prints [{"id", "principal", "skills", "created", "last_used"}].`,
		Example: "  skillgate session ls\n  skillgate session ls --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := m.app().ListSessions(cmd.Context(), &lsSF)
			if err != nil {
				return err
			}
			return m.list(lsJSON, list, len(list), "no sessions", func(w io.Writer) error { return session.WriteTable(w, list) })
		},
	}
	ls.Flags().BoolVar(&lsJSON, "json", false, "print as JSON")
	m.addStorageFlags(ls, &lsSF)

	var rmSF storageFlags
	rm := &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove sessions and their workspaces",
		Long: `Remove the named sessions: their record (principal, loaded skills) and
their /workspace files. A client that resumes a removed id gets a fresh
session. Remove sessions whose connections have ended: a connection still
open in another process keeps working, but can no longer save its loaded
skills. Exits 1 when an id does not exist (the others are still removed).`,
		Example: "  skillgate session rm 7f3a9c0e1b2d4a5f",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			failed := false
			err := m.app().RemoveSessions(cmd.Context(), &rmSF, args, func(in session.Info) {
				fmt.Fprintf(m.Stdout, "removed %s (%s)\n", in.ID, in.Principal)
			}, func(err error) {
				fmt.Fprintf(m.Stderr, "skillgate session rm: %v\n", err)
				failed = true
			})
			if err != nil {
				return err
			}
			if failed {
				return errFailed
			}
			return nil
		},
	}
	m.addStorageFlags(rm, &rmSF)

	var prSF storageFlags
	var idleFlag string
	var dryRun, prJSON bool
	prune := &cobra.Command{
		Use:   "prune [--idle DURATION] [--dry-run] [--json]",
		Short: "Remove the sessions unused for longer than an idle time",
		Long: `Remove the sessions unused for longer than --idle (90m, 12h, 30d; default:
sessions.idle_expiry from the configuration file, 24h when it names none),
with their workspaces,
and list them. --dry-run lists them without removing anything. --json
prints the sessions as 'session ls --json' does.`,
		Example: "  skillgate session prune --idle 30d --dry-run\n  skillgate session prune --idle 7d",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pruned, idle, err := m.app().PruneSessions(cmd.Context(), &prSF, idleFlag, dryRun)
			if err != nil {
				return err
			}
			if prJSON {
				return jsonout.Write(m.Stdout, pruned)
			}
			verb := "pruned"
			if dryRun {
				verb = "would prune"
			}
			noun := "sessions"
			if len(pruned) == 1 {
				noun = "session"
			}
			fmt.Fprintf(m.Stderr, "%s %d %s unused for more than %s\n", verb, len(pruned), noun, app.IdleText(idle))
			if len(pruned) == 0 {
				return nil
			}
			return session.WriteTable(m.Stdout, pruned)
		},
	}
	prune.Flags().StringVar(&idleFlag, "idle", "", "remove sessions unused for longer than this (90m, 12h, 30d)")
	prune.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed, remove nothing")
	prune.Flags().BoolVar(&prJSON, "json", false, "print the sessions as JSON")
	m.addStorageFlags(prune, &prSF)

	c.AddCommand(ls, rm, prune)
	return c
}
