package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
)

// completedArgs says which commands' first argument names a skill, an
// install, a token or a change, by command path below the root: shell
// completion offers those names (skillgate completion bash|zsh|fish|powershell
// writes the script that asks for them).
var completedArgs = map[string]app.CompletionKind{
	"show":    app.CompleteSkills,
	"enable":  app.CompleteSkills,
	"disable": app.CompleteSkills,

	"review":   app.CompleteInstalls,
	"complete": app.CompleteInstalls,
	"approve":  app.CompleteInstalls,
	"suppress": app.CompleteInstalls,
	"reject":   app.CompleteInstalls,
	"remove":   app.CompleteInstalls,
	"recheck":  app.CompleteInstalls,
	"update":   app.CompleteInstalls,

	"token rm": app.CompleteTokens,

	"changes show":    app.CompleteChanges,
	"changes approve": app.CompleteChanges,
	"changes reject":  app.CompleteChanges,
}

// addCompletions gives the commands of completedArgs under root a
// ValidArgsFunction that offers the names of their first argument (and
// nothing, rather than file names, after it).
func (m *Main) addCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if kind, ok := completedArgs[path]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				names, err := m.app().Completions(cmd.Context(), kind, toComplete)
				if err != nil {
					return nil, cobra.ShellCompDirectiveError | cobra.ShellCompDirectiveNoFileComp
				}
				return names, cobra.ShellCompDirectiveNoFileComp
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
