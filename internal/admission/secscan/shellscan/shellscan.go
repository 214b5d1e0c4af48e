// Package shellscan reads shell scripts with a real parser (mvdan.cc/sh's
// syntax tree) and finds a download run as code: a download piped into an
// interpreter (curl … | sh), a download substituted into one
// (sh -c "$(curl …)", bash <(curl …), eval "$(wget -O- …)"), and a download
// written to a file that a later command of the script runs
// (curl -o f … && sh f). Each finding names the line of the download and the
// line of the command that runs it. Across joins the scripts of one skill,
// for a download saved by one script and run by another. On the same tree,
// threats.go finds the commands that are threats by themselves: reverse
// shells, decoded data run as a program, destructive commands and
// persistence (Script.Threats), reading paths through quotes, ~, $HOME and
// the script's constant variables, in time linear in the script's size.
//
// The content scanner's shell rules SG504–SG506 (secscan's shell.go) are
// built on it (issue 31): the parser sees commands, pipelines, substitutions and redirections, so a
// download inside a string, a comment or a here-document that is never run is
// not reported, and the forms a line-based pattern misses (a pipeline split
// over lines, a wrapper such as sudo or env, clustered flags such as -qO-) are.
package shellscan

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Rule names what kind of download-and-run a finding is.
type Rule string

// The rules.
const (
	// PipedToShell is a download piped into an interpreter that reads its
	// program from standard input: curl … | sh, wget -qO- … | sudo bash -s.
	PipedToShell Rule = "download-piped-to-shell"
	// SubstitutedIntoShell is a download's output given to an interpreter as
	// its program: sh -c "$(curl …)", bash <(curl …), eval "$(curl …)",
	// python3 -c "$(curl …)", source <(curl …).
	SubstitutedIntoShell Rule = "download-substituted-into-shell"
	// DownloadThenRun is a download written to a file, and a later command
	// of the same script that runs that file: curl -o f …; sh f.
	DownloadThenRun Rule = "download-then-run"
)

// Finding is one download run as code.
type Finding struct {
	Rule Rule
	// DownloadLine is the line of the download command, RunLine the line
	// of the command that runs what it fetched (the same line for a pipe on
	// one line).
	DownloadLine, RunLine int
	// Downloader and Runner are the two commands' names ("curl", "bash").
	Downloader, Runner string
	// File is the downloaded file a DownloadThenRun runs, as written in
	// the script.
	File string
}

// String is the finding in one line, the form the tests compare.
func (f Finding) String() string {
	s := fmt.Sprintf("%s: %s at line %d run by %s at line %d", f.Rule, f.Downloader, f.DownloadLine, f.Runner, f.RunLine)
	if f.File != "" {
		s += " (file " + f.File + ")"
	}
	return s
}

// ErrParse is returned, wrapped with the parser's message and position, when
// the script is not valid shell: the caller then falls back to its text rules.
var ErrParse = errors.New("shell script does not parse")

// Script is what Analyze finds in one script: its download-and-run
// findings, and the files its downloads are saved to and the files it runs as
// programs, which Across joins between the scripts of one skill.
type Script struct {
	Findings []Finding
	// Threats are the commands that are threats by themselves (reverse
	// shells, decoded payloads run, destructive commands, persistence), in
	// line order.
	Threats []Threat
	// Inline is the code the script gives interpreters other than a shell
	// (python3 -c '…', node -e '…', a here-document), in the walk's order.
	Inline []Inline
	Saves  []FileUse
	Runs   []FileUse
}

// FileUse is a file a command of a script saves a download to, or runs.
type FileUse struct {
	// File is the file as written in the script ("/tmp/i.sh", "$TMPDIR/p.py").
	File string
	// Command is the downloader ("curl") or what runs the file ("bash",
	// "source", or the path itself when the file is run as a command).
	Command string
	Line    int
}

// Analyze parses src as a bash script (a POSIX sh script is read the same
// way) and returns its download-and-run findings, in the order of the
// running command's line, and the files it saves and runs. name is used in
// error messages only.
func Analyze(src []byte, name string) (*Script, error) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(src), name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParse, err)
	}
	a := analysis{inPipe: map[*syntax.BinaryCmd]bool{}, firstSave: map[string]saved{}}
	syntax.Walk(file, a.visit)
	tw := threats(file, 0, 0)
	a.found = append(a.found, tw.downloads...)
	slices.SortStableFunc(a.found, func(x, y Finding) int {
		return cmp.Or(cmp.Compare(x.RunLine, y.RunLine), cmp.Compare(x.DownloadLine, y.DownloadLine))
	})
	out := &Script{Findings: a.found, Runs: a.runs, Threats: tw.found, Inline: tw.inline}
	slices.SortStableFunc(out.Threats, func(x, y Threat) int { return cmp.Compare(x.Line, y.Line) })
	for _, sv := range a.saved {
		out.Saves = append(out.Saves, FileUse{File: sv.file, Command: sv.downloader, Line: sv.line})
	}
	return out, nil
}

