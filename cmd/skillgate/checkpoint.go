package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func (m *Main) auditCheckpointCommand() *cobra.Command {
	var file string
	var asJSON bool
	c := &cobra.Command{
		Use:   "checkpoint [--file F] [--json]",
		Short: "Sign the audit log's head and append it to a checkpoint file",
		Long: `Sign the audit log's current head (last record's SEQ:HASH, with the time)
with the data directory's audit signing key (DATA/` + app.AuditKeyFile + `, made on
first use, mode 0600) and append it as one JSON line to --file (default
DATA/` + app.AuditCheckpointFile + `); the line is printed too. 'skillgate serve'
does the same every --audit-checkpoint-interval.

A checkpoint only protects the log if it is kept where whoever can write the
data directory cannot: copy the file (or the printed line) to another host or
write-once storage, and note the public key ("key" in the line). Later,
'skillgate audit verify --checkpoint FILE --key KEY' fails when the log was
rewritten, re-chained or cut short since the newest checkpoint.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cp, file, err := m.app().CheckpointAudit(cmd.Context(), file)
			if err != nil {
				return failure(err)
			}
			if asJSON {
				return jsonout.Write(m.Stdout, cp)
			}
			fmt.Fprintf(m.Stdout, "checkpoint %s at %s appended to %s\nsigning key %s\n", cp.Head, cp.At.Format(time.RFC3339), file, cp.Key)
			return nil
		},
	}
	c.Flags().StringVar(&file, "file", "", "the checkpoint file to append to (default DATA/"+app.AuditCheckpointFile+")")
	c.Flags().BoolVar(&asJSON, "json", false, "print the checkpoint as JSON")
	return c
}
