package main

import (
	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func (m *Main) initCommand() *cobra.Command {
	var opts app.ScaffoldOptions
	var asJSON bool
	c := &cobra.Command{
		Use:   "init NAME [--dir D] [--description TEXT] [--mcp] [--json]",
		Short: "Create a new skill folder with a valid SKILL.md (and an example mcp.json)",
		Long: `Create the folder D/NAME (D is --dir, default the current directory) holding
a SKILL.md whose frontmatter names the skill and describes it, and a body
template that says what goes where. The result passes
'skillgate validate --strict'. With --mcp the folder also gets an mcp.json
declaring one example MCP server (a pinned npm package run with npx), in the
format install reads; replace it with the server your skill uses.

NAME must be a valid skill name (lowercase letters, digits and single
hyphens, at most 64 characters); an invalid one is refused with the
specification's message. An existing folder is used only when it is empty.
--json prints {path, name, files}.

Exit codes: 0 created, 1 failure, 2 usage error (an invalid NAME or
description, a folder that is not empty).`,
		Example: "  skillgate init pdf-forms --description 'Fill in PDF forms from a table of values'\n  skillgate init github-triage --dir .agents/skills --mcp",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			r, err := app.Scaffold(opts)
			if err != nil {
				return err
			}
			if asJSON {
				return jsonout.Write(m.Stdout, r)
			}
			return r.WriteText(m.Stdout)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Dir, "dir", "", "the folder to create the skill's folder in (default the current directory)")
	f.StringVar(&opts.Description, "description", "", "the skill's description: what it does and when to use it (default a placeholder to replace)")
	f.BoolVar(&opts.MCP, "mcp", false, "also write an example mcp.json declaring an MCP server")
	f.BoolVar(&asJSON, "json", false, "print what was created as JSON")
	return c
}
