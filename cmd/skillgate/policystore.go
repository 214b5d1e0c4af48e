package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// maxStoredPolicy bounds the text of one stored policy, as a policy file
// is bounded.
const maxStoredPolicy = policy.MaxPolicyFileBytes

// policyStoreCommands are `policy put`, `policy rm` and `policy ls`: the
// policies kept in the metadata store, which every process on it (every
// replica on a shared PostgreSQL) applies, unlike the files of one data
// directory's policies/.
func (m *Main) policyStoreCommands() []*cobra.Command {
	put := &cobra.Command{
		Use:   "put ID FILE|-",
		Short: "Store a Cedar policy text under ID in the store (replacing one with that ID)",
		Long: `Store the Cedar policies of FILE (or standard input, with -) in the metadata
store under ID, replacing the text stored under ID before. The policy set
they join (DATA/policies/*.cedar and every stored text) is checked first: a
text that does not parse, or whose @id clashes, is refused and nothing
changes. Every process on the store applies the change: a running serve
within its watch interval, every replica of a shared PostgreSQL store
within a second. The change is audited (policy.put).`,
		Example: "  skillgate policy put writes writes.cedar\n  skillgate policy put reads - < reads.cedar",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, file := args[0], args[1]
			if err := checkStoredPolicyID(id); err != nil {
				return err
			}
			var r io.Reader = m.Stdin
			if file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return usageErr("%v", err)
				}
				defer f.Close()
				r = f
			} else if r == nil {
				r = os.Stdin
			}
			text, err := io.ReadAll(io.LimitReader(r, maxStoredPolicy+1))
			if err != nil {
				return err
			}
			if len(text) > maxStoredPolicy {
				return usageErr("%s: larger than %d bytes; split it", file, maxStoredPolicy)
			}
			db, err := m.openStore(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			// The set the new text joins must load, as the gateway loads it.
			set, err := policy.LoadPolicies(ctx, m.policyDir(), replacing{db, store.StoredPolicy{ID: id, Text: string(text)}})
			if err != nil {
				return &exitError{code: exitFail, err: fmt.Errorf("policy %s refused, nothing stored: %w", id, err)}
			}
			if err := db.PutPolicy(ctx, store.StoredPolicy{ID: id, Text: string(text)}); err != nil {
				return err
			}
			if err := m.auditPolicy(cmd, db, "policy.put", id, len(text)); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "stored policy %s (%s in the set)\n", id, plural.Of(set.Len(), "policy", "policies"))
			return nil
		},
	}
	rm := &cobra.Command{
		Use:   "rm ID",
		Short: "Remove the policy text stored under ID",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			db, err := m.openStore(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			ps, err := db.Policies(ctx)
			if err != nil {
				return err
			}
			found := false
			for _, p := range ps {
				found = found || p.ID == args[0]
			}
			if !found {
				return &exitError{code: exitFail, err: fmt.Errorf("no stored policy %q (list them with 'skillgate policy ls')", args[0])}
			}
			if err := db.DeletePolicy(ctx, args[0]); err != nil {
				return err
			}
			if err := m.auditPolicy(cmd, db, "policy.remove", args[0], 0); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "removed policy %s\n", args[0])
			return nil
		},
	}
	var asJSON bool
	ls := &cobra.Command{
		Use:   "ls [--json]",
		Short: "List the policy texts stored in the store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			db, err := m.openStore(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			ps, err := db.Policies(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				if ps == nil {
					ps = []store.StoredPolicy{}
				}
				return writeJSON(m.Stdout, ps)
			}
			if len(ps) == 0 {
				fmt.Fprintln(m.Stderr, "no stored policies; add one with 'skillgate policy put ID FILE'")
				return nil
			}
			tw := tabwriter.NewWriter(m.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tBYTES\tUPDATED")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%d\t%s\n", p.ID, len(p.Text), p.UpdatedAt.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print as JSON (with the texts)")
	return []*cobra.Command{put, rm, ls}
}

// checkStoredPolicyID accepts ids of letters, digits, '-', '_' and '.', at
// most 128 bytes.
func checkStoredPolicyID(id string) error {
	if id == "" || len(id) > 128 {
		return usageErr("policy id %q: 1 to 128 letters, digits, '-', '_' or '.'", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return usageErr("policy id %q: 1 to 128 letters, digits, '-', '_' or '.'", id)
		}
	}
	return nil
}

// auditPolicy records a stored policy's change.
func (m *Main) auditPolicy(cmd *cobra.Command, db store.DB, action, id string, size int) error {
	data, _ := json.Marshal(map[string]any{"bytes": size})
	_, err := audit.NewLog(db).Append(cmd.Context(), audit.Record{Time: time.Now(), Actor: m.actor(), Action: action, Subject: "policy:" + id, Data: data})
	if err != nil {
		return fmt.Errorf("audit of %s %s: %w", action, id, err)
	}
	return nil
}

// replacing is the store's policies with p put in (as PutPolicy would).
type replacing struct {
	db store.DB
	p  store.StoredPolicy
}

func (r replacing) Policies(ctx context.Context) ([]store.StoredPolicy, error) {
	ps, err := r.db.Policies(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]store.StoredPolicy, 0, len(ps)+1)
	added := false
	for _, p := range ps {
		if p.ID == r.p.ID {
			p, added = r.p, true
		} else if !added && p.ID > r.p.ID {
			out, added = append(out, r.p), true
		}
		out = append(out, p)
	}
	if !added {
		out = append(out, r.p)
	}
	return out, nil
}
