package secscan

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/admission/secscan/shellscan"
)

// The shell rules (SG504–SG506) read a skill's shell scripts with
// shellscan's parser instead of patterns: a download piped into an
// interpreter, substituted into one, or saved to a file that the script, or
// another script of the skill, runs. A script the parser cannot read keeps
// the text rules alone (SG501's pipelines included). The threat rules on the
// same tree, and the shell blocks of Markdown, are in shellrules.go.

// shellRuleIDs maps shellscan's kinds of finding to the rules' ids.
var shellRuleIDs = map[shellscan.Rule]string{
	shellscan.PipedToShell:         "SG504",
	shellscan.SubstitutedIntoShell: "SG505",
	shellscan.DownloadThenRun:      "SG506",
}

// isShellScript reports whether a file is a shell script for the shell
// rules by itself: its name ends in .sh or .bash, or its #! line names sh,
// bash, zsh, dash or ksh (directly or through env). A file a shell runs by
// the skill's mcp.json or instructions is one too (role.shell).
func isShellScript(name string, data []byte) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".sh", ".bash":
		return true
	}
	return shellInterp(shebangInterp(data))
}

// shellScripts are the shell scripts of one scan the parser read, and their
// contents, for the cross-script rule.
type shellScripts struct {
	analyses map[string]*shellscan.Script
	data     map[string][]byte
}

// maxShellBytes is the largest shell script the parser reads: its syntax
// tree takes about 400 times the script's size in memory and 1 s per MiB
// (a 2 MiB script of short pipelines: 420 MB, 2.2 s), and the largest
// script of the public corpus is 8 KiB. A larger script keeps the text
// rules alone, as one that does not parse.
const maxShellBytes = 256 << 10

// scanFile runs the text rules over one file, as the kind its role makes
// it (an executed file is a script whatever its name), and, on a shell
// script or a file a shell runs, the shell rules; a script the parser read
// is added to scripts when not nil. A binary file is not read: its finding
// is SG903 and read is false. A file that is not UTF-8 is SG901, and its
// lines are read with each byte that is not UTF-8 taken as Latin-1. A shell
// script beyond the parser's bound is SG902, one the parser cannot read
// SG904; both keep the text rules.
func scanFile(name string, data []byte, r role, maxPerRule int, scripts *shellScripts) (found []Finding, read bool) {
	k := kindOf(name, data)
	if r.executed() {
		k = kindScript
	}
	if isBinary(data) {
		return []Finding{unscannable("SG903", name, r, k, 1, nil, 0, "a NUL byte in its first 8 KiB: no rule reads it")}, false
	}
	var out []Finding
	text := data
	if !utf8.Valid(data) {
		lineNo, line, at := firstInvalid(data)
		text = latin1Fallback(data)
		out = append(out, unscannable("SG901", name, r, k, lineNo, line, at,
			fmt.Sprintf("byte 0x%02X on line %d is not UTF-8; its lines were read with such bytes taken as Latin-1", line[at], lineNo)))
	}
	out = append(out, scanText(name, text, k, maxPerRule)...)
	out = append(out, scanCode(name, text, r, maxPerRule)...)
	shell := r.shell() || (r.interp == "" && isShellScript(name, data))
	if !shell {
		return withRunCommands(name, text, withMarkdownShell(name, text, out, maxPerRule), maxPerRule), true
	}
	if len(text) > maxShellBytes {
		return append(out, unscannable("SG902", name, r, k, 1, nil, 0,
			fmt.Sprintf("a shell script of %d bytes, beyond the shell parser's bound of %d: read by the text rules only", len(text), maxShellBytes))), true
	}
	shellFound, script, err := scanShell(name, text, maxPerRule)
	if err != nil {
		return append(out, unscannable("SG904", name, r, k, 1, nil, 0, err.Error()+": read by the text rules only")), true
	}
	if script == nil {
		return out, true
	}
	if scripts != nil {
		scripts.analyses[name] = script
		scripts.data[name] = text
	}
	return withShellThreats(name, text, script, append(dropShellForms(out, text), shellFound...), maxPerRule), true
}

// unscannable is a finding of a rule about a whole file (SG901–SG904),
// placed at line lineNo (its text line, nil for none) and byte at, its
// severity by the file's role: high when something runs it, medium for a
// script by its name or folder, low otherwise.
func unscannable(id, name string, r role, k kind, lineNo int, line []byte, at int, reason string) Finding {
	rule := RuleByID(id)
	sev := Low
	switch {
	case r.executed():
		sev = rule.Severity
	case k == kindScript:
		sev = Medium
	}
	msg := fmt.Sprintf("%s: %s", rule.message, reason)
	if r.executed() {
		msg += "; " + r.by
	}
	f := Finding{
		Rule: rule.ID, Name: rule.Name, Severity: sev, File: name, Line: lineNo, Column: 1,
		Message: msg, Why: rule.Why, Fix: rule.Fix,
	}
	if line != nil {
		valid := bytes.ToValidUTF8(line[:at], []byte("?"))
		f.Column = utf8.RuneCount(valid) + 1
		f.Excerpt = excerpt(latin1Fallback(line), len(latin1Fallback(line[:at])), len(latin1Fallback(line[:at+1])))
	}
	return f
}

// tooLarge is the SG902 finding of a file beyond the scanner's size limit,
// which was not read.
func tooLarge(name string, r role, limit int64) Finding {
	return unscannable("SG902", name, r, kindOf(name, nil), 1, nil, 0, fmt.Sprintf("larger than the scanner's limit of %d bytes: not read", limit))
}

