package secscan

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/secscan/shellscan"
)

// The shell threat rules (SG510–SG511, SG702–SG704, SG802–SG805) are
// shellscan's Threats: commands that are threats by themselves (a reverse
// shell, decoded data run as a program, the deletion of a home or system
// folder, a disk wiped, files encrypted, code installed to run again).
// They read a shell script the parser read, and the shell code blocks of
// the skill's Markdown files (```bash, ```sh, ```shell, ```zsh,
// ```console with its $ prompts), where their severity follows the file:
// SKILL.md is instructions the agent is told to run, other Markdown is
// documentation a reader may follow (markdownSeverity). On a line where a
// threat rule reports, the text rules it replaces (SG501, SG502, SG701,
// SG801) do not.

// threatRuleIDs maps shellscan's threats to the rules' ids.
var threatRuleIDs = map[shellscan.Rule]string{
	shellscan.ReverseShell:   "SG510",
	shellscan.DecodedToShell: "SG511",
	shellscan.DestroyFiles:   "SG702",
	shellscan.WipeDisk:       "SG703",
	shellscan.EncryptFiles:   "SG704",
	shellscan.StartupFile:    "SG802",
	shellscan.ScheduledTask:  "SG803",
	shellscan.GitHook:        "SG804",
	shellscan.AuthorizedKeys: "SG805",
}

// replacedTextRules are the text rules a parsed shell finding on the same
// line replaces.
var replacedTextRules = map[string]bool{"SG501": true, "SG502": true, "SG701": true, "SG801": true}

// withShellThreats adds the threats of a shell script the parser read to
// found (the script's other findings), and drops the text findings a
// threat replaces on its line. script may be nil (nothing to add).
func withShellThreats(name string, data []byte, script *shellscan.Script, found []Finding, maxPerRule int) []Finding {
	if script == nil {
		return found
	}
	parsed := threatFindings(name, data, script.Threats, 0, nil, maxPerRule)
	return mergeParsed(found, append(parsed, inlineFindings(name, data, script.Inline, 0, nil, maxPerRule)...))
}

// threatFindings are the findings of threats, each at its line plus offset
// in data, at the rule's severity or at the one sev gives.
func threatFindings(name string, data []byte, threats []shellscan.Threat, offset int, sev func(id string) Severity, maxPerRule int) []Finding {
	var out []Finding
	count := map[string]int{}
	for _, th := range threats {
		id := threatRuleIDs[th.Rule]
		if id == "" || count[id] >= maxPerRule {
			continue
		}
		count[id]++
		msg := th.Detail
		if th.From != 0 {
			msg += fmt.Sprintf(" (line %d)", th.From+offset)
		}
		f := shellFinding(RuleByID(id), name, data, th.Line+offset, msg)
		if sev != nil {
			f.Severity = sev(id)
		}
		out = append(out, f)
	}
	return out
}

// mergeParsed is found without the text findings that a parsed finding on
// the same line replaces, followed by the parsed findings.
func mergeParsed(found, parsed []Finding) []Finding {
	if len(parsed) == 0 {
		return found
	}
	lines := map[int]bool{}
	for _, f := range parsed {
		lines[f.Line] = true
	}
	found = slices.DeleteFunc(found, func(f Finding) bool { return replacedTextRules[f.Rule] && lines[f.Line] })
	return append(found, parsed...)
}

// markdownSeverity is a parsed shell rule's severity in a shell block of
// Markdown. In SKILL.md, the instructions an agent is told to run, a
// reverse shell or a decoded payload keeps its critical severity and a
// destructive command is high; in other Markdown, documentation a reader
// may follow, they are a step lower (high, medium). Persistence and a
// download run are medium in both, as the text rules SG801 and SG501 have
// them in prose: the corpus's references show
// `echo 'export …' >> ~/.bashrc`, and its SKILL.md files install CLIs with
// curl … | bash. The code rules on a program given inline (python3 -c
// '…') follow the same steps: a decoded constant run (SG520) or a socket
// wired to a shell (SG523) as SG510/SG511, a deletion (SG524) as SG7xx,
// the others medium. A file something runs as a script is read as one, not
// here.
func markdownSeverity(name, id string) Severity {
	skill := path.Base(name) == "SKILL.md"
	switch {
	case id == "SG510" || id == "SG511" || id == "SG520" || id == "SG523":
		if skill {
			return Critical
		}
		return High
	case strings.HasPrefix(id, "SG7") || id == "SG524":
		if skill {
			return High
		}
		return Medium
	}
	return Medium
}

// withMarkdownShell adds to found (a Markdown file's text findings) the
// findings of the shell rules on its shell code blocks, and drops the text
// findings they replace. Other files are returned as they are.
func withMarkdownShell(name string, data []byte, found []Finding, maxPerRule int) []Finding {
	if !strings.EqualFold(path.Ext(name), ".md") {
		return found
	}
	sev := func(id string) Severity { return markdownSeverity(name, id) }
	return mergeParsed(found, capPerRule(blockFindings(name, data, shellBlocks(data), sev, false, maxPerRule), maxPerRule))
}

// withRunCommands adds to found (the text findings of a package.json or
// of the skill's mcp.json) the findings of the shell rules on the commands
// they run: a package.json's lifecycle scripts (lifecycleScripts), which
// npm runs on install, and the command lines of mcp.json's servers
// (serverCommands), at their rules' own severities, each placed at its
// script's or server's line. Other files are returned as they are.
func withRunCommands(name string, data []byte, found []Finding, maxPerRule int) []Finding {
	var blocks []mdBlock
	switch {
	case path.Base(name) == "package.json":
		blocks = lifecycleScripts(data)
	case isMCPConfig(name):
		blocks = serverCommands(data)
	}
	if len(blocks) == 0 {
		return found
	}
	return mergeParsed(found, capPerRule(blockFindings(name, data, blocks, nil, true, maxPerRule), maxPerRule))
}