// saved is a file a download wrote: its word as written, the downloader, and
// the download's line and offset (a later command is one at a larger offset,
// on the same line after && or ; too).
type saved struct {
	file, downloader string
	line             int
	offset           uint
}

// analysis is the state of one walk over a script's syntax tree.
type analysis struct {
	found  []Finding
	saved  []saved
	runs   []FileUse
	inPipe map[*syntax.BinaryCmd]bool // pipes already read as part of a longer pipeline
	// firstSave is, by fileKey, the earliest download saved to each file:
	// a run looks its file up there, so a script of many saves and runs is
	// read in linear time (the script is a third party's).
	firstSave map[string]saved
}

func (a *analysis) visit(node syntax.Node) bool {
	switch n := node.(type) {
	case *syntax.BinaryCmd:
		if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && !a.inPipe[n] {
			a.pipeline(n)
		}
	case *syntax.Stmt:
		call, ok := n.Cmd.(*syntax.CallExpr)
		if !ok {
			return true
		}
		cmd, word, args := command(call)
		if word == nil {
			return true
		}
		line := int(call.Pos().Line())
		if d, ok := downloaders[cmd]; ok {
			if f := d.output(args, n.Redirs); f != "" {
				sv := saved{file: f, downloader: cmd, line: line, offset: call.Pos().Offset()}
				a.saved = append(a.saved, sv)
				if first, ok := a.firstSave[fileKey(f)]; !ok || sv.offset < first.offset {
					a.firstSave[fileKey(f)] = sv
				}
			}
			return true
		}
		for _, w := range codeWords(cmd, args, n.Redirs) {
			if dl, dline := downloadIn(w); dl != "" {
				a.found = append(a.found, Finding{Rule: SubstitutedIntoShell, Downloader: dl, DownloadLine: dline, Runner: cmd, RunLine: line})
			}
		}
		if f, byPath := ranFile(cmd, word, args); f != "" {
			if byPath {
				cmd = f
			}
			a.runs = append(a.runs, FileUse{File: f, Command: cmd, Line: line})
			if s, ok := a.firstSave[fileKey(f)]; ok && s.offset < call.Pos().Offset() {
				a.found = append(a.found, Finding{Rule: DownloadThenRun, Downloader: s.downloader, DownloadLine: s.line, Runner: cmd, RunLine: line, File: s.file})
			}
		}
	}
	return true
}

// pipeline reads a pipeline as its list of stages and reports a download in
// one stage that a later stage runs as a program read from standard input.
func (a *analysis) pipeline(top *syntax.BinaryCmd) {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			a.inPipe[b] = true
			flatten(b.X)
			flatten(b.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(top.X)
	flatten(top.Y)
	dl, dline := "", 0
	for _, s := range stages {
		call, ok := s.Cmd.(*syntax.CallExpr)
		if !ok {
			continue
		}
		cmd, _, args := command(call)
		if _, ok := downloaders[cmd]; ok && dl == "" {
			dl, dline = cmd, int(call.Pos().Line())
			continue
		}
		if dl != "" && readsProgramFromStdin(cmd, args) {
			a.found = append(a.found, Finding{Rule: PipedToShell, Downloader: dl, DownloadLine: dline, Runner: cmd, RunLine: int(call.Pos().Line())})
			return
		}
	}
}

// wrappers run the command that follows them (and their own options).
var wrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "nohup": true, "command": true, "exec": true,
	"time": true, "nice": true, "stdbuf": true, "timeout": true,
}

// command returns the name of the command a call runs, past wrappers such
// as sudo and env and their options, the word that names it, and its
// arguments. The name is the base name of a literal path ("/bin/bash" is
// "bash"); a command named by a non-literal word ("$dir/run.sh") has the name
// "" and its word.
func command(call *syntax.CallExpr) (string, *syntax.Word, []*syntax.Word) {
	args := call.Args
	for len(args) > 0 {
		if args[0].Lit() == "" {
			return "", args[0], args[1:]
		}
		name := path.Base(args[0].Lit())
		if !wrappers[name] {
			return name, args[0], args[1:]
		}
		args = args[1:]
		for len(args) > 0 {
			lit := args[0].Lit()
			if strings.HasPrefix(lit, "-") || strings.Contains(lit, "=") && name == "env" ||
				name == "timeout" && lit != "" && lit[0] >= '0' && lit[0] <= '9' {
				args = args[1:]
				continue
			}
			break
		}
	}
	return "", nil, nil
}

