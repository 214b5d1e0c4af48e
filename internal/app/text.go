package app

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// The text renderings of the application's own results: what the CLI
// prints when it is not asked for JSON. The results of one part (a scan
// report, a change, an audit record) are rendered by that part.

// WriteText writes the scan's report (see registry.ScanReport.WriteText),
// then what the bucket added: the tenant libraries synced and the mirror
// uploaded.
func (res *ScanResult) WriteText(w io.Writer) {
	res.ScanReport.WriteText(w)
	if res.Libraries != nil {
		for _, n := range res.Libraries.Notes {
			fmt.Fprintf(w, "tenant libraries: %s\n", n)
		}
		for _, t := range res.Libraries.Tenants {
			fmt.Fprintf(w, "tenant library %s: %s in the bucket, %d copied, %d unchanged, %d removed\n",
				t.Tenant, plural.Of(t.Skills, "skill", "skills"), t.Copied, t.Unchanged, t.Removed)
			for _, r := range t.Refused {
				fmt.Fprintf(w, "  refused: %s: %s\n", r.Skill, r.Reason)
			}
			for _, n := range t.Notes {
				fmt.Fprintf(w, "  note: %s\n", n)
			}
		}
	}
	if r := res.Mirror; r != nil {
		fmt.Fprintf(w, "Mirror: %s, %d uploaded, %d unchanged, %d removed\n", plural.Of(r.Skills, "skill", "skills"), r.Uploaded, r.Unchanged, r.Removed)
		for _, f := range r.Failed {
			fmt.Fprintf(w, "  failed: %s\n", f)
		}
	}
}

// WriteText writes the skill as 'skillgate show' prints it: the
// registry's details, with where an imported version came from and who
// signed it (or why its signature does not hold now) in between.
func (d *Skill) WriteText(w io.Writer) {
	d.WriteHead(w)
	if d.Provenance != nil {
		fmt.Fprintf(w, "installed from: %s\n", d.Provenance.Text())
	}
	switch sig := d.Signature; {
	case sig != nil:
		fmt.Fprintf(w, "signed:       by %s with key %s (%s) at %s", sig.Signer, sig.KeyName, sig.KeyID, sig.SignedAt.Format(time.RFC3339))
		if sig.Index != "" {
			fmt.Fprintf(w, " (index %s)", sig.Index)
		}
		fmt.Fprintln(w)
	case d.SigError != "":
		fmt.Fprintf(w, "signed:       not now: %s\n", d.SigError)
	}
	d.WriteTail(w)
}

// WriteText writes the report as 'skillgate policy check' prints it: the
// errors and warnings to stderr, then on stdout that the default policy
// applies (no policies in policyDir or the store) or how many policies
// of how many sources are valid.
func (rep *CheckReport) WriteText(stdout, stderr io.Writer, policyDir string) {
	for _, e := range rep.Errors {
		fmt.Fprintln(stderr, e)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(stderr, w)
	}
	switch {
	case rep.Default:
		fmt.Fprintf(stdout, "no policies in %s or the store: the default policy applies (permit every invoke in scope)\n", policyDir)
	case rep.OK:
		fmt.Fprintf(stdout, "ok: %s in %s\n", plural.Of(len(rep.Policies), "policy", "policies"), plural.Of(len(rep.Sources), "source", "sources"))
	}
}

// WritePending writes what waits for a human, as 'skillgate pending'
// prints it: the installs as a table, then the calls refused until a
// human approves them, each with the command that grants one call.
func WritePending(w io.Writer, ps []install.Summary, reqs []broker.ApprovalRequest, conns []broker.ConnectionRequest) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(ps) > 0 {
		fmt.Fprintln(tw, "NAME\tSTATE\tVERSION\tNEXT")
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Key, p.State, install.ShortDigest(p.Digest), strings.Join(p.Next, "; "))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(reqs) > 0 {
		if len(ps) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "Calls waiting for a human's approval (last 24h):")
		for _, r := range reqs {
			fmt.Fprintf(w, "  %s %s: %d refused, last %s\n    approve one call: %s\n", r.Agent, r.Capability, r.Times, r.Last.UTC().Format(time.RFC3339), r.Approve)
		}
	}
	if len(conns) > 0 {
		if len(ps) > 0 || len(reqs) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "Calls refused for want of a connection (last 24h):")
		for _, c := range conns {
			fmt.Fprintf(w, "  tenant %s needs %s: %d refused, last %s\n    connect: %s\n", c.Tenant, c.Provider, c.Times, c.Last.UTC().Format(time.RFC3339), c.Connect)
		}
	}
	return nil
}

