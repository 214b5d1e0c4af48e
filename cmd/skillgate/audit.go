package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/storage/audit"
)

func (m *Main) auditCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "audit verify|head|checkpoint|tail|query",
		Short: "Check and read the tamper-evident audit log",
		Long: `Every state change (install, approval, enable, grant) and every capability
decision is appended to a hash-chained audit log in the data directory.

  verify   recompute the chain; exit 1 naming the first edited, deleted or
           reordered record
  head     print the last record's SEQ:HASH; keep it elsewhere and pass it to
           'verify --head' to detect records cut off the end too
  checkpoint
           sign the head and append it to a checkpoint file ('serve' does it
           every --audit-checkpoint-interval); 'verify --checkpoint FILE'
           detects a log rewritten or cut short since
  tail     print the last records (--follow to keep printing new ones)
  query    print the records matching filters`,
	}
	c.AddCommand(m.auditVerifyCommand(), m.auditHeadCommand(), m.auditCheckpointCommand(), m.auditTailCommand(), m.auditQueryCommand())
	return c
}

func (m *Main) auditVerifyCommand() *cobra.Command {
	var asJSON bool
	var head, checkpoint, key string
	c := &cobra.Command{
		Use:   "verify [--head SEQ:HASH | --checkpoint FILE [--key KEY]] [--json]",
		Short: "Verify the audit log's hash chain",
		Long: `Recompute every record's hash and check the chain. Exit 0 when it holds, 1
naming the first record that was edited, deleted, inserted or reordered.
With --head (as printed by 'skillgate audit head' earlier), also detect
records cut off the end of the log since. With --checkpoint, the newest
checkpoint of a checkpoint file (see 'skillgate audit checkpoint') is the
head: every line's signature is checked, by --key (ed25519:BASE64) when given,
else by this data directory's signing key; a whole chain rewritten and
re-hashed since then fails too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var want audit.Head
			switch {
			case head != "" && checkpoint != "":
				return usageErr("--head and --checkpoint are alternatives: give one")
			case key != "" && checkpoint == "":
				return usageErr("--key goes with --checkpoint")
			case head != "":
				h, err := audit.ParseHead(head)
				if err != nil {
					return usageErr("--head: %v", err)
				}
				want = h
			case checkpoint != "":
				cp, err := m.app().VerifyCheckpoint(checkpoint, key)
				if err != nil {
					return failure(err)
				}
				want = cp.Head
			}
			db, err := m.app().OpenStore(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			rep, err := audit.Verify(cmd.Context(), audit.NewLog(db), want)
			if errors.Is(err, audit.ErrTampered) {
				if asJSON {
					_ = jsonout.Write(m.Stdout, map[string]any{"ok": false, "records": rep.Records, "error": err.Error()})
				}
				return &exitError{code: exitFail, err: err}
			}
			if err != nil {
				return err
			}
			if asJSON {
				return jsonout.Write(m.Stdout, map[string]any{"ok": true, "records": rep.Records, "head": rep.Head})
			}
			if rep.Records == 0 {
				fmt.Fprintln(m.Stdout, "audit log is empty")
				return nil
			}
			fmt.Fprintf(m.Stdout, "audit log OK: %s, head %s\n", plural.Of(int(rep.Records), "record", "records"), rep.Head)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	c.Flags().StringVar(&head, "head", "", "a head kept earlier (SEQ:HASH); fail if the log no longer reaches it unchanged")
	c.Flags().StringVar(&checkpoint, "checkpoint", "", "a checkpoint file kept elsewhere; its newest checkpoint is the head to reach")
	c.Flags().StringVar(&key, "key", "", "with --checkpoint: the public key (ed25519:BASE64) the checkpoints must be signed by")
	return c
}

func (m *Main) auditHeadCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "head [--json]",
		Short: "Print the last record's SEQ:HASH",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := m.app().OpenStore(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			h, err := audit.NewLog(db).Head(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return jsonout.Write(m.Stdout, h)
			}
			if h.Seq == 0 {
				return &exitError{code: exitFail, err: errors.New("audit log is empty: no head yet")}
			}
			fmt.Fprintln(m.Stdout, h)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the head as JSON")
	return c
}

// auditFilterFlags are the filters shared by tail and query.
type auditFilterFlags struct {
	actor, session, action, subject, decision, since, until string
	limit                                                   int
	asJSON                                                  bool
}

func (f *auditFilterFlags) add(c *cobra.Command, defLimit int) {
	fl := c.Flags()
	fl.StringVar(&f.actor, "actor", "", "only records by this actor (operator:NAME, agent:TENANT/ID, system)")
	fl.StringVar(&f.session, "session", "", "only records of this agent session")
	fl.StringVar(&f.action, "action", "", "only this action, or a prefix ending in '.' (install.)")
	fl.StringVar(&f.subject, "subject", "", "only records about this skill key or capability (skill:ext/tool)")
	fl.StringVar(&f.decision, "decision", "", "only decisions: allow, deny or require_approval")
	fl.StringVar(&f.since, "since", "", "only records at or after this time (RFC 3339) or this long ago (90m, 1h, 7d)")
	fl.StringVar(&f.until, "until", "", "only records before this time (RFC 3339) or this long ago (90m, 1h, 7d)")
	fl.IntVarP(&f.limit, "limit", "n", defLimit, "at most this many records (0: all)")
	fl.BoolVar(&f.asJSON, "json", false, "print records as JSON lines")
}

func (f *auditFilterFlags) filter(now time.Time) (audit.Filter, error) {
	q := audit.Filter{Actor: f.actor, Session: f.session, Action: f.action, Subject: f.subject, Decision: capability.Effect(f.decision), Limit: f.limit}
	if q.Decision != "" && !q.Decision.Valid() {
		return q, usageErr("--decision must be allow, deny or require_approval, not %q", f.decision)
	}
	var err error
	if q.Since, err = parseWhen(f.since, now); err != nil {
		return q, usageErr("--since: %v", err)
	}
	if q.Until, err = parseWhen(f.until, now); err != nil {
		return q, usageErr("--until: %v", err)
	}
	return q, nil
}

// parseWhen reads an RFC 3339 time or a duration ago, written as for
// grant expiries (policy.ParseDuration: 90m, 7d).
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := policy.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-11-22T10:00:00Z) nor a duration ago (90m, 7d)", s)
	}
	return t, nil
}

func (m *Main) auditTailCommand() *cobra.Command {
	var f auditFilterFlags
	var follow bool
	c := &cobra.Command{
		Use:   "tail [-n N] [--follow] [filters] [--json]",
		Short: "Print the last audit records",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := f.filter(time.Now())
			if err != nil {
				return err
			}
			return m.app().TailAudit(cmd.Context(), q, follow, func(rs []audit.Record) { printAudit(m.Stdout, rs, f.asJSON) })
		},
	}
	f.add(c, 20)
	c.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new records until interrupted")
	return c
}

func (m *Main) auditQueryCommand() *cobra.Command {
	var f auditFilterFlags
	var after int64
	c := &cobra.Command{
		Use:   "query [filters] [-n N] [--after SEQ] [--json]",
		Short: "Print the audit records matching filters, oldest first",
		Long: `Print the audit records matching the filters, in the order they were
written (oldest first). With -n N, the newest N of them (still oldest
first); with --after SEQ as well, the first N after record SEQ, to page
forward through the log. --since and --until take an RFC 3339 time or a
duration ago, written as for grant expiries (90m, 2h, 7d).`,
		Example: "  skillgate audit query --since 1h -n 3\n  skillgate audit query --action install. --since 7d --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := f.filter(time.Now())
			if err != nil {
				return err
			}
			q.AfterSeq = after
			// Without a place to page from, a limit keeps the newest.
			q.Last = after == 0 && q.Limit > 0
			rs, err := m.app().QueryAudit(cmd.Context(), q)
			if err != nil {
				return err
			}
			printAudit(m.Stdout, rs, f.asJSON)
			return nil
		},
	}
	f.add(c, 0)
	c.Flags().Int64Var(&after, "after", 0, "only records after this sequence number")
	return c
}

// printAudit prints records as JSON lines or one readable line each.
func printAudit(w io.Writer, rs []audit.Record, asJSON bool) {
	for _, r := range rs {
		if asJSON {
			b, _ := jsonLine(r)
			_, _ = w.Write(b)
			continue
		}
		line := fmt.Sprintf("%6d %s %-22s %-28s %s", r.Seq, r.Time.Format("2006-01-02T15:04:05.000Z"), r.Action, r.Subject, r.Actor)
		if r.Session != "" {
			line += " session=" + r.Session
		}
		if r.Decision != "" {
			line += " " + strings.ToUpper(string(r.Decision))
		}
		if len(r.Data) > 0 {
			line += " " + string(r.Data)
		}
		if len(r.Reasons) > 0 {
			line += " — " + strings.Join(r.Reasons, "; ")
		}
		fmt.Fprintln(w, line)
	}
}

// jsonLine encodes v as one line of JSON.
func jsonLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