// The interpreters: shells read a script from a file or standard input and
// take one with -c; the others run code from a file, standard input, -c or -e.
var (
	shells       = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true, "mksh": true, "fish": true}
	interpreters = map[string]string{ // name -> the option that takes code
		"python": "-c", "python2": "-c", "python3": "-c", "node": "-e", "perl": "-e", "ruby": "-e", "php": "-r",
		"pwsh": "-c", "powershell": "-c", "pwsh.exe": "-c", "powershell.exe": "-c",
	}
)

// interpreter reports whether cmd runs code, and its code option ("-c", "-e").
func interpreter(cmd string) (string, bool) {
	if shells[cmd] {
		return "-c", true
	}
	if opt, ok := interpreters[cmd]; ok {
		return opt, true
	}
	if strings.HasPrefix(cmd, "python3.") {
		return "-c", true
	}
	return "", false
}

// readsProgramFromStdin reports whether cmd with args runs the program its
// standard input gives it: an interpreter with no script file and no code
// option, or with -s or - in the shells' and Python's sense.
func readsProgramFromStdin(cmd string, args []*syntax.Word) bool {
	opt, ok := interpreter(cmd)
	if !ok {
		return false
	}
	for _, w := range args {
		lit := w.Lit()
		switch {
		case lit == "-" || lit == "-s" || lit == "--":
			return true
		case lit == opt:
			return false
		case strings.HasPrefix(lit, "-"):
			if shells[cmd] && strings.Contains(lit[1:], "c") && !strings.HasPrefix(lit, "--") {
				return false
			}
			if shells[cmd] && strings.Contains(lit[1:], "s") && !strings.HasPrefix(lit, "--") {
				return true
			}
		default:
			return false // a script file
		}
	}
	return true
}

// codeWords returns the words a call runs as code: the argument of a
// shell's -c or an interpreter's -e, the script argument when it is a
// process substitution, every argument of eval, the file of source and ".",
// and the input redirections of an interpreter (bash < <(curl …),
// bash <<< "$(curl …)").
func codeWords(cmd string, args []*syntax.Word, redirs []*syntax.Redirect) []*syntax.Word {
	switch cmd {
	case "eval":
		return args
	case "source", ".":
		if len(args) > 0 {
			return args[:1]
		}
		return nil
	}
	opt, ok := interpreter(cmd)
	if !ok {
		return nil
	}
	var out []*syntax.Word
	for i, w := range args {
		lit := w.Lit()
		if lit == opt || shells[cmd] && strings.HasPrefix(lit, "-") && !strings.HasPrefix(lit, "--") && strings.HasSuffix(lit, "c") {
			if i+1 < len(args) {
				out = append(out, args[i+1])
			}
			break
		}
		if !strings.HasPrefix(lit, "-") || lit == "" {
			out = append(out, w) // the script: a file, or <(curl …)
			break
		}
	}
	for _, r := range redirs {
		if r.Op == syntax.RdrIn || r.Op == syntax.WordHdoc {
			out = append(out, r.Word)
		}
	}
	return out
}

// downloadIn returns the first download command run inside a word's command
// or process substitutions, and its line.
func downloadIn(w *syntax.Word) (string, int) {
	name, line := "", 0
	syntax.Walk(w, func(node syntax.Node) bool {
		if name != "" {
			return false
		}
		if call, ok := node.(*syntax.CallExpr); ok {
			if cmd, _, _ := command(call); cmd != "" {
				if _, ok := downloaders[cmd]; ok {
					name, line = cmd, int(call.Pos().Line())
					return false
				}
			}
		}
		return true
	})
	return name, line
}

// ranFile returns the file a command runs as a program: the script of an
// interpreter (bash f, python3 f), the file of source or ".", or the
// command itself when it is a path (./f, /tmp/f, "$dir/f"; byPath is then
// true). It is "" for anything else.
func ranFile(cmd string, word *syntax.Word, args []*syntax.Word) (file string, byPath bool) {
	if cmd == "" || strings.Contains(word.Lit(), "/") {
		if _, ok := interpreter(cmd); !ok {
			return wordText(word), true
		}
	}
	switch cmd {
	case "source", ".":
		if len(args) > 0 {
			return wordText(args[0]), false
		}
		return "", false
	}
	opt, ok := interpreter(cmd)
	if !ok {
		return "", false
	}
	for _, w := range args {
		lit := w.Lit()
		if lit == opt {
			return "", false
		}
		if !strings.HasPrefix(lit, "-") || lit == "" {
			return wordText(w), false
		}
	}
	return "", false
}

// wordText is a word as written in the script, quotes removed from a
// literal-only word so that "f.sh", 'f.sh' and f.sh are the same file.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return ""
	}
	s := b.String()
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	return s
}

// fileKey is a file as written in a script, without a leading "./": two
// words name the same file when their keys are equal and not empty.
func fileKey(f string) string {
	return strings.TrimPrefix(f, "./")
}
