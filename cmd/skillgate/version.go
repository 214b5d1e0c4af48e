package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

// version is skillgate's version as servers, agents and the OpenAPI
// document see it: the module version of a binary installed from a tagged
// module, else "devel-" and the commit it was built from (with
// "-modified" when the tree had uncommitted changes), else "devel". It is
// read once from the build's own information, never set.
var version = app.ReadBuild().String()

func (m *Main) versionCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print skillgate's version: the tagged module version, or the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := app.Version()
			if asJSON {
				return jsonout.Write(m.Stdout, v)
			}
			_, err := fmt.Fprintln(m.Stdout, v.Text())
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return c
}
