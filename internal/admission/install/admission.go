package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/admission/secscan"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// publishedText is one file of a skill that a server publishes through the
// MCP Skills extension, as introspection read it, named for the scanner
// "published/SERVER/PATH" (PATH: the file's skill:// URI without scheme).
type publishedText struct {
	name string
	data []byte
}

// publishedTexts are the files ps's skills hold, for the content scan.
func publishedTexts(serverID string, ps *mcpclient.PublishedSkills) []publishedText {
	var out []publishedText
	for _, e := range ps.Entries {
		for _, f := range e.Files {
			if f.Content != nil {
				out = append(out, publishedText{"published/" + serverID + "/" + strings.TrimPrefix(f.URI, "skill://"), f.Content})
			}
		}
	}
	return out
}

// scanContent is admission layer 4: the content scanner over the skill's
// managed tree, its servers' tool descriptions, and the files of the
// skills they publish through the MCP Skills extension. Earlier
// suppressions (kept across re-analyses) are applied by finish.
func scanContent(ctx context.Context, key, tree string, caps []mcpclient.Capability, published []publishedText) (*manifest.ScanReport, error) {
	rep, err := secscan.Dir(ctx, tree, secscan.Limits{})
	if err != nil {
		if errors.Is(err, secscan.ErrTooLarge) {
			return nil, fmt.Errorf("%w: %s: content scan: %w", ErrInvalidSkill, key, err)
		}
		return nil, fmt.Errorf("%w: %s: content scan: %w", ErrStorage, key, err)
	}
	tools := make([]secscan.Tool, 0, len(caps))
	for _, c := range caps {
		tools = append(tools, secscan.Tool{Server: c.ExtensionID, Name: c.CapabilityID, Description: c.Description})
	}
	out := &manifest.ScanReport{Files: rep.Files, Findings: []manifest.ScanFinding{}, Skipped: rep.Skipped}
	found := append(rep.Findings, secscan.Tools(tools)...)
	for _, p := range published {
		found = append(found, secscan.File(p.name, p.data)...)
	}
	for _, f := range found {
		out.Findings = append(out.Findings, manifest.ScanFinding{Finding: f})
	}
	return out, nil
}

// blockingFindings are the findings of rep that block it: high or critical
// and not suppressed.
func blockingFindings(rep *manifest.Report) []manifest.ScanFinding {
	if rep.Scan == nil {
		return nil
	}
	var out []manifest.ScanFinding
	for _, f := range rep.Scan.Findings {
		if f.Severity.Blocks() && f.Suppressed == nil {
			out = append(out, f)
		}
	}
	return out
}

// applySuppressions marks each finding the operator suppressed.
func applySuppressions(rep *manifest.Report) {
	if rep.Scan == nil {
		return
	}
	for i := range rep.Scan.Findings {
		f := &rep.Scan.Findings[i]
		f.Suppressed = nil
		for j := len(rep.Suppressions) - 1; j >= 0; j-- {
			if s := rep.Suppressions[j]; s.Covers(f.Finding) {
				f.Suppressed = &s
				break
			}
		}
	}
}

// contentReason is the verdict's reason for blocking findings, naming the
// layer and the fix; "" when none block.
func contentReason(key string, fs []manifest.ScanFinding) string {
	if len(fs) == 0 {
		return ""
	}
	var at []string
	for i, f := range fs {
		if i == 3 {
			at = append(at, fmt.Sprintf("and %d more", len(fs)-3))
			break
		}
		at = append(at, fmt.Sprintf("%s %s %s at %s", f.Severity, f.Rule, f.Name, f.Location()))
	}
	return fmt.Sprintf("layer 4 (content scan): %d high or critical %s (%s); remove them from the skill and install it again, or, if they are not a threat here, run skillgate suppress %s RULE[@FILE[:LINE]] --why \"…\"",
		len(fs), plural.Noun(len(fs), "finding", "findings"), strings.Join(at, "; "), key)
}

