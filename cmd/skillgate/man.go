package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/skillgate/skillgate/internal/platform/plural"
)

func (m *Main) manCommand() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "man --dir D",
		Short: "Write a man page for every command into a folder",
		Long: `Write the manual pages of skillgate and of every command (section 1,
skillgate.1, skillgate-install.1, skillgate-config-check.1, …) into the folder
--dir, made when missing, from the commands' own help: install them with
'cp D/*.1 /usr/local/share/man/man1/' or read one with 'man -l D/skillgate-add.1'.
The pages are dated now, or at $SOURCE_DATE_EPOCH for a reproducible build.

Exit codes: 0 written, 1 failure, 2 usage error.`,
		Example: "  skillgate man --dir ./man",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usageErr("man needs --dir D, the folder to write the pages in (see 'skillgate man --help')")
			}
			date := time.Now()
			if s := m.Getenv("SOURCE_DATE_EPOCH"); s != "" {
				sec, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return usageErr("SOURCE_DATE_EPOCH %q: give the seconds since 1970 (date +%%s)", s)
				}
				date = time.Unix(sec, 0).UTC()
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			root := cmd.Root()
			n := 0
			var prepare func(c *cobra.Command)
			prepare = func(c *cobra.Command) {
				c.DisableAutoGenTag = true
				if c.IsAvailableCommand() || c == root {
					n++
				}
				for _, sub := range c.Commands() {
					prepare(sub)
				}
			}
			prepare(root)
			header := &doc.GenManHeader{Title: "SKILLGATE", Section: "1", Date: &date, Source: "skillgate " + version, Manual: "skillgate manual"}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			_, err := fmt.Fprintf(m.Stdout, "wrote %s in %s\n", plural.Of(n, "man page", "man pages"), dir)
			return err
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "the folder to write the pages in")
	return c
}
