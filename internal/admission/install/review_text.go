package install

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/platform/termtext"
)

// Text renders a review for a terminal.
func (r *Review) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s\n", r.Key, r.State, r.Digest)
	if r.VersionLabel != "" {
		fmt.Fprintf(&b, "version label: %s\n", r.VersionLabel)
	}
	if p := r.Provenance; p != nil {
		fmt.Fprintf(&b, "source: %s\n", p.Text())
		if r.Stale {
			fmt.Fprintf(&b, "  stale: recorded for %s, not this version\n", p.Digest)
		}
	}
	fmt.Fprintf(&b, "reason: %s\n", r.Reason)
	r.layersText(&b)
	r.serversText(&b)
	for _, sv := range r.Servers {
		if sv.SkillsError != "" {
			fmt.Fprintf(&b, "server %s: listing its published skills failed: %s\n", sv.ServerID, sv.SkillsError)
		}
	}
	if len(r.PublishedSkills) > 0 {
		b.WriteString("published skills (MCP Skills extension):\n")
		for _, p := range r.PublishedSkills {
			mark := " "
			if p.Approved {
				mark = "A"
			}
			fmt.Fprintf(&b, "  %s %-40s %-7s %d files %s\n", mark, p.Ref, p.Status, p.Files, p.SetDigest)
			if p.Path != "" {
				fmt.Fprintf(&b, "      agents read it at skill://%s/SKILL.md\n", p.Path)
			}
			for _, pr := range p.Problems {
				fmt.Fprintf(&b, "      blocked: %s\n", pr)
			}
			for _, n := range p.Notes {
				fmt.Fprintf(&b, "      %s\n", n)
			}
		}
	}
	fmt.Fprintf(&b, "proposal (%s): %s\n", r.Proposal.Proposer, plural.Of(len(r.Proposal.Capabilities), "capability", "capabilities"))
	if r.Proposal.Error != "" {
		fmt.Fprintf(&b, "  proposer failed, deterministic proposal used: %s\n", r.Proposal.Error)
	}
	for _, c := range r.Proposal.Corrections {
		fmt.Fprintf(&b, "  corrected %s %s: %s\n", c.Kind, c.Capability, c.Message)
	}
	b.WriteString("capabilities:\n")
	for _, c := range r.Capabilities {
		mark := " "
		switch {
		case c.Approved:
			mark = "A"
		case c.Proposed:
			mark = "P"
		}
		fmt.Fprintf(&b, "  %s %-40s %-7s risk=%s side-effects=%s egress=%s\n", mark, c.Name, c.Status,
			field(string(c.Risk.RiskLevel.Value), c.Risk.RiskLevel.Source), field(string(c.Risk.SideEffects.Value), c.Risk.SideEffects.Source),
			field(string(c.Risk.DataEgress.Value), c.Risk.DataEgress.Source))
		if c.ToolNameReason != "" {
			fmt.Fprintf(&b, "      agents see it as %s: %s\n", c.ToolName, c.ToolNameReason)
		}
		if len(c.Constraints) > 0 {
			fmt.Fprintf(&b, "      constraints: %s\n", c.Constraints)
		}
		if c.CallApproval != "" {
			fmt.Fprintf(&b, "      calls need a grant: %s\n", c.CallApproval)
		}
		for _, bl := range c.Blockers {
			fmt.Fprintf(&b, "      blocked: %s\n", bl)
		}
		for _, cf := range c.Conflicts {
			fmt.Fprintf(&b, "      conflict: %s declared %s, annotations imply %s (%s)\n", cf.Field, cf.Declared, cf.Implied, cf.Basis)
		}
	}
	for _, o := range r.Overrides {
		flag := ""
		if o.Forced {
			flag = " [FORCED below the server's " + o.ServerValue + "]"
		}
		fmt.Fprintf(&b, "operator: %s %s=%s by %s: %q%s\n", o.Capability, o.Field, o.Value, o.By, o.Why, flag)
	}
	for _, st := range r.Settings {
		var what []string
		if st.Constraints != nil {
			what = append(what, "constraints="+string(st.Constraints))
		}
		if st.CallApproval != "" || len(what) == 0 {
			what = append(what, "approval="+string(cmp.Or(st.CallApproval, capability.CallApprovalByRisk)))
		}
		from := ""
		if st.From != "" {
			from = ", carried from " + st.From
		}
		fmt.Fprintf(&b, "operator: %s %s by %s%s\n", st.Capability, strings.Join(what, " "), st.By, from)
	}
	for _, bc := range r.Blocked {
		fmt.Fprintf(&b, "blocked since approval: %s: %s\n", bc.Capability, bc.Reason)
	}
	for _, d := range r.Drift {
		fmt.Fprintf(&b, "drift on %s at %s (by %s):\n", d.ServerID, d.At.Format(time.RFC3339), d.By)
		if !d.Drift.Empty() {
			for _, line := range strings.Split(strings.TrimRight(d.Drift.String(), "\n"), "\n") {
				fmt.Fprintf(&b, "  %s\n", line)
			}
		}
		for _, sk := range d.Skills {
			fmt.Fprintf(&b, "  published skill %s: %s\n", sk.Skill, sk.Reason)
		}
	}
	if r.Previous != nil {
		r.Previous.text(&b)
	}
	for _, n := range r.Next {
		fmt.Fprintf(&b, "next: %s\n", n)
	}
	return b.String()
}