// layers computes the seven admission layers' verdicts for rep, whose
// validation is already decided (finish); approved says a human approved
// it. Layers 1 and 2 passed when a report exists at all: a source or
// digest that fails them never reaches analysis.
func layers(rep *manifest.Report, approved bool) []manifest.Layer {
	ls := make([]manifest.Layer, 0, len(manifest.LayerNames))
	add := func(verdict string, evidence []string, fix string) {
		if evidence == nil {
			evidence = []string{}
		}
		ls = append(ls, manifest.Layer{Layer: len(ls) + 1, Name: manifest.LayerNames[len(ls)], Verdict: verdict, Evidence: evidence, Fix: fix})
	}
	add(manifest.LayerPass, []string{"the source was read within the install limits: regular files and directories only, no link out of the tree, no special file, bounded size and count"}, "")
	add(manifest.LayerPass, []string{"content digest " + rep.Version}, "")

	format := []string{"SKILL.md parsed"}
	verdict := manifest.LayerPass
	for _, w := range rep.Skill.Warnings {
		format = append(format, "warning: "+w)
		verdict = manifest.LayerWarn
	}
	format = append(format, fmt.Sprintf("%d MCP %s declared", len(rep.Servers), plural.Noun(len(rep.Servers), "server", "servers")))
	formatFix := ""
	if b := rep.Backends; b != nil {
		switch {
		case b.Error != "":
			format = append(format, executor.BackendsFileName+": "+b.Error)
			verdict, formatFix = manifest.LayerBlock, "fix "+executor.BackendsFileName+" and install the skill again"
		case len(b.Unchecked) > 0:
			format = append(format, fmt.Sprintf("%s: provider %s, %d %s mapped onto executors; the mappings onto %s not compiled: %s could not be introspected",
				executor.BackendsFileName, b.Provider, len(b.Maps), plural.Noun(len(b.Maps), "tool", "tools"),
				strings.Join(b.Unchecked, ", "), plural.Noun(len(b.Unchecked), "the server", "the servers")))
		default:
			format = append(format, fmt.Sprintf("%s: provider %s, %d %s mapped onto executors, every mapping compiled against the introspected tools",
				executor.BackendsFileName, b.Provider, len(b.Maps), plural.Noun(len(b.Maps), "tool", "tools")))
		}
	}
	add(verdict, format, formatFix)

	switch {
	case rep.Scan == nil:
		add(manifest.LayerPending, []string{"not scanned (analysed before the content scanner existed); run skillgate recheck"}, "")
	default:
		var ev []string
		verdict, fix := manifest.LayerPass, ""
		counts := map[secscan.Severity]int{}
		for _, f := range rep.Scan.Findings {
			counts[f.Severity]++
			line := fmt.Sprintf("%s %s %s at %s: %s", f.Severity, f.Rule, f.Name, f.Location(), f.Message)
			if f.Suppressed != nil {
				line += fmt.Sprintf(" (suppressed by %s: %s)", f.Suppressed.By, f.Suppressed.Why)
			}
			ev = append(ev, line)
			if verdict == manifest.LayerPass {
				verdict = manifest.LayerWarn
			}
		}
		ev = append([]string{fmt.Sprintf("%d files read, %d skipped; findings: critical %d, high %d, medium %d, low %d",
			rep.Scan.Files, len(rep.Scan.Skipped), counts[secscan.Critical], counts[secscan.High], counts[secscan.Medium], counts[secscan.Low])}, ev...)
		if b := blockingFindings(rep); len(b) > 0 {
			verdict = manifest.LayerBlock
			fix = "remove the findings from the skill and install it again, or suppress them with a reason: skillgate suppress " + rep.SkillID + " RULE[@FILE[:LINE]] --why \"…\""
		}
		add(verdict, ev, fix)
	}

	var capEv []string
	capVerdict, capFix := manifest.LayerPass, ""
	for _, sr := range rep.Servers {
		if sr.Error != nil {
			capEv = append(capEv, fmt.Sprintf("server %s failed (%s): %s", sr.ServerID, sr.Error.Phase, sr.Error.Message))
			capVerdict = manifest.LayerBlock
		}
	}
	ready, blocked := 0, 0
	for _, c := range rep.Capabilities {
		if c.Status == manifest.StatusReady {
			ready++
		} else {
			blocked++
		}
	}
	capEv = append(capEv, fmt.Sprintf("%d %s introspected and pinned: %d ready, %d blocked", len(rep.Capabilities), plural.Noun(len(rep.Capabilities), "tool", "tools"), ready, blocked))
	for _, r := range rep.Validation.Reasons {
		if strings.HasPrefix(r, "layer 3 ") || strings.HasPrefix(r, "layer 4 ") || strings.HasPrefix(r, "server ") {
			continue
		}
		capEv = append(capEv, r)
		capVerdict = manifest.LayerBlock
	}
	if capVerdict == manifest.LayerBlock {
		capFix = "complete missing risk metadata with skillgate complete, fix the server, or approve only the ready capabilities with --only"
	}
	add(capVerdict, capEv, capFix)

	if approved {
		add(manifest.LayerPass, []string{fmt.Sprintf("approved by an operator; %d approved %s pinned", pinned(rep), plural.Noun(pinned(rep), "tool", "tools"))}, "")
	} else {
		add(manifest.LayerPending, []string{"awaiting a human's approval (skillgate approve)"}, "")
	}
	add(manifest.LayerPass, []string{
		"every call is decided by the policy engine against the principal's scope and audited",
		"an imported skill's servers run in the sandbox (docs/sandbox.md, docs/security.md)",
	}, "")
	return ls
}

