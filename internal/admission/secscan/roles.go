package secscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/admission/secscan/shellscan"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"mvdan.cc/sh/v3/syntax"
)

// A file's role is how it runs, not what its name ends in (issue 31): a
// file is executed when its #! line names an interpreter, when the skill's
// mcp.json runs it (as the command, or as an argument of an interpreter),
// or when a script or the skill's prose names it after an interpreter
// ("bash notes.md", "python3 tool.txt"). An executed file is scanned as the
// language of its interpreter (a shell-run install.txt goes through the
// shell rules), and a file the scanner cannot read is a finding whose
// severity follows the role (SG901–SG903).

// role is how one file of a skill runs.
type role struct {
	// interp is the interpreter that runs the file ("sh", "python3",
	// "node"), or "" when it runs by itself or not at all.
	interp string
	// by says how the scanner knows it runs ("mcp.json runs it with sh");
	// "" when nothing runs it.
	by string
}

// executed reports whether something runs the file.
func (r role) executed() bool { return r.by != "" }

// shell reports whether the file's interpreter is a shell.
func (r role) shell() bool { return shellInterp(r.interp) }

// shellInterp reports whether prog (a path or a name) is a POSIX shell.
func shellInterp(prog string) bool {
	switch path.Base(prog) {
	case "sh", "bash", "zsh", "dash", "ksh":
		return true
	}
	return false
}

// interpreters are the programs that take a script file as their first
// operand; a file named after one of them is executed with it.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"python": true, "python2": true, "python3": true, "pypy": true, "pypy3": true,
	"node": true, "nodejs": true, "deno": true, "bun": true, "tsx": true, "ts-node": true,
	"ruby": true, "perl": true, "php": true, "lua": true, "pwsh": true, "powershell": true, "Rscript": true,
}

// interpreterOf is the interpreter a command names, with a version suffix
// removed ("python3.12" is python3), or "".
func interpreterOf(cmd string) string {
	base := path.Base(cmd)
	if interpreters[base] {
		return base
	}
	if i := strings.LastIndexByte(base, '.'); i > 0 && interpreters[base[:i]] && strings.Trim(base[i+1:], "0123456789") == "" {
		return base[:i]
	}
	return ""
}

// shebangInterp is the program a #! line names ("#!/usr/bin/env -S bash -e"
// is bash), or "" when data has no #! line.
func shebangInterp(data []byte) string {
	rest, ok := bytes.CutPrefix(data, []byte("#!"))
	if !ok {
		return ""
	}
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	fields := strings.Fields(string(rest))
	if len(fields) == 0 {
		return ""
	}
	prog := path.Base(fields[0])
	if prog == "env" {
		prog = ""
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
				continue // env's options and NAME=value assignments
			}
			prog = path.Base(f)
			break
		}
	}
	return prog
}

// interpreterWords are the words namedRuns looks for, each the start of one
// or more of interpreters' names ("python" is also python3 and python3.12).
var interpreterWords = []string{"sh", "bash", "zsh", "dash", "ksh", "python", "pypy", "node", "deno", "bun", "tsx", "ts-node", "ruby", "perl", "php", "lua", "pwsh", "powershell", "Rscript"}

// namedRun is an interpreter named in a file, followed by a file operand:
// "bash notes.md", "sudo python3 -u tool.txt", "`sh ./install.txt`".
type namedRun struct {
	at      int // the interpreter's offset in the file
	interp  string
	operand string
}