// serversText renders each server: what identified it, how it runs, what
// it is granted and how introspection went.
func (r *Review) serversText(b *strings.Builder) {
	for _, sv := range r.Servers {
		id := "not reached"
		if sv.Server != nil {
			id = termtext.Escape(sv.Server.String()) // the server's own name and version
		}
		fmt.Fprintf(b, "server %s: %s, %s\n", sv.ServerID, id, plural.Of(sv.Tools, "tool", "tools"))
		if d := sv.Declaration; d.Command != "" || d.URL != "" {
			if d.Command != "" {
				fmt.Fprintf(b, "  runs: %s\n", shellWords(append([]string{d.Command}, d.Args...)))
			} else {
				fmt.Fprintf(b, "  url: %s\n", d.URL)
			}
			if names := sortedNames(d.Env); len(names) > 0 {
				fmt.Fprintf(b, "  env: %s\n", strings.Join(names, ", "))
			}
			if names := sortedNames(d.Headers); len(names) > 0 {
				fmt.Fprintf(b, "  headers: %s\n", strings.Join(names, ", "))
			}
			if len(d.Credentials) > 0 {
				fmt.Fprintf(b, "  credentials: %s\n", strings.Join(d.Credentials, ", "))
			}
		}
		if r.Provenance != nil {
			for _, p := range r.Provenance.Packages {
				if p.Server == sv.ServerID {
					packageText(b, p)
				}
			}
		}
		for _, g := range sv.Grants {
			fmt.Fprintf(b, "  grant: %s %s (%s)\n", g.Access, g.Path, g.From)
		}
		if sv.Error != nil {
			// The message may quote the server's stderr: each of its lines
			// rendered on a line of its own, indented under the error.
			lines := strings.Split(strings.TrimRight(sv.Error.Message, "\n"), "\n")
			for i := range lines {
				lines[i] = termtext.Escape(lines[i])
			}
			fmt.Fprintf(b, "  error (%s): %s\n", sv.Error.Phase, strings.Join(lines, "\n    "))
		}
	}
}

// text renders the comparison with the version this one would replace.
func (p *PreviousVersion) text(b *strings.Builder) {
	fmt.Fprintf(b, "compared with %s (%s): added %v, removed %v\n", p.Digest, p.State, p.Added, p.Removed)
	if p.FilesOnly {
		b.WriteString("  only files changed: the capabilities, their risk, servers, credentials and signer are the same; approving still takes a human\n")
	}
	if len(p.ServersAdded)+len(p.ServersRemoved) > 0 {
		fmt.Fprintf(b, "  servers added %v, removed %v\n", p.ServersAdded, p.ServersRemoved)
	}
	if len(p.CredentialsAdded) > 0 {
		fmt.Fprintf(b, "  new credentials: %s\n", strings.Join(p.CredentialsAdded, ", "))
	}
	if len(p.NewEgress) > 0 {
		fmt.Fprintf(b, "  may now reach the network: %s\n", strings.Join(p.NewEgress, ", "))
	}
	if s := p.Signature; s != nil {
		fmt.Fprintf(b, "  signer: %s → %s\n", orUnsigned(s.Before), orUnsigned(s.After))
	}
	for _, c := range p.Packages {
		packageChangeText(b, c)
	}
	for _, ps := range p.PublishedSkills {
		fmt.Fprintf(b, "  published skill %s\n", ps)
	}
	for _, rc := range p.RiskChanges {
		fmt.Fprintf(b, "  %s %s: %s → %s\n", rc.Capability, rc.Field, rc.Before, rc.After)
	}
	for _, sd := range p.Pins {
		fmt.Fprintf(b, "  pins of %s:\n", sd.ServerID)
		for _, line := range strings.Split(strings.TrimRight(sd.Drift.String(), "\n"), "\n") {
			fmt.Fprintf(b, "    %s\n", line)
		}
	}
}

func field(v string, src capability.Source) string {
	if v == "" {
		return "UNKNOWN"
	}
	return v + "(" + string(src) + ")"
}

// shellWords renders a command line for an operator to read: words with
// anything but plain characters are single-quoted.
func shellWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		plain := w != ""
		for _, r := range w {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r)) {
				plain = false
				break
			}
		}
		if plain {
			out[i] = w
		} else {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// sortedNames returns the keys of m, sorted.
func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func orUnsigned(s string) string {
	if s == "" {
		return "unsigned"
	}
	return s
}

// layersText writes the admission layers, layer 4's findings under it.
func (r *Review) layersText(b *strings.Builder) {
	if len(r.Layers) == 0 {
		return
	}
	b.WriteString("admission layers:\n")
	for _, l := range r.Layers {
		first := ""
		if len(l.Evidence) > 0 {
			first = l.Evidence[0]
		}
		fmt.Fprintf(b, "  %d %-20s %-7s %s\n", l.Layer, l.Name, l.Verdict, first)
		if l.Layer == 4 && r.Scan != nil {
			for _, f := range r.Scan.Findings {
				fmt.Fprintf(b, "      %s %s %s at %s: %s\n", f.Severity, f.Rule, f.Name, f.Location(), f.Message)
				fmt.Fprintf(b, "        %s\n", f.Excerpt)
				if f.Normalized != "" {
					fmt.Fprintf(b, "        read as: %s\n", f.Normalized)
				}
				if f.Suppressed != nil {
					fmt.Fprintf(b, "        suppressed by %s: %q\n", f.Suppressed.By, f.Suppressed.Why)
				} else {
					fmt.Fprintf(b, "        fix: %s\n", f.Fix)
				}
			}
			for _, sk := range r.Scan.Skipped {
				fmt.Fprintf(b, "      skipped %s: %s\n", sk.File, sk.Reason)
			}
			lineageText(b, r.Scan.Lineage)
		} else {
			for _, e := range l.Evidence[min(1, len(l.Evidence)):] {
				fmt.Fprintf(b, "      %s\n", e)
			}
		}
		if l.Fix != "" {
			fmt.Fprintf(b, "      to do: %s\n", l.Fix)
		}
	}
}