// firstInvalid is the line (1-based number and text, without its ending)
// holding data's first byte that is not UTF-8, and that byte's offset in it.
func firstInvalid(data []byte) (lineNo int, line []byte, at int) {
	off := 0
	for off < len(data) {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := len(data)
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		end = off + i
	}
	return bytes.Count(data[:off], []byte("\n")) + 1, bytes.TrimSuffix(data[start:end], []byte("\r")), off - start
}

// latin1Fallback is data with each byte that is not part of a UTF-8
// sequence replaced by the character it is in Latin-1 (0xFF is ÿ), so
// that the rules read every other character of the file as it is.
func latin1Fallback(data []byte) []byte {
	if utf8.Valid(data) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 {
			out = utf8.AppendRune(out, rune(data[0]))
			data = data[1:]
			continue
		}
		out = append(out, data[:size]...)
		data = data[size:]
	}
	return out
}

// cross is the cross-script findings of the scripts read.
func (s *shellScripts) cross(maxPerRule int) []Finding {
	if len(s.analyses) < 2 {
		return nil
	}
	return crossFindings(s.analyses, s.data, maxPerRule)
}

// scanShell reads a shell script with shellscan: the findings of the shell
// rules, and the analysis for the skill's cross-script rule. When the script
// does not parse, it returns the error (wrapping shellscan.ErrParse) and no
// analysis: the caller keeps the text rules' findings and reports SG904.
func scanShell(name string, data []byte, maxPerRule int) ([]Finding, *shellscan.Script, error) {
	script, err := shellscan.Analyze(data, name)
	if errors.Is(err, shellscan.ErrParse) {
		return nil, nil, err
	}
	if script == nil {
		return nil, nil, nil
	}
	var out []Finding
	count := map[string]int{}
	for _, f := range script.Findings {
		id := shellRuleIDs[f.Rule]
		if id == "" || count[id] >= maxPerRule {
			continue
		}
		count[id]++
		out = append(out, shellFinding(RuleByID(id), name, data, f.RunLine, shellMessage(f)))
	}
	return out, script, nil
}

// shellMessage says what a finding of one script is, with the download's
// line.
func shellMessage(f shellscan.Finding) string {
	switch f.Rule {
	case shellscan.PipedToShell:
		return fmt.Sprintf("the output of %s (line %d) is piped into %s, which runs it as a program", f.Downloader, f.DownloadLine, f.Runner)
	case shellscan.SubstitutedIntoShell:
		return fmt.Sprintf("the output of %s (line %d) is given to %s as the program to run", f.Downloader, f.DownloadLine, f.Runner)
	default:
		return fmt.Sprintf("runs %s, where %s saved a download (line %d)", f.File, f.Downloader, f.DownloadLine)
	}
}

// crossFindings are the skill's downloads saved by one shell script and run
// by another (shellscan.Across), placed at the run, at most maxPerRule per
// running script. data gives each script's contents for the excerpt.
func crossFindings(scripts map[string]*shellscan.Script, data map[string][]byte, maxPerRule int) []Finding {
	rule := RuleByID(shellRuleIDs[shellscan.DownloadThenRun])
	var out []Finding
	count := map[string]int{}
	for _, c := range shellscan.Across(scripts) {
		if count[c.RunScript] >= maxPerRule {
			continue
		}
		count[c.RunScript]++
		msg := fmt.Sprintf("runs %s, where %s saved a download in %s (line %d)", c.Run.File, c.Save.Command, c.SaveScript, c.Save.Line)
		out = append(out, shellFinding(rule, c.RunScript, data[c.RunScript], c.Run.Line, msg))
	}
	return out
}

// shellFinding is a finding of a shell rule at line lineNo of data, its
// column that of the line's first character that is not a blank.
func shellFinding(r *Rule, name string, data []byte, lineNo int, msg string) Finding {
	line := lineAt(data, lineNo)
	at := len(line) - len(bytes.TrimLeftFunc(line, unicode.IsSpace))
	return Finding{
		Rule: r.ID, Name: r.Name, Severity: r.Severity, File: name,
		Line: lineNo, Column: utf8.RuneCount(line[:at]) + 1,
		Excerpt: excerpt(line, at, len(line)), Message: msg, Why: r.Why, Fix: r.Fix,
	}
}

// lineAt is line n (1-based) of data without its line ending, or nil.
func lineAt(data []byte, n int) []byte {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return nil
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return bytes.TrimSuffix(data, []byte("\r"))
}

// dropShellForms removes, from the text findings of a shell script the
// parser read, the findings of a rule's shell pipeline patterns (SG501's
// curl … | sh and sh <(curl …)): the shell rules read those forms from the
// syntax tree, where a download inside a string, a comment or a here-document
// is not mistaken for one that runs, and one split over lines is not missed.
// A finding whose line also matches one of the rule's other patterns
// (PowerShell, Python) is kept.
func dropShellForms(findings []Finding, data []byte) []Finding {
	return slices.DeleteFunc(findings, func(f Finding) bool {
		r := RuleByID(f.Rule)
		if r == nil || r.shellForms == 0 {
			return false
		}
		line := lineAt(data, f.Line)
		for _, p := range r.patterns[r.shellForms:] {
			if p.Match(line) {
				return false
			}
		}
		return true
	})
}