// parseTarget reads a suppress target: RULE[@FILE[:LINE]].
func parseTarget(key, target string) (manifest.Suppression, error) {
	var s manifest.Suppression
	rule, rest, hasFile := strings.Cut(target, "@")
	r := secscan.RuleByID(rule)
	if r == nil {
		ids := make([]string, 0, len(secscan.Rules))
		for _, x := range secscan.Rules {
			ids = append(ids, x.ID)
		}
		return s, fmt.Errorf("%w: %s: no rule %q; the rules are %s (see skillgate review %s)", ErrUsage, key, rule, strings.Join(ids, ", "), key)
	}
	s.Rule = r.ID
	if hasFile {
		file, line, hasLine := strings.Cut(rest, ":")
		if file == "" {
			return s, fmt.Errorf("%w: %s: write the target as RULE@FILE or RULE@FILE:LINE", ErrUsage, target)
		}
		s.File = file
		if hasLine {
			n, err := strconv.Atoi(line)
			if err != nil || n < 1 {
				return s, fmt.Errorf("%w: %s: the line must be a positive number", ErrUsage, target)
			}
			s.Line = n
		}
	}
	return s, nil
}

// Suppress records an operator's decision that scanner findings of an
// install matching target (RULE[@FILE[:LINE]]) are not a threat, with the
// reason: they stop blocking the install, stay in the report marked with
// who suppressed them and why, and the decision is audited. A target that
// matches no finding is refused.
func (s *Service) Suppress(ctx context.Context, name, target, why, actor string) (*Review, error) {
	if err := checkWhy("--why", why); err != nil {
		return nil, err
	}
	in, unlock, err := s.lockVersion(ctx, name, actionFrom[ActionSuppress]...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rep, post, err := decidedReport(in, ActionSuppress)
	if err != nil {
		return nil, err
	}
	sup, err := parseTarget(in.Key, target)
	if err != nil {
		return nil, err
	}
	if rep.Scan == nil || !slices.ContainsFunc(rep.Scan.Findings, func(f manifest.ScanFinding) bool { return sup.Covers(f.Finding) }) {
		return nil, fmt.Errorf("%w: %s: %s matches no finding of the content scan (see skillgate review %s)", ErrUsage, in.Key, target, in.Key)
	}
	sup.Why, sup.By, sup.At = strings.TrimSpace(why), actor, s.now().UTC()
	rep.Suppressions = append(rep.Suppressions, sup)
	finish(rep)
	data := map[string]any{"suppression": map[string]any{"target": sup.Target(), "why": sup.Why}}
	if post {
		return s.commitPending(ctx, in, rep, actor, "suppress", "operator suppressed "+sup.Target()+": "+sup.Why, data)
	}
	proposed, err := proposedManifest(in, rep)
	if err != nil {
		return nil, err
	}
	return s.commitVerdictAs(ctx, in, rep, proposed, actor, "suppress", "install.suppress", data)
}

// suppressionsOf are the suppressions of a stored report, to keep across a
// re-analysis.
func suppressionsOf(raw json.RawMessage) []manifest.Suppression {
	if len(raw) == 0 {
		return nil
	}
	old, err := manifest.ParseReport(raw)
	if err != nil {
		return nil
	}
	return old.Suppressions
}

// pinned counts the approved tools' pins of rep.
func pinned(rep *manifest.Report) int {
	n := 0
	for _, ps := range rep.Pins {
		n += len(ps.Tools)
	}
	return n
}
