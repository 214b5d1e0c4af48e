package secscan

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/admission/lineage"
	"github.com/skillgate/skillgate/internal/admission/secscan/codescan"
)

// ApplyLineage applies a derivation (what the scanned skill changed from
// the reference it is derived from) to layer 4's findings on it:
//
//   - a finding on a file identical to a trusted reference's is dropped:
//     the reference was reviewed already and is not re-reported;
//   - a finding on an added or changed line of a script is at least high;
//   - a capability (network call, process start, file walk, decode,
//     unbounded loop) on an added or changed line of a script is an SG950
//     finding, found by caps when set, else by the scanner's own readers:
//     codescan's tokenizers for Python and JavaScript, the shell parser
//     for shell.
//
// files are the scanned skill's files; a nil derivation returns findings
// unchanged. The result is sorted as Dir sorts.
func ApplyLineage(findings []Finding, d *lineage.Derivation, files lineage.Files, caps lineage.CapabilityFunc) []Finding {
	if d == nil {
		return findings
	}
	if caps == nil {
		caps = codeCapabilities
	}
	added := map[string][]int{}
	for _, c := range d.Changed {
		if lineage.Language(c.Path, files[c.Path]) != "" {
			added[c.Path] = c.AddedLines
		}
	}
	out := make([]Finding, 0, len(findings))
	for _, f := range findings {
		if d.Trusted && d.IsIdentical(f.File) {
			continue
		}
		if lines, ok := added[f.File]; ok && slices.Contains(lines, f.Line) && f.Severity.Rank() < High.Rank() {
			f.Severity = High
			f.Message += fmt.Sprintf(" (on a line added to %s)", d.From)
		}
		out = append(out, f)
	}
	r := RuleByID("SG950")
	for _, c := range d.Changed {
		lines, ok := added[c.Path]
		if !ok {
			continue
		}
		src := files[c.Path]
		lang := lineage.Language(c.Path, src)
		seen := map[int]bool{}
		for _, cp := range lineage.Capabilities(caps, lang, src) {
			if seen[cp.Line] || !slices.Contains(lines, cp.Line) {
				continue
			}
			seen[cp.Line] = true
			line := lineAt(src, cp.Line)
			at, end := 0, len(line)
			if i := bytes.Index(line, []byte(cp.What)); i >= 0 && cp.What != "" {
				at, end = i, i+len(cp.What)
			}
			out = append(out, Finding{
				Rule: r.ID, Name: r.Name, Severity: r.Severity, File: c.Path,
				Line: cp.Line, Column: utf8.RuneCount(line[:at]) + 1, Excerpt: excerpt(line, at, end),
				Message: fmt.Sprintf("%s makes a %s (%s), not in %s", r.message, cp.Kind, cp.What, d.From),
				Why:     r.Why, Fix: r.Fix,
			})
		}
	}
	sortFindings(out)
	return out
}

// codeKinds maps codescan's capability kinds to lineage's.
var codeKinds = map[codescan.Kind]string{
	codescan.KindNetwork:       lineage.Network,
	codescan.KindProcess:       lineage.Process,
	codescan.KindFileWalk:      lineage.FileWalk,
	codescan.KindDecode:        lineage.Decode,
	codescan.KindUnboundedLoop: lineage.Unbounded,
	codescan.KindWriteOutside:  lineage.WriteOutside,
}

// codeCapabilities is the changed-line rule's reader of Python and
// JavaScript: codescan's, the one the code rules (SG520–SG526) use, so a
// call is read the same way by both. For another language it answers nil,
// and lineage's own readers (the shell parser) are used.
func codeCapabilities(lang string, src []byte) []lineage.Capability {
	var l codescan.Lang
	switch lang {
	case "python":
		l = codescan.Python
	case "javascript":
		l = codescan.JavaScript
	default:
		return nil
	}
	out := []lineage.Capability{}
	for _, c := range codescan.Capabilities(l, src) {
		if k, ok := codeKinds[c.Kind]; ok {
			out = append(out, lineage.Capability{Line: c.Line, Kind: k, What: c.Text})
		}
	}
	return out
}
