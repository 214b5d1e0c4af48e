package secscan

import (
	"fmt"
	"path"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/secscan/codescan"
	"github.com/skillgate/skillgate/internal/admission/secscan/shellscan"
)

// The code rules (SG520–SG526) read a skill's Python and JavaScript with
// codescan's tokenizers and its per-file taint analysis instead of
// patterns: a call is a finding for what flows into it (a decoded constant
// or a download run as a command, the environment or the user's files
// uploaded, a socket wired to a shell), never for being made, so the
// subprocess and requests calls of honest scripts are not findings. A file
// is read as Python or JavaScript by its role: its interpreter (a #! line,
// mcp.json, an interpreter named in the skill) or else its name's ending.

// codeRuleIDs maps codescan's kinds of flow to the rules' ids.
var codeRuleIDs = map[string]string{
	codescan.FlowDecodedExec:  "SG520",
	codescan.FlowDownloadExec: "SG521",
	codescan.FlowSecretSend:   "SG522",
	codescan.FlowReverseShell: "SG523",
	codescan.FlowDestructive:  "SG524",
	codescan.FlowPersistence:  "SG525",
	codescan.FlowUnbounded:    "SG526",
}

// codeLang is the language a file is read as by the code rules, and
// whether it is one: the interpreter of its role, else its #! line, else
// its name's ending.
func codeLang(name string, data []byte, r role) (codescan.Lang, bool) {
	interp := r.interp
	if interp == "" {
		interp = shebangInterp(data)
	}
	if interp != "" {
		switch {
		case strings.HasPrefix(interp, "python"), strings.HasPrefix(interp, "pypy"):
			return codescan.Python, true
		case interp == "node" || interp == "nodejs" || interp == "deno" || interp == "bun" || interp == "tsx" || interp == "ts-node":
			return codescan.JavaScript, true
		}
		if r.interp != "" {
			return 0, false // run by another interpreter, whatever its name
		}
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".py", ".pyw":
		return codescan.Python, true
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts":
		return codescan.JavaScript, true
	}
	return 0, false
}

// isPowerShell reports whether a file is read as PowerShell by the code
// rules: its interpreter (role, else #! line) is pwsh or powershell, or it
// has none and its name ends in .ps1 or .psm1.
func isPowerShell(name string, data []byte, r role) bool {
	interp := r.interp
	if interp == "" {
		interp = shebangInterp(data)
	}
	if interp != "" {
		return interp == "pwsh" || interp == "powershell" || interp == "powershell.exe"
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".ps1", ".psm1":
		return true
	}
	return false
}

// scanCode runs the code rules over a Python or JavaScript file (text is
// its contents as the text rules read them), at most maxPerRule findings
// of each rule; any other file has none.
func scanCode(name string, text []byte, r role, maxPerRule int) []Finding {
	var flows []codescan.Flow
	if isPowerShell(name, text, r) {
		flows = codescan.AnalyzePowerShell(text)
	} else {
		lang, ok := codeLang(name, text, r)
		if !ok {
			return nil
		}
		flows = codescan.Analyze(lang, text)
	}
	var out []Finding
	count := map[string]int{}
	for _, f := range flows {
		id := codeRuleIDs[f.Kind]
		if id == "" || count[id] >= maxPerRule {
			continue
		}
		count[id]++
		out = append(out, shellFinding(RuleByID(id), name, text, f.Line, codeMessage(f)))
	}
	return out
}

// inlineFindings are the code rules' findings on the programs a shell
// script (or a shell block of Markdown, offset lines into data) gives other
// interpreters inline: python3 -c '…', node -e '…', perl -e '…',
// ruby -e '…', a here-document (shellscan.Inline). Each is placed at its
// line of the script, at the rule's severity or the one sev gives; at most
// maxPerRule of each rule.
func inlineFindings(name string, data []byte, inline []shellscan.Inline, offset int, sev func(id string) Severity, maxPerRule int) []Finding {
	var out []Finding
	count := map[string]int{}
	type at struct {
		id   string
		line int
	}
	seen := map[at]bool{}
	for _, in := range inline {
		for _, f := range codescan.AnalyzeInline(in.Interp, []byte(in.Code)) {
			id := codeRuleIDs[f.Kind]
			line := in.Line + f.Line - 1
			if f.SourceLine != 0 {
				f.SourceLine += in.Line - 1
			}
			if in.Fixed {
				line, f.SourceLine = in.Line, 0
			}
			if id == "" || count[id] >= maxPerRule || seen[at{id, line}] {
				continue
			}
			count[id]++
			seen[at{id, line}] = true
			fd := shellFinding(RuleByID(id), name, data, line+offset, "code given to "+in.Interp+" inline: "+codeMessage(f))
			if sev != nil {
				fd.Severity = sev(id)
			}
			out = append(out, fd)
		}
	}
	return out
}

// codeMessage says what a flow is, then its source and the source's line in
// brackets when known: "subprocess.run runs a download (script, line 3)".
func codeMessage(f codescan.Flow) string {
	from := ""
	switch {
	case f.Source != "" && f.SourceLine != 0:
		from = fmt.Sprintf(" (%s, line %d)", f.Source, f.SourceLine)
	case f.Source != "":
		from = fmt.Sprintf(" (%s)", f.Source)
	}
	switch f.Kind {
	case codescan.FlowDecodedExec:
		return fmt.Sprintf("%s runs a constant decoded at run time%s", f.Sink, from)
	case codescan.FlowDownloadExec:
		return fmt.Sprintf("%s runs a download%s", f.Sink, from)
	case codescan.FlowSecretSend:
		return fmt.Sprintf("%s sends the environment, a credential file or the user's files over the network%s", f.Sink, from)
	case codescan.FlowReverseShell:
		return fmt.Sprintf("%s wires a network socket to a shell%s", f.Sink, from)
	case codescan.FlowDestructive:
		return fmt.Sprintf("%s deletes the home or the root directory", f.Sink)
	case codescan.FlowPersistence:
		return fmt.Sprintf("%s writes a file that runs code later (a shell start-up file, authorized_keys, cron, systemd, a launch agent, a git hook)", f.Sink)
	default:
		if f.SourceLine != 0 {
			return fmt.Sprintf("%s grows memory or forks without end in the loop of line %d", f.Sink, f.SourceLine)
		}
		return fmt.Sprintf("allocates %s bytes or more at once", f.Source)
	}
}