// WriteText writes the verdict as 'skillgate validate' prints it: a valid
// skill (with its warnings unless strict) to stdout, an invalid one with
// its errors (and warnings unless strict) to stderr.
func (r *ValidateResult) WriteText(stdout, stderr io.Writer, strict bool) {
	if r.Valid {
		fmt.Fprintf(stdout, "Valid skill: %s\n", r.Path)
		if !strict {
			for _, w := range r.Warnings {
				fmt.Fprintf(stdout, "  warning: %s\n", w)
			}
		}
		return
	}
	fmt.Fprintf(stderr, "Validation failed for %s:\n", r.Path)
	for _, e := range r.Errors {
		fmt.Fprintf(stderr, "  - %s\n", e)
	}
	if !strict {
		for _, w := range r.Warnings {
			fmt.Fprintf(stderr, "  warning: %s\n", w)
		}
	}
}

// WriteText writes the outcome of one install of 'skillgate install
// --locked': recorded, blocked or already recorded to stdout; a refusal
// to stderr, reporting it with refused true.
func (r LockedInstall) WriteText(stdout, stderr io.Writer) (refused bool) {
	e := r.Entry
	switch {
	case r.Blocked:
		fmt.Fprintf(stdout, "%s %s: blocked (see skillgate review %s)\n", e.Key, e.Digest, e.Key)
	case r.Err == nil:
		fmt.Fprintf(stdout, "%s %s: %s\n", e.Key, r.Review.Digest, r.Review.State)
	case errors.Is(r.Err, install.ErrState):
		fmt.Fprintf(stdout, "%s %s: already recorded (%v)\n", e.Key, e.Digest, r.Err)
	default:
		fmt.Fprintf(stderr, "%s: %v\n", e.Key, r.Err)
		return true
	}
	return false
}

// IdleText writes an idle time as 'session prune' reports it: whole days
// as "30d", anything else as a duration ("90m0s").
func IdleText(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// WriteStoredPolicies writes the policy texts of the store as the table
// of 'skillgate policy ls': id, size and when it was last put.
func WriteStoredPolicies(w io.Writer, ps []store.StoredPolicy) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tBYTES\tUPDATED")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", p.ID, len(p.Text), p.UpdatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

// WriteText writes the verdict on a signed index as 'skillgate
// verify-signature' prints it: the skills not found (to stderr), each
// skill that is not what the index signed (to stderr), then, when every
// one is, the index's signer (to stdout). It returns an error when the
// index or a skill did not verify.
func (out *IndexReport) WriteText(stdout, stderr io.Writer, root string) error {
	if out.IndexFailed {
		return errors.New(out.Error)
	}
	ix := out.Signed
	if out.Missing > 0 {
		fmt.Fprintf(stderr, "%d of the skills %s lists were not found under %s (removed since, or beyond --max-depth or --max-dirs)\n", out.Missing, out.Index, root)
	}
	bad := 0
	for _, v := range out.Skills {
		if !v.Valid {
			bad++
			fmt.Fprintf(stderr, "%s: %s\n", v.Rel, v.Error)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of the %d skills %s lists are not what it signed", bad, ix.Len(), out.Index)
	}
	fmt.Fprintf(stdout, "valid: %s signs %s for %s by %s with key %s (%s) at %s\n", out.Index, plural.Of(ix.Len(), "skill", "skills"), ix.Predicate.Trust, ix.Predicate.Signer, ix.KeyName, ix.KeyID, ix.Predicate.SignedAt.Format(time.RFC3339))
	return nil
}

// WriteText writes a valid verdict as 'skillgate verify-signature' prints
// it: the skill, its digest, the trust it is signed for, the signer, the
// key, the time and the index that vouches for it.
func (v SignatureVerdict) WriteText(w io.Writer) {
	p := v.Provenance
	by := ""
	if p.Index != "" {
		by = " (index " + p.Index + ")"
	}
	fmt.Fprintf(w, "valid: %s %s signed for %s by %s with key %s (%s) at %s%s\n", p.Skill, p.Digest, p.Trust, p.Signer, p.KeyName, p.KeyID, p.SignedAt.Format(time.RFC3339), by)
}