// blockFindings are the findings of the shell rules (SG504–SG506, the
// threat rules, and the code rules on inline programs) on blocks of shell
// code inside data, each at its line plus its block's, at the severity sev
// gives (nil: the rule's). With oneLine, each block is one line of data
// (a JSON string) and every finding of it is placed there. A block that
// does not parse is skipped.
func blockFindings(name string, data []byte, blocks []mdBlock, sev func(id string) Severity, oneLine bool, maxPerRule int) []Finding {
	var parsed []Finding
	for _, b := range blocks {
		if b.powershell {
			parsed = append(parsed, inlineFindings(name, data, []shellscan.Inline{{Interp: "pwsh", Code: string(b.text), Line: 1}}, b.line, sev, maxPerRule)...)
			continue
		}
		script, err := shellscan.Analyze(b.text, name)
		if errors.Is(err, shellscan.ErrParse) || script == nil {
			continue // documentation, not a script: the text rules read it
		}
		var fs []Finding
		fs = append(fs, threatFindings(name, data, script.Threats, b.line, sev, maxPerRule)...)
		fs = append(fs, inlineFindings(name, data, script.Inline, b.line, sev, maxPerRule)...)
		for _, f := range script.Findings {
			id := shellRuleIDs[f.Rule]
			if id == "" {
				continue
			}
			f.RunLine += b.line
			f.DownloadLine += b.line
			sf := shellFinding(RuleByID(id), name, data, f.RunLine, shellMessage(f))
			if sev != nil {
				sf.Severity = sev(id)
			}
			fs = append(fs, sf)
		}
		for i := range fs {
			if oneLine && fs[i].Line != b.line+1 {
				moved := shellFinding(RuleByID(fs[i].Rule), name, data, b.line+1, fs[i].Message)
				moved.Severity = fs[i].Severity
				fs[i] = moved
			}
		}
		parsed = append(parsed, fs...)
	}
	return parsed
}

// capPerRule keeps at most max findings of each rule.
func capPerRule(fs []Finding, limit int) []Finding {
	count := map[string]int{}
	return slices.DeleteFunc(fs, func(f Finding) bool {
		count[f.Rule]++
		return count[f.Rule] > limit
	})
}

// mdBlock is one shell code block of a Markdown file: its text, with as
// many lines as the block (a console block's output lines blank, its
// prompts removed), and the line of its opening fence.
type mdBlock struct {
	line int
	text []byte
	// powershell marks a PowerShell block (```powershell, ```ps1,
	// ```pwsh), read by the code rules instead of the shell rules.
	powershell bool
}

// maxMarkdownBlocks bounds the shell blocks read in one Markdown file.
const maxMarkdownBlocks = 200

// shellLangs are the info strings of a fenced block that is shell code;
// consoleLangs those whose commands follow a $ prompt.
var (
	shellLangs   = map[string]bool{"bash": true, "sh": true, "shell": true, "zsh": true, "console": true, "shell-session": true, "shellsession": true}
	psLangs      = map[string]bool{"powershell": true, "ps1": true, "pwsh": true, "posh": true}
	consoleLangs = map[string]bool{"console": true, "shell-session": true, "shellsession": true}
)

// shellBlocks are the fenced shell and PowerShell code blocks of a Markdown
// file (``` or ~~~, at most three spaces in), in order, at most
// maxMarkdownBlocks.
func shellBlocks(data []byte) []mdBlock {
	var out []mdBlock
	var cur *bytes.Buffer
	var fence string
	console, ps, start := false, false, 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		indented := len(line)-len(trimmed) > 3
		if cur == nil {
			if indented {
				continue
			}
			f := openingFence(trimmed)
			if f == "" {
				continue
			}
			lang := strings.ToLower(strings.Fields(strings.TrimLeft(trimmed, "`~") + " x")[0])
			if !shellLangs[lang] && !psLangs[lang] {
				// skip a block of another language: read to its closing fence
				for n++; sc.Scan(); n++ {
					t := strings.TrimSpace(sc.Text())
					if strings.HasPrefix(t, f) && strings.Trim(t, f[:1]) == "" {
						break
					}
				}
				continue
			}
			cur, fence, console, start, ps = &bytes.Buffer{}, f, consoleLangs[lang], n, psLangs[lang]
			continue
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" && !indented {
			text := cur.Bytes()
			if !ps {
				text = promptsRemoved(text, console)
			}
			out = append(out, mdBlock{line: start, text: text, powershell: ps})
			cur = nil
			if len(out) >= maxMarkdownBlocks {
				break
			}
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	return out
}

// openingFence is the fence a line opens (``` or ~~~, or longer), or "".
func openingFence(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// promptsRemoved is a block's text with, when it is a console session (its
// language says so, or its first line that is not blank starts with "$ "),
// only the commands: the "$ " prompt removed, continuation lines kept, the
// output lines blank, so that line numbers stay those of the block.
func promptsRemoved(text []byte, console bool) []byte {
	lines := strings.Split(string(text), "\n")
	if !console {
		for _, l := range lines {
			if t := strings.TrimLeft(l, " "); t != "" {
				console = strings.HasPrefix(t, "$ ")
				break
			}
		}
	}
	if !console {
		return text
	}
	var b strings.Builder
	cont := false
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		switch {
		case strings.HasPrefix(t, "$ "):
			l = t[2:]
			cont = strings.HasSuffix(l, "\\")
		case cont:
			cont = strings.HasSuffix(l, "\\")
		default:
			l = ""
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return []byte(b.String())
}