// namedRuns finds the interpreters data names with a file operand, in the
// order they appear. Each word is looked for with bytes.Index and the rest
// read by hand: a regular expression that tries a match at every position
// of every file doubled the scan time of the corpus.
func namedRuns(data []byte) []namedRun {
	var out []namedRun
	for _, w := range interpreterWords {
		word := []byte(w)
		for off := 0; off < len(data); {
			i := bytes.Index(data[off:], word)
			if i < 0 {
				break
			}
			at := off + i
			off = at + len(word)
			if at > 0 && !strings.ContainsRune(" \t\n\r`'\"(;&|$/", rune(data[at-1])) {
				continue
			}
			end := off
			for end < len(data) && (data[end] >= '0' && data[end] <= '9' || data[end] == '.') {
				end++ // python3, python3.12
			}
			interp := interpreterOf(string(data[at:end]))
			if interp == "" {
				continue
			}
			rest := data[end:]
			operand := ""
			for {
				n := len(rest) - len(bytes.TrimLeft(rest, " \t"))
				if n == 0 {
					break
				}
				rest = rest[n:]
				tok := rest[:len(rest)-len(bytes.TrimLeftFunc(rest, func(r rune) bool {
					return !strings.ContainsRune(" \t\n\r`'\"|;&<>()$", r)
				}))]
				if len(tok) > 1 && tok[0] == '-' {
					rest = rest[len(tok):] // an option: -e, -u
					continue
				}
				operand = string(tok)
				break
			}
			if operand != "" {
				out = append(out, namedRun{at: at, interp: interp, operand: operand})
			}
		}
	}
	slices.SortFunc(out, func(a, b namedRun) int { return a.at - b.at })
	return out
}

// skillFile is a file of a skill as the walk found it, before it is scanned.
type skillFile struct {
	rel  string
	data []byte // nil when not read
}

// mcpConfigNames are the names of a skill's server configuration at its
// root.
var mcpConfigNames = []string{"mcp.json", ".mcp.json"}

// classify finds the role of every file of a skill: the #! lines, the
// servers of its mcp.json (read with mcpclient.ParseConfig; one that does
// not parse gives no roles, admission rejects it elsewhere), and the files
// that its text files name after an interpreter or that a package.json's
// lifecycle scripts run (by an interpreter, or by its path: then the shell
// reads it when it has no #! line). A file named is looked up
// relative to the skill's root and to the naming file's folder.
func classify(files []skillFile) map[string]role {
	have := make(map[string]bool, len(files))
	for _, f := range files {
		have[f.rel] = true
	}
	roles := map[string]role{}
	set := func(rel string, r role) {
		if _, done := roles[rel]; !done && have[rel] {
			roles[rel] = r
		}
	}
	lookup := func(from, name string) string {
		name = strings.TrimPrefix(name, "./")
		for _, p := range []string{"${SKILL_DIR}/", "$SKILL_DIR/", "${CLAUDE_PLUGIN_ROOT}/", "{baseDir}/"} {
			name = strings.TrimPrefix(name, p)
		}
		if name == "" || strings.HasPrefix(name, "/") {
			return ""
		}
		if c := path.Clean(name); have[c] {
			return c
		}
		if c := path.Join(path.Dir(from), name); have[c] {
			return c
		}
		return ""
	}
	// The #! lines first: a file's own interpreter is the surest.
	for _, f := range files {
		if p := shebangInterp(f.data); p != "" && f.data != nil {
			roles[f.rel] = role{interp: p, by: "its #! line runs it with " + p}
		}
	}
	for _, f := range files {
		if f.data == nil || !isMCPConfig(f.rel) {
			continue
		}
		cfg, err := mcpclient.ParseConfig(f.data)
		if err != nil {
			continue
		}
		for _, s := range cfg.Servers {
			if s.Command == "" {
				continue
			}
			if rel := lookup(f.rel, s.Command); rel != "" {
				set(rel, role{by: fmt.Sprintf("%s runs it as server %s", f.rel, s.ID)})
			}
			if interp := interpreterOf(s.Command); interp != "" {
				for _, a := range s.Args {
					if strings.HasPrefix(a, "-") {
						continue
					}
					if rel := lookup(f.rel, a); rel != "" {
						set(rel, role{interp: interp, by: fmt.Sprintf("%s runs it with %s (server %s)", f.rel, interp, s.ID)})
					}
					break
				}
			}
		}
	}
	for _, f := range files {
		if f.data == nil || path.Base(f.rel) != "package.json" {
			continue
		}
		for _, b := range lifecycleScripts(f.data) {
			script, err := shellscan.Analyze(b.text, f.rel)
			if err != nil || script == nil {
				continue
			}
			for _, r := range script.Runs {
				interp := interpreterOf(r.Command)
				if r.Command == r.File {
					interp = "sh" // run by its path without a #! line (that role is set first): the shell reads it
				}
				if rel := lookup(f.rel, r.File); rel != "" {
					set(rel, role{interp: interp, by: fmt.Sprintf("%s line %d runs it on install", f.rel, b.line+1)})
				}
			}
		}
	}
	for _, f := range files {
		if f.data == nil || !utf8.Valid(f.data) {
			continue
		}
		for _, n := range namedRuns(f.data) {
			if rel := lookup(f.rel, n.operand); rel != "" && rel != f.rel {
				line := bytes.Count(f.data[:n.at], []byte("\n")) + 1
				set(rel, role{interp: n.interp, by: fmt.Sprintf("%s line %d runs it with %s", f.rel, line, n.interp)})
			}
		}
	}
	return roles
}

