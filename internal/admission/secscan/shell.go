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
// the text rules alone (SG501's pipelines included). Shell blocks inside
// Markdown are not read here yet.

// shellRuleIDs maps shellscan's kinds of finding to the rules' ids.
var shellRuleIDs = map[shellscan.Rule]string{
	shellscan.PipedToShell:         "SG504",
	shellscan.SubstitutedIntoShell: "SG505",
	shellscan.DownloadThenRun:      "SG506",
}

// isShellScript reports whether a file is a shell script for the shell
// rules: its name ends in .sh or .bash, or its #! line names sh, bash, zsh
// or dash (directly or through env). This is not yet the scanner's
// classification of files by how they run (issue 31).
func isShellScript(name string, data []byte) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".sh", ".bash":
		return true
	}
	return shebangShell(data)
}

// shebangShell reports whether data's #! line names sh, bash, zsh or dash:
// "#!/bin/sh", "#!/usr/bin/env bash", "#!/usr/bin/env -S bash -e".
func shebangShell(data []byte) bool {
	rest, ok := bytes.CutPrefix(data, []byte("#!"))
	if !ok {
		return false
	}
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	fields := strings.Fields(string(rest))
	if len(fields) == 0 {
		return false
	}
	prog := path.Base(fields[0])
	if prog == "env" {
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
				continue // env's options and NAME=value assignments
			}
			prog = path.Base(f)
			break
		}
	}
	switch prog {
	case "sh", "bash", "zsh", "dash":
		return true
	}
	return false
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

// scanFile runs the text rules over one file and, on a shell script, the
// shell rules; a script the parser read is added to scripts when not nil.
func scanFile(name string, data []byte, maxPerRule int, scripts *shellScripts) []Finding {
	out := scanText(name, data, kindOf(name, data), maxPerRule)
	if len(data) > maxShellBytes || !isShellScript(name, data) {
		return out
	}
	shell, script := scanShell(name, data, maxPerRule)
	if script == nil {
		return out
	}
	if scripts != nil {
		scripts.analyses[name] = script
		scripts.data[name] = data
	}
	return append(dropShellForms(out, data), shell...)
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
// does not parse, it returns no findings and a nil analysis: the caller keeps
// the text rules' findings as they are.
func scanShell(name string, data []byte, maxPerRule int) ([]Finding, *shellscan.Script) {
	script, err := shellscan.Analyze(data, name)
	if errors.Is(err, shellscan.ErrParse) || script == nil {
		return nil, nil
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
	return out, script
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