// isMCPConfig reports whether rel is the skill's server configuration.
func isMCPConfig(rel string) bool {
	for _, n := range mcpConfigNames {
		if rel == n {
			return true
		}
	}
	return false
}

// lifecycleNames are the package.json scripts npm (and yarn, pnpm) runs by
// themselves when the package is installed or packed: shell commands that
// run without anyone asking for them.
var lifecycleNames = []string{"preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare", "prepublish"}

// lifecycleScripts are the lifecycle scripts of a package.json, each as a
// block of shell code whose line is the one before its key's line (a
// finding at the block's line 1 is at the key's line), in lifecycleNames'
// order. A package.json that does not parse, or has none, gives none.
func lifecycleScripts(data []byte) []mdBlock {
	if !bytes.Contains(data, []byte(`"scripts"`)) {
		return nil
	}
	var pkg struct {
		Scripts map[string]json.RawMessage `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return nil
	}
	start := bytes.Index(data, []byte(`"scripts"`))
	var out []mdBlock
	for _, n := range lifecycleNames {
		raw, ok := pkg.Scripts[n]
		if !ok {
			continue
		}
		var cmd string
		if json.Unmarshal(raw, &cmd) != nil || strings.TrimSpace(cmd) == "" {
			continue
		}
		line := 0
		key := []byte(`"` + n + `"`)
		for off := start; off < len(data); {
			i := bytes.Index(data[off:], key)
			if i < 0 {
				break
			}
			at := off + i + len(key)
			if rest := bytes.TrimLeft(data[at:], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
				line = bytes.Count(data[:off+i], []byte("\n")) + 1
				break
			}
			off = at
		}
		if line == 0 {
			continue
		}
		out = append(out, mdBlock{line: line - 1, text: []byte(cmd)})
	}
	return out
}

// serverCommands are the command lines the servers of a skill's mcp.json
// run (its command and args, each quoted for the shell: the words are
// passed as they are, without a shell), each as a block of shell code whose
// line is the one before the server's "args" key (its "command" key when it
// has no args), for the shell rules. A configuration that does not parse
// gives none.
func serverCommands(data []byte) []mdBlock {
	cfg, err := mcpclient.ParseConfig(data)
	if err != nil {
		return nil
	}
	var out []mdBlock
	for _, s := range cfg.Servers {
		if s.Command == "" {
			continue
		}
		words := make([]string, 0, 1+len(s.Args))
		for _, w := range append([]string{s.Command}, s.Args...) {
			q, err := syntax.Quote(w, syntax.LangBash)
			if err != nil {
				q = "''"
			}
			words = append(words, q)
		}
		line := 1
		if at := bytes.Index(data, []byte(`"`+s.ID+`"`)); at >= 0 {
			rest := data[at:]
			key := bytes.Index(rest, []byte(`"args"`))
			if c := bytes.Index(rest, []byte(`"command"`)); key < 0 || c >= 0 && len(s.Args) == 0 {
				key = c
			}
			if key >= 0 {
				line = bytes.Count(data[:at+key], []byte("\n")) + 1
			}
		}
		out = append(out, mdBlock{line: line - 1, text: []byte(strings.Join(words, " "))})
	}
	return out
}
