package shellscan

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/secscan/decode"
	"mvdan.cc/sh/v3/syntax"
)

// The rules of a command that is a threat by itself, whatever it downloads
// (issue 31): a reverse shell, decoded data run as a program, the deletion
// of a home or system folder, a disk wiped, the user's files encrypted, and
// code installed to run again later.
const (
	// ReverseShell is a shell whose input and output are a network
	// connection: bash -i >& /dev/tcp/H/P 0>&1, exec 5<>/dev/tcp/H/P,
	// nc -e /bin/sh, a pipeline that joins nc, telnet, socat or
	// openssl s_client to a shell (the mkfifo form), socat exec:….
	ReverseShell Rule = "reverse-shell"
	// DecodedToShell is data decoded by the script (base64 -d, xxd -r,
	// printf '\x..', echo -e, $'\x..', rev, gunzip) piped into an
	// interpreter, substituted into one as its program, or written to a
	// file that a later command runs.
	DecodedToShell Rule = "decoded-payload-to-shell"
	// DestroyFiles deletes or shreds the root folder, a system folder, the
	// home folder or its contents: rm -rf "$HOME"/*, find / -delete,
	// find ~ -exec shred, also through a constant variable.
	DestroyFiles Rule = "destroy-files"
	// WipeDisk overwrites or formats a disk: dd of=/dev/sda, mkfs /dev/…,
	// a redirection onto a disk device.
	WipeDisk Rule = "wipe-disk"
	// EncryptFiles encrypts the files of the home folder (openssl enc,
	// gpg -c) in a loop over them that also deletes them, or in a find over
	// them: ransomware.
	EncryptFiles Rule = "encrypt-files"
	// StartupFile writes into a shell start-up file (~/.bashrc,
	// ~/.profile, /etc/profile.d/…) by a redirection, tee, cp, ln, mv,
	// install or sed -i.
	StartupFile Rule = "shell-startup-file"
	// ScheduledTask installs a cron entry (crontab -, crontab FILE, a write
	// into /etc/cron*), a systemd unit (a write into a systemd folder,
	// systemctl enable), a launchd job or an autostart entry.
	ScheduledTask Rule = "scheduled-task"
	// GitHook writes or enables a git hook (.git/hooks/…, core.hooksPath).
	GitHook Rule = "git-hook"
	// AuthorizedKeys writes into an ssh authorized_keys file.
	AuthorizedKeys Rule = "authorized-keys"
)

// Threat is one command of a script that is a threat by itself.
type Threat struct {
	Rule Rule
	// Line is the command's line; Command its name ("rm", "bash").
	Line    int
	Command string
	// Detail says what the command does, for the finding's message.
	Detail string
	// From is the line of another command the threat joins (the decoder
	// piped into a shell, the nc piped to it), 0 for none.
	From int
}

// String is the threat in one line, the form the tests compare.
func (t Threat) String() string {
	s := fmt.Sprintf("%s: %s at line %d: %s", t.Rule, t.Command, t.Line, t.Detail)
	if t.From != 0 {
		s += fmt.Sprintf(" (from line %d)", t.From)
	}
	return s
}

// maxNesting bounds how deep a shell's -c string or eval's literal argument
// is parsed again as a script: sh -c 'bash -c "…"'. Each level re-reads a
// part of the script, so the analysis stays linear in the script's size
// times this bound.
const maxNesting = 3

// maxValue bounds a resolved word's length: a longer one is not a path
// the rules look for, and the bound keeps variables built from variables
// from growing without end.
const maxValue = 4096

// unknown is the value of a variable that is not constant.
const unknown = "\x00"

// threatWalk is the state of one walk over a script for threats.
type threatWalk struct {
	found []Threat
	// vars are the script's variables assigned once, to a value known
	// before it runs (unknown otherwise), for rm -rf "$D" with D=$HOME.
	vars   map[string]string
	inPipe map[*syntax.BinaryCmd]bool
	// homeLoops are the loops over the home folder's files (a for over
	// find ~ or ~/*, a while fed by find ~); frames is the stack of those
	// the walk is inside, with what their bodies did.
	homeLoops map[syntax.Node]bool
	// decodedSaved are, by fileKey, the files a decoder's output was
	// written to (base64 -d > f), for a later command that runs one.
	decodedSaved map[string]decodedFile
	frames       []loopFrame
	nodes        []syntax.Node
	depth        int
	// cwd is the folder the script changed to by its last cd, when the
	// script's text gives it ("$HOME", "/"), else "".
	cwd string
	// lineAt, when not zero, is the line every threat of a nested script is
	// placed at (the line of the sh -c that runs it).
	lineAt int
	// inline is the code of other interpreters the script gives them.
	inline []Inline
	// downloads are the download-and-run findings of the shell -c strings
	// and eval arguments parsed again, placed at the outer command.
	downloads []Finding
}

// Inline is code of an interpreter other than a shell given to it in the
// script itself: the argument of python3 -c, node -e, perl -e or ruby -e,
// or a here-document (or here-string) the interpreter reads as its
// program (python3 - <<'EOF'). The content scanner hands it to its code
// rules (codescan), placed at the script's lines.
type Inline struct {
	// Interp is the interpreter's name ("python3", "node", "perl", "ruby").
	Interp string
	// Code is the program's text, the shell's quoting removed when the
	// script's text gives its value.
	Code string
	// Line is the script's line of Code's first line; when Fixed, every
	// line of Code is placed at Line (code of a nested sh -c string).
	Line  int
	Fixed bool
}

// maxInline bounds the inline programs kept for one script.
const maxInline = 64

// decodedFile is a file a decoder wrote: the decoder and its line.
type decodedFile struct {
	decoder string
	line    int
}

// loopFrame is what the body of a loop over home files did.
type loopFrame struct {
	node        syntax.Node
	encryptLine int
	encryptor   string
	deletes     bool
}

// threats walks a parsed script for its threats (t.found), the code it
// gives other interpreters (t.inline) and the download-and-run findings of
// the shell -c strings and eval arguments it parses again (t.downloads).
func threats(file *syntax.File, depth, lineAt int) *threatWalk {
	t := &threatWalk{
		vars: map[string]string{}, inPipe: map[*syntax.BinaryCmd]bool{},
		homeLoops: map[syntax.Node]bool{}, decodedSaved: map[string]decodedFile{}, depth: depth, lineAt: lineAt,
	}
	t.collectVars(file)
	syntax.Walk(file, t.visit)
	return t
}

// collectVars records the script's constant variables: one assigned once
// (or always to the same value) to a word known before the script runs.
// A loop variable or one read is not constant.
func (t *threatWalk) collectVars(file *syntax.File) {
	set := func(name, value string, ok bool) {
		if !ok {
			value = unknown
		}
		if old, seen := t.vars[name]; seen && old != value {
			value = unknown
		}
		t.vars[name] = value
	}
	assign := func(as *syntax.Assign) {
		if as.Name == nil || as.Naked { // export X: the value does not change
			return
		}
		if as.Value == nil || as.Append || as.Index != nil || as.Array != nil {
			t.vars[as.Name.Value] = unknown
			return
		}
		v, ok := t.resolve(as.Value)
		set(as.Name.Value, v, ok)
	}
	syntax.Walk(file, func(node syntax.Node) bool {
		switch n := node.(type) {
		case *syntax.CallExpr:
			for _, as := range n.Assigns {
				if len(n.Args) == 0 {
					assign(as)
				}
			}
			if len(n.Args) > 1 && (n.Args[0].Lit() == "read" || n.Args[0].Lit() == "mapfile" || n.Args[0].Lit() == "readarray") {
				for _, w := range n.Args[1:] {
					if l := w.Lit(); l != "" && !strings.HasPrefix(l, "-") {
						t.vars[l] = unknown
					}
				}
			}
		case *syntax.DeclClause:
			for _, as := range n.Args {
				if !as.Naked {
					assign(as)
				}
			}
		case *syntax.WordIter:
			t.vars[n.Name.Value] = unknown
		}
		return true
	})
}

// resolve is a word's value when the script's text gives it: literals,
// quotes, $HOME (kept as "$HOME", and ~ written as it), constant variables,
// and $(git rev-parse --git-dir) (as ".git"). ok is false otherwise.
func (t *threatWalk) resolve(w *syntax.Word) (string, bool) {
	var b strings.Builder
	ok := t.resolveParts(&b, w.Parts, true)
	return b.String(), ok
}

func (t *threatWalk) resolveParts(b *strings.Builder, parts []syntax.WordPart, first bool) bool {
	for i, p := range parts {
		if b.Len() > maxValue {
			return false // X=$Y$Y, Y=$Z$Z, …: a value doubling with each variable
		}
		switch x := p.(type) {
		case *syntax.Lit:
			v := x.Value
			if i == 0 && first && (v == "~" || strings.HasPrefix(v, "~/")) {
				v = "$HOME" + v[1:]
			}
			b.WriteString(unescape(v, first))
		case *syntax.SglQuoted:
			if x.Dollar {
				return false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if !t.resolveParts(b, x.Parts, false) {
				return false
			}
		case *syntax.ParamExp:
			if x.Param == nil || x.Excl || x.Length || x.Index != nil || x.Slice != nil || x.Repl != nil || x.Names != 0 {
				return false
			}
			name := x.Param.Value
			if name == "HOME" {
				b.WriteString("$HOME")
				continue
			}
			if x.Exp != nil {
				return false
			}
			v, ok := t.vars[name]
			if !ok || v == unknown {
				return false
			}
			b.WriteString(v)
		case *syntax.CmdSubst:
			if !isGitDir(x) {
				return false
			}
			b.WriteString(".git")
		default:
			return false
		}
	}
	return b.Len() <= maxValue
}

// unescape removes the backslashes of a literal as the shell does: before
// any character outside quotes, before $, `, " and \ inside double quotes
// (unquoted false); a backslash before a newline joins the lines.
func unescape(v string, unquoted bool) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			c := v[i+1]
			switch {
			case c == '\n':
				i++
				continue
			case unquoted || strings.IndexByte("$`\"\\", c) >= 0:
				b.WriteByte(c)
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// isGitDir reports whether a command substitution is git rev-parse
// --git-dir (or --git-common-dir, --absolute-git-dir): the repository's .git.
func isGitDir(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) < 3 || call.Args[0].Lit() != "git" || call.Args[1].Lit() != "rev-parse" {
		return false
	}
	switch call.Args[2].Lit() {
	case "--git-dir", "--git-common-dir", "--absolute-git-dir":
		return true
	}
	return false
}

// text is a word's value when resolve knows it, else the word as written.
func (t *threatWalk) text(w *syntax.Word) string {
	if v, ok := t.resolve(w); ok {
		return v
	}
	return wordText(w)
}

// add records a threat at line (at the outer command's line in a nested
// script).
func (t *threatWalk) add(rule Rule, line int, cmd, detail string) {
	t.addFrom(rule, line, 0, cmd, detail)
}

// addFrom is add for a threat that joins a command at line from.
func (t *threatWalk) addFrom(rule Rule, line, from int, cmd, detail string) {
	if t.lineAt != 0 {
		line = t.lineAt
		if from != 0 {
			from = t.lineAt
		}
	}
	t.found = append(t.found, Threat{Rule: rule, Line: line, Command: cmd, Detail: detail, From: from})
}

func (t *threatWalk) visit(node syntax.Node) bool {
	if node == nil {
		t.leave()
		return true
	}
	t.nodes = append(t.nodes, node)
	if t.homeLoops[node] {
		t.frames = append(t.frames, loopFrame{node: node})
	}
	switch n := node.(type) {
	case *syntax.ForClause:
		if wi, ok := n.Loop.(*syntax.WordIter); ok {
			for _, item := range wi.Items {
				if t.overHome(item) {
					t.homeLoops[n] = true
					t.frames = append(t.frames, loopFrame{node: n})
					break
				}
			}
		}
	case *syntax.BinaryCmd:
		if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && !t.inPipe[n] {
			t.pipeline(n)
		}
	case *syntax.Stmt:
		t.stmt(n)
	}
	return true
}

// leave pops the node the walk has finished, and reports a loop over home
// files that encrypted and deleted them.
func (t *threatWalk) leave() {
	if len(t.nodes) == 0 {
		return
	}
	node := t.nodes[len(t.nodes)-1]
	t.nodes = t.nodes[:len(t.nodes)-1]
	if len(t.frames) == 0 || t.frames[len(t.frames)-1].node != node {
		return
	}
	f := t.frames[len(t.frames)-1]
	t.frames = t.frames[:len(t.frames)-1]
	if f.encryptLine != 0 && f.deletes {
		t.add(EncryptFiles, f.encryptLine, f.encryptor, "encrypts the home folder's files in a loop over them and deletes them")
	}
	if len(t.frames) > 0 { // an inner loop's body is the outer loop's too
		outer := &t.frames[len(t.frames)-1]
		if outer.encryptLine == 0 && f.encryptLine != 0 {
			outer.encryptLine, outer.encryptor = f.encryptLine, f.encryptor
		}
		outer.deletes = outer.deletes || f.deletes
	}
}

// overHome reports whether a loop item is the home folder's files: a glob
// or path under $HOME, or a command substitution of a find over it.
func (t *threatWalk) overHome(w *syntax.Word) bool {
	if v, ok := t.resolve(w); ok {
		return v == "$HOME" || strings.HasPrefix(v, "$HOME/")
	}
	found := false
	syntax.Walk(w, func(node syntax.Node) bool {
		if call, ok := node.(*syntax.CallExpr); ok && !found {
			if cmd, _, args := command(call); cmd == "find" {
				for _, p := range findPaths(args) {
					if v, ok := t.resolve(p); ok && (v == "$HOME" || strings.HasPrefix(v, "$HOME/") || dangerous(v) != "") {
						found = true
					}
				}
			}
		}
		return !found
	})
	return found
}

// stmt reads one simple command with its redirections.
func (t *threatWalk) stmt(s *syntax.Stmt) {
	call, _ := s.Cmd.(*syntax.CallExpr)
	var cmd string
	var word *syntax.Word
	var args []*syntax.Word
	line := int(s.Pos().Line())
	if call != nil {
		cmd, word, args = command(call)
		if cmd != "" {
			line = int(call.Pos().Line())
		}
	}
	t.redirs(s, call, cmd, args, line)
	if word != nil {
		t.decodedRun(s, call, cmd, word, args, line)
	}
	if call == nil || cmd == "" {
		return
	}
	switch cmd {
	case "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd":
		if opt := ncExec(args); opt != "" {
			t.add(ReverseShell, line, cmd, fmt.Sprintf("%s %s runs a program with its input and output on a network connection", cmd, opt))
		}
	case "socat":
		t.socat(line, args)
	case "cd", "pushd":
		t.cwd = ""
		switch {
		case len(args) == 0:
			t.cwd = "$HOME"
		case len(args) == 1:
			if v, ok := t.resolve(args[0]); ok && (strings.HasPrefix(v, "/") || v == "$HOME" || strings.HasPrefix(v, "$HOME/")) {
				t.cwd = v
			}
		}
	case "rm", "unlink":
		t.rm(line, cmd, args)
	case "shred", "wipe", "srm":
		t.shred(line, cmd, args)
	case "find":
		t.find(line, args)
	case "dd":
		for _, a := range args {
			if v := t.text(a); strings.HasPrefix(v, "of=") && isDisk(v[3:]) {
				t.add(WipeDisk, line, cmd, "writes over the disk "+v[3:])
			}
		}
	case "wipefs", "mke2fs", "mkswap":
		t.diskArgs(line, cmd, args)
	case "crontab":
		t.crontab(line, args)
	case "systemctl":
		for _, a := range args {
			if a.Lit() == "enable" || a.Lit() == "link" {
				t.add(ScheduledTask, line, cmd, "systemctl "+a.Lit()+" installs a service that starts again later")
				break
			}
		}
	case "launchctl":
		if len(args) > 0 && (args[0].Lit() == "load" || args[0].Lit() == "bootstrap" || args[0].Lit() == "submit") {
			t.add(ScheduledTask, line, cmd, "launchctl "+args[0].Lit()+" installs a launchd job")
		}
	case "truncate":
		t.truncate(line, args)
	case "git":
		t.gitClean(line, call, args)
		if slices.ContainsFunc(args, func(a *syntax.Word) bool { return a.Lit() == "--unset" || a.Lit() == "--get" }) {
			break
		}
		for i, a := range args {
			if strings.EqualFold(a.Lit(), "core.hooksPath") && i+1 < len(args) {
				t.add(GitHook, line, cmd, "sets core.hooksPath, so git runs the hooks of "+wordText(args[i+1]))
				break
			}
		}
	case "tee", "cp", "mv", "install", "ln", "rsync", "sed", "chmod":
		t.writes(line, cmd, args)
	}
	if strings.HasPrefix(cmd, "mkfs") {
		t.diskArgs(line, cmd, args)
	}
	if t.isEncryptor(cmd, args) {
		if len(t.frames) > 0 {
			f := &t.frames[len(t.frames)-1]
			if f.encryptLine == 0 {
				f.encryptLine, f.encryptor = line, cmd
			}
		}
	}
	if (cmd == "rm" || cmd == "shred" || cmd == "unlink" || cmd == "srm") && len(t.frames) > 0 {
		t.frames[len(t.frames)-1].deletes = true
	}
	for _, w := range codeWords(cmd, args, s.Redirs) {
		if dec, dline := decodedIn(w); dec != "" {
			t.addFrom(DecodedToShell, line, dline, cmd, fmt.Sprintf("data decoded by %s is given to %s as the program to run", dec, cmd))
			break
		}
	}
	t.nested(cmd, args, line)
	t.inlineCode(s, cmd, args)
}

// inlineCode records the program an interpreter other than a shell is
// given in the script: the word after its code option (python3 -c,
// node -e/--eval/-p, perl -e/-E or clustered as -we, ruby -e), or, when it
// reads its program from standard input, a here-document or here-string.
func (t *threatWalk) inlineCode(s *syntax.Stmt, cmd string, args []*syntax.Word) {
	opt, ok := interpreter(cmd)
	if !ok || shells[cmd] || len(t.inline) >= maxInline {
		return
	}
	for i, w := range args {
		lit := w.Lit()
		isOpt := lit == opt ||
			cmd == "node" && (lit == "--eval" || lit == "-p" || lit == "--print") ||
			isPwsh(cmd) && strings.EqualFold(lit, "-Command") ||
			(cmd == "perl" || cmd == "ruby") && len(lit) > 1 && lit[0] == '-' && lit[1] != '-' && !strings.ContainsAny(lit, "=:/") && strings.HasSuffix(strings.ToLower(lit), "e")
		if isOpt {
			if i+1 < len(args) {
				t.addInline(cmd, args[i+1])
			}
			return
		}
		if isPwsh(cmd) && i+1 < len(args) && encodedCommandOpt(lit) {
			if v, ok := t.resolve(args[i+1]); ok {
				if layers := decode.Decode(v, decode.Limits{Depth: 1, MaxBytes: 64 << 10}); len(layers) == 1 {
					in := Inline{Interp: cmd, Code: layers[0].Text, Line: int(args[i+1].Pos().Line()), Fixed: true}
					if t.lineAt != 0 {
						in.Line = t.lineAt
					}
					t.inline = append(t.inline, in)
				}
			}
			return
		}
		if isPwsh(cmd) {
			if strings.EqualFold(lit, "-File") || strings.EqualFold(lit, "-f") {
				break
			}
			continue // an option's value (-ExecutionPolicy Bypass): read on
		}
		if lit == "-" || !strings.HasPrefix(lit, "-") {
			break // a script file, or the program from standard input
		}
	}
	if !readsProgramFromStdin(cmd, args) {
		return
	}
	for _, r := range s.Redirs {
		switch {
		case (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil:
			t.addInline(cmd, r.Hdoc)
		case r.Op == syntax.WordHdoc:
			t.addInline(cmd, r.Word)
		}
	}
}

// isPwsh reports whether cmd is PowerShell (pwsh, powershell, with .exe).
func isPwsh(cmd string) bool {
	cmd = strings.TrimSuffix(cmd, ".exe")
	return cmd == "pwsh" || cmd == "powershell"
}

// encodedCommandOpt reports whether lit is PowerShell's -EncodedCommand
// option, which takes its script as base64 of UTF-16LE text: any prefix of
// it from -e, case-insensitively (-e, -ec, -enc, -EncodedCommand).
func encodedCommandOpt(lit string) bool {
	l := strings.ToLower(strings.TrimLeft(lit, "-"))
	const full = "encodedcommand"
	return strings.HasPrefix(lit, "-") && l != "" && (len(l) <= len(full) && full[:len(l)] == l || l == "ec")
}

// addInline records the program w gives interpreter cmd.
func (t *threatWalk) addInline(cmd string, w *syntax.Word) {
	code, ok := t.resolve(w)
	if !ok {
		code = wordText(w)
	}
	in := Inline{Interp: cmd, Code: code, Line: int(w.Pos().Line())}
	if t.lineAt != 0 {
		in.Line, in.Fixed = t.lineAt, true
	}
	t.inline = append(t.inline, in)
}

// decodedRun records a decoder's output written to a file, and reports a
// command that runs a file a decoder wrote earlier in the script:
// echo … | base64 -d > /tmp/x.sh; sh /tmp/x.sh.
func (t *threatWalk) decodedRun(s *syntax.Stmt, call *syntax.CallExpr, cmd string, word *syntax.Word, args []*syntax.Word, line int) {
	if cmd != "" && isDecoder(cmd, call.Args) {
		for _, r := range s.Redirs {
			if (r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrClob || r.Op == syntax.RdrAll) && (r.N == nil || r.N.Value == "1") {
				if k := fileKey(wordText(r.Word)); k != "" {
					if _, seen := t.decodedSaved[k]; !seen {
						t.decodedSaved[k] = decodedFile{decoder: cmd, line: line}
					}
				}
			}
		}
		return
	}
	f, byPath := ranFile(cmd, word, args)
	if f == "" {
		return
	}
	if d, ok := t.decodedSaved[fileKey(f)]; ok {
		runner := cmd
		if byPath {
			runner = f
		}
		t.addFrom(DecodedToShell, line, d.line, runner, fmt.Sprintf("runs %s, where data decoded by %s was written", f, d.decoder))
	}
}

// nested parses a shell's -c string or eval's arguments, when the script
// gives them as a constant, and reads them as a script of their own.
func (t *threatWalk) nested(cmd string, args []*syntax.Word, line int) {
	if t.depth >= maxNesting {
		return
	}
	var code []string
	switch {
	case cmd == "eval":
		var parts []string
		for _, a := range args {
			v, ok := t.resolve(a)
			if !ok {
				return
			}
			parts = append(parts, v)
		}
		code = []string{strings.Join(parts, " ")}
	case shells[cmd]:
		for _, w := range codeWords(cmd, args, nil) {
			if v, ok := t.resolve(w); ok && strings.ContainsAny(v, " \t;|&<>") {
				code = append(code, v)
			}
		}
	}
	for _, c := range code {
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(c), "")
		if err != nil {
			continue
		}
		at := line
		if t.lineAt != 0 {
			at = t.lineAt
		}
		sub := threats(file, t.depth+1, at)
		t.found = append(t.found, sub.found...)
		t.inline = append(t.inline, sub.inline...)
		t.downloads = append(t.downloads, sub.downloads...)
		a := analysis{inPipe: map[*syntax.BinaryCmd]bool{}, firstSave: map[string]saved{}}
		syntax.Walk(file, a.visit)
		for _, f := range a.found {
			f.RunLine, f.DownloadLine = at, at
			t.downloads = append(t.downloads, f)
		}
	}
}

// redirs reads a statement's redirections: a shell's input and output on
// /dev/tcp, exec fd<>/dev/tcp, a write onto a disk device or into a file
// that runs again later.
func (t *threatWalk) redirs(s *syntax.Stmt, call *syntax.CallExpr, cmd string, args []*syntax.Word, line int) {
	for _, r := range s.Redirs {
		v := t.text(r.Word)
		switch {
		case strings.HasPrefix(v, "/dev/tcp/") || strings.HasPrefix(v, "/dev/udp/"):
			if shells[cmd] || isInterp(cmd) && readsProgramFromStdin(cmd, args) {
				t.add(ReverseShell, line, cmd, fmt.Sprintf("%s runs with its input or output on the network connection %s", cmd, v))
			} else if call != nil && len(call.Args) == 1 && call.Args[0].Lit() == "exec" && r.Op == syntax.RdrInOut && !loopback(v) {
				t.add(ReverseShell, line, "exec", "opens a read-write network connection "+v+" on a file descriptor of the shell")
			}
		case r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrClob || r.Op == syntax.RdrAll || r.Op == syntax.AppAll:
			if isDisk(v) {
				t.add(WipeDisk, line, orRedir(cmd), "writes over the disk "+v)
				continue
			}
			t.persist(line, orRedir(cmd), v, "writes")
		}
	}
}

func orRedir(cmd string) string {
	if cmd == "" {
		return "redirection"
	}
	return cmd
}

// isInterp reports whether cmd is an interpreter other than a shell.
func isInterp(cmd string) bool {
	_, ok := interpreter(cmd)
	return ok
}

// loopback reports whether a /dev/tcp path names this machine.
func loopback(v string) bool {
	host := strings.TrimPrefix(strings.TrimPrefix(v, "/dev/tcp/"), "/dev/udp/")
	host, _, _ = strings.Cut(host, "/")
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1" || host == "0.0.0.0"
}

// ncExec returns the option of nc, ncat or netcat that runs a program on the
// connection (-e, -c, --exec, --sh-exec, --lua-exec), or "".
func ncExec(args []*syntax.Word) string {
	for _, a := range args {
		lit := a.Lit()
		switch {
		case lit == "--exec" || lit == "--sh-exec" || lit == "--lua-exec" ||
			strings.HasPrefix(lit, "--exec=") || strings.HasPrefix(lit, "--sh-exec="):
			return lit
		case strings.HasPrefix(lit, "-") && !strings.HasPrefix(lit, "--") && strings.ContainsAny(lit[1:], "ec"):
			return lit
		}
	}
	return ""
}

// socat reports a socat that joins a program (exec:, system:) to a
// network address.
func (t *threatWalk) socat(line int, args []*syntax.Word) {
	var prog, net string
	for _, a := range args {
		v := strings.ToLower(t.text(a))
		switch {
		case strings.HasPrefix(v, "exec:") || strings.HasPrefix(v, "system:"):
			prog = v
		case strings.HasPrefix(v, "tcp") || strings.HasPrefix(v, "udp") || strings.HasPrefix(v, "openssl") ||
			strings.HasPrefix(v, "ssl") || strings.HasPrefix(v, "sctp"):
			net = v
		}
	}
	if prog != "" && net != "" {
		p, _, _ := strings.Cut(prog, ",")
		n, _, _ := strings.Cut(net, ",")
		t.add(ReverseShell, line, "socat", fmt.Sprintf("socat joins the program %s to the network address %s", p, n))
	}
}

// dangerous says what a resolved path is when deleting it destroys the
// machine or the user's data: the root folder, a system folder, the home
// folder or one of its well-known folders, or a glob over one of them. It is
// "" for anything else.
func dangerous(p string) string {
	p = strings.ReplaceAll(p, "${HOME}", "$HOME")
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	glob := ""
	for _, g := range []string{"/*", "/.*", "/"} {
		if strings.HasSuffix(p, g) && len(p) > len(g) {
			p, glob = strings.TrimSuffix(p, g), g
			break
		}
	}
	switch {
	case p == "/" || p == "/*" || p == "/.*":
		return "the root folder"
	case p == "$HOME":
		if glob == "/*" || glob == "/.*" {
			return "every file of the home folder"
		}
		return "the home folder"
	case systemDirs[p]:
		return "the system folder " + p
	case strings.HasPrefix(p, "$HOME/") && userDirs[p[len("$HOME/"):]]:
		return "the user's " + p[len("$HOME/"):] + " folder"
	}
	return ""
}

var (
	systemDirs = map[string]bool{
		"/etc": true, "/usr": true, "/bin": true, "/sbin": true, "/boot": true, "/var": true, "/home": true,
		"/lib": true, "/lib64": true, "/opt": true, "/root": true, "/srv": true, "/System": true, "/Users": true,
		"/Applications": true, "/Library": true, "/usr/bin": true, "/usr/lib": true, "/usr/local": true,
		"/home/*": true, "/Users/*": true, "/var/lib": true,
	}
	userDirs = map[string]bool{
		"Documents": true, "Desktop": true, "Downloads": true, "Pictures": true, "Music": true, "Videos": true,
		"Movies": true, ".ssh": true, ".gnupg": true, ".config": true, "Library": true, "*": true, ".*": true,
	}
)

// rm reports an rm -r of a dangerous folder, or an rm of a glob over one.
func (t *threatWalk) rm(line int, cmd string, args []*syntax.Word) {
	recursive, opts := false, true
	for _, a := range args {
		lit := a.Lit()
		if opts && lit == "--" {
			opts = false
			continue
		}
		if opts && strings.HasPrefix(lit, "-") && len(lit) > 1 {
			if lit == "--recursive" || !strings.HasPrefix(lit, "--") && strings.ContainsAny(lit, "rR") {
				recursive = true
			}
			continue
		}
		v, ok := t.resolve(a)
		if !ok {
			continue
		}
		if t.cwd != "" && (v == "*" || v == "." || v == "./*" || v == ".*" || v == "./") {
			v = strings.TrimSuffix(t.cwd, "/") + "/*" // cd ~ && rm -rf *
		}
		for _, p := range expandBraces(v) {
			if what := dangerous(p); what != "" && (recursive || strings.HasSuffix(p, "*")) {
				t.add(DestroyFiles, line, cmd, "deletes "+what+" ("+wordText(a)+")")
				return
			}
		}
	}
}

// expandBraces expands a path's first brace group, as bash does
// (~/{Documents,Desktop} is two paths); a path without one is itself.
// At most 64 alternatives are read.
func expandBraces(v string) []string {
	i := strings.IndexByte(v, '{')
	j := strings.IndexByte(v[i+1:], '}')
	if i < 0 || j < 0 || !strings.Contains(v[i:i+1+j], ",") {
		return []string{v}
	}
	alts := strings.Split(v[i+1:i+1+j], ",")
	if len(alts) > 64 {
		alts = alts[:64]
	}
	out := make([]string, 0, len(alts))
	for _, a := range alts {
		out = append(out, v[:i]+a+v[i+2+j:])
	}
	return out
}

// shred reports shred of a dangerous folder, of files of the home folder,
// or of a disk.
func (t *threatWalk) shred(line int, cmd string, args []*syntax.Word) {
	for _, a := range args {
		if strings.HasPrefix(a.Lit(), "-") {
			continue
		}
		v, ok := t.resolve(a)
		if !ok {
			continue
		}
		switch {
		case isDisk(v):
			t.add(WipeDisk, line, cmd, "overwrites the disk "+v)
			return
		case dangerous(v) != "" || strings.HasPrefix(v, "$HOME/"):
			t.add(DestroyFiles, line, cmd, "overwrites and deletes files of the home or a system folder ("+wordText(a)+")")
			return
		}
	}
}

// truncate reports truncate over a dangerous folder's files (a glob over
// the home folder or one of the user's folders: truncate -s 0 ~/Documents/*).
// A file named under the home folder (a log) is not reported.
func (t *threatWalk) truncate(line int, args []*syntax.Word) {
	for i, a := range args {
		lit := a.Lit()
		if lit == "-s" || lit == "-r" || lit == "--size" || lit == "--reference" {
			continue
		}
		if strings.HasPrefix(lit, "-") || i > 0 && (args[i-1].Lit() == "-s" || args[i-1].Lit() == "-r" || args[i-1].Lit() == "--size" || args[i-1].Lit() == "--reference") {
			continue
		}
		v, ok := t.resolve(a)
		if !ok {
			continue
		}
		if t.cwd != "" && (v == "*" || v == "./*") {
			v = strings.TrimSuffix(t.cwd, "/") + "/*"
		}
		for _, p := range expandBraces(v) {
			if what := dangerous(p); what != "" && strings.Contains(p, "*") {
				t.add(DestroyFiles, line, "truncate", "empties "+what+" ("+wordText(a)+")")
				return
			}
		}
	}
}

// gitClean reports git clean -f run over the home folder, the root or a
// system folder (by -C, --work-tree, GIT_WORK_TREE or the script's last cd):
// after git init there, every file is untracked and deleted
// (cd ~ && git init -q && git clean -xffd).
func (t *threatWalk) gitClean(line int, call *syntax.CallExpr, args []*syntax.Word) {
	dir, known := t.cwd, t.cwd != ""
	for _, as := range call.Assigns {
		if as.Name != nil && as.Name.Value == "GIT_WORK_TREE" && as.Value != nil {
			dir, known = t.resolve(as.Value)
		}
	}
	sub := -1
	for i := 0; i < len(args) && sub < 0; i++ {
		lit := t.text(args[i])
		switch {
		case (lit == "-C" || lit == "--work-tree") && i+1 < len(args):
			i++
			dir, known = t.resolve(args[i])
		case strings.HasPrefix(lit, "--work-tree="):
			dir, known = strings.TrimPrefix(lit, "--work-tree="), true
		case lit == "-c" || lit == "--git-dir" || lit == "--namespace":
			i++
		case strings.HasPrefix(lit, "-"):
		default:
			sub = i
		}
	}
	if sub < 0 || args[sub].Lit() != "clean" || !known {
		return
	}
	force := false
	for _, a := range args[sub+1:] {
		lit := a.Lit()
		if lit == "--force" || len(lit) > 1 && lit[0] == '-' && lit[1] != '-' && strings.Contains(lit, "f") {
			force = true
		}
		if lit == "-n" || lit == "--dry-run" || lit == "-i" || lit == "--interactive" {
			return
		}
	}
	if !force {
		return
	}
	if what := dangerous(dir); what != "" {
		t.add(DestroyFiles, line, "git", "git clean deletes the untracked files of "+strings.TrimPrefix(what, "every file of ")+" ("+dir+")")
	}
}

// findPaths are the starting points of a find command: its arguments before
// the first test or action.
func findPaths(args []*syntax.Word) []*syntax.Word {
	for i, a := range args {
		lit := a.Lit()
		if lit == "-H" || lit == "-L" || lit == "-P" {
			continue
		}
		if strings.HasPrefix(lit, "-") || lit == "(" || lit == "!" || lit == "\\(" {
			return args[:i]
		}
	}
	return args
}

// find reports a find over a dangerous folder that deletes or shreds what
// it finds, or one over the home folder's files that encrypts them. A find
// over another sub-folder of the home folder that deletes (node_modules
// under ~/projects) is not reported.
func (t *threatWalk) find(line int, args []*syntax.Word) {
	paths := findPaths(args)
	danger, home := "", ""
	for _, p := range paths {
		v, ok := t.resolve(p)
		if !ok {
			continue
		}
		if w := dangerous(v); w != "" && danger == "" {
			danger = w
		}
		if (v == "$HOME" || strings.HasPrefix(v, "$HOME/")) && home == "" {
			home = "files of the home folder (" + wordText(p) + ")"
		}
	}
	if danger == "" && home == "" {
		return
	}
	rest := args[len(paths):]
	for i, a := range rest {
		switch a.Lit() {
		case "-delete":
			if danger != "" {
				t.add(DestroyFiles, line, "find", "find deletes "+danger)
			}
			return
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 >= len(rest) {
				return
			}
			sub, _, subArgs := command(&syntax.CallExpr{Args: rest[i+1:]})
			switch {
			case danger != "" && (sub == "rm" || sub == "shred" || sub == "unlink" || sub == "srm" || sub == "wipe" || sub == "truncate"):
				t.add(DestroyFiles, line, "find", "find runs "+sub+" on "+danger)
				return
			case t.isEncryptor(sub, subArgs):
				t.add(EncryptFiles, line, "find", "find runs "+sub+" to encrypt "+cmp.Or(home, danger))
				return
			}
		}
	}
}

// isDisk reports whether a path is a disk device.
func isDisk(v string) bool {
	d, ok := strings.CutPrefix(v, "/dev/")
	if !ok {
		return false
	}
	for _, p := range []string{"sd", "hd", "vd", "xvd", "nvme", "disk", "rdisk", "mmcblk", "dm-", "md"} {
		if strings.HasPrefix(d, p) && len(d) > len(p) {
			return true
		}
	}
	return strings.HasPrefix(d, "mapper/")
}

// diskArgs reports a disk tool (mkfs, mkswap, wipefs -a) given a disk
// device; wipefs without -a only lists.
func (t *threatWalk) diskArgs(line int, cmd string, args []*syntax.Word) {
	if cmd == "wipefs" && !slices.ContainsFunc(args, func(a *syntax.Word) bool {
		l := a.Lit()
		return l == "--all" || strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.Contains(l, "a")
	}) {
		return
	}
	for _, a := range args {
		if v := t.text(a); isDisk(v) {
			t.add(WipeDisk, line, cmd, cmd+" formats or erases the disk "+v)
			return
		}
	}
}

// isEncryptor reports whether a command encrypts files: openssl enc or a
// cipher command (not -d), gpg -c/-e/--symmetric/--encrypt, age, ccrypt.
func (t *threatWalk) isEncryptor(cmd string, args []*syntax.Word) bool {
	has := func(opts ...string) bool {
		for _, a := range args {
			for _, o := range opts {
				if a.Lit() == o {
					return true
				}
			}
		}
		return false
	}
	switch cmd {
	case "openssl":
		if len(args) == 0 || has("-d", "--decrypt") {
			return false
		}
		sub := args[0].Lit()
		return sub == "enc" || strings.HasPrefix(sub, "aes") || strings.HasPrefix(sub, "des") ||
			strings.HasPrefix(sub, "chacha") || strings.HasPrefix(sub, "camellia")
	case "gpg", "gpg2":
		return has("-c", "--symmetric", "-e", "--encrypt", "--encrypt-files", "-se", "-ce")
	case "age", "ccrypt", "aescrypt":
		return !has("-d", "--decrypt")
	}
	return false
}

// crontab reports a crontab that installs a table: from standard input
// (crontab -) or from a file.
func (t *threatWalk) crontab(line int, args []*syntax.Word) {
	for i := 0; i < len(args); i++ {
		lit := args[i].Lit()
		switch {
		case lit == "-":
			t.add(ScheduledTask, line, "crontab", "crontab - installs a cron table read from standard input")
			return
		case lit == "-u":
			i++
		case strings.HasPrefix(lit, "-"):
			return // -l, -e, -r: list, edit, remove
		default:
			t.add(ScheduledTask, line, "crontab", "crontab installs the cron table "+wordText(args[i]))
			return
		}
	}
}

// writes reads the files tee, cp, mv, install, ln, rsync and sed -i write,
// and chmod +x, for persistence.
func (t *threatWalk) writes(line int, cmd string, args []*syntax.Word) {
	var files []*syntax.Word
	inPlace, exec := false, false
	for i := 0; i < len(args); i++ {
		lit := args[i].Lit()
		switch {
		case (lit == "-t" || lit == "--target-directory") && i+1 < len(args) && cmd != "tee" && cmd != "sed":
			files = append(files, args[i+1])
			i++
		case cmd == "sed" && (lit == "-e" || lit == "-f"):
			i++
		case cmd == "chmod" && isMode(lit):
			exec = exec || strings.Contains(lit, "x") || strings.Trim(lit, "0246") != "" && strings.Trim(lit, "01234567") == ""
		case strings.HasPrefix(lit, "-") && len(lit) > 1:
			if cmd == "sed" && (lit == "-i" || strings.HasPrefix(lit, "-i") || lit == "--in-place" || strings.HasPrefix(lit, "--in-place=")) {
				inPlace = true
			}
		default:
			files = append(files, args[i])
		}
	}
	switch cmd {
	case "tee":
	case "sed":
		if !inPlace || len(files) < 2 {
			return
		}
		files = files[1:] // the script, then the files
	case "chmod":
		if !exec {
			return
		}
		for _, f := range files {
			v := t.text(f)
			if gitHookPath(v) {
				t.add(GitHook, line, cmd, "makes the git hook "+v+" executable")
				return
			}
		}
		return
	default: // cp, mv, install, ln, rsync: the last file is the destination
		if len(files) < 2 {
			return
		}
		files = files[len(files)-1:]
	}
	for _, f := range files {
		t.persist(line, cmd, t.text(f), "writes")
	}
}

// isMode reports whether a chmod argument is a mode (+x, u+rwx, 755).
func isMode(lit string) bool {
	if lit == "" {
		return false
	}
	if strings.Trim(lit, "01234567") == "" {
		return true
	}
	return strings.ContainsAny(lit, "+=") && strings.Trim(lit, "ugoa+-=rwxXst,") == ""
}

// gitHookPath reports whether a path is a git hook or the hooks folder.
func gitHookPath(v string) bool {
	return strings.Contains(v, ".git/hooks/") || strings.HasSuffix(v, ".git/hooks") ||
		strings.Contains(v, "git rev-parse") && strings.Contains(v, "/hooks/")
}

// persist reports a write into a file that runs again later.
func (t *threatWalk) persist(line int, cmd, v, verb string) {
	base := path.Base(v)
	switch {
	case startupFiles[base] || strings.HasSuffix(v, ".config/fish/config.fish") ||
		strings.HasPrefix(v, "/etc/profile") || v == "/etc/bash.bashrc" || strings.HasPrefix(v, "/etc/zsh/") ||
		v == "/etc/environment":
		t.add(StartupFile, line, cmd, verb+" the shell start-up file "+v)
	case strings.HasPrefix(v, "/etc/cron") || strings.HasPrefix(v, "/var/spool/cron") ||
		strings.Contains(v, "/systemd/system") || strings.Contains(v, "/systemd/user") ||
		strings.Contains(v, "Library/LaunchAgents") || strings.Contains(v, "Library/LaunchDaemons") ||
		strings.Contains(v, ".config/autostart") || strings.HasPrefix(v, "/etc/init.d/") || v == "/etc/rc.local":
		t.add(ScheduledTask, line, cmd, verb+" "+v+", which runs again later")
	case gitHookPath(v):
		t.add(GitHook, line, cmd, verb+" the git hook "+v)
	case base == "authorized_keys" || base == "authorized_keys2":
		t.add(AuthorizedKeys, line, cmd, verb+" "+v+", letting a key log in")
	}
}

var startupFiles = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".profile": true, ".zshrc": true,
	".zprofile": true, ".zshenv": true, ".zlogin": true, ".kshrc": true, ".cshrc": true, ".tcshrc": true,
	".bash_logout": true, ".zlogout": true,
}

// pipeline reads a pipeline's stages for a network connection joined to a
// shell (a reverse shell) and for decoded data piped into an interpreter.
func (t *threatWalk) pipeline(top *syntax.BinaryCmd) {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			t.inPipe[b] = true
			flatten(b.X)
			flatten(b.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(top.X)
	flatten(top.Y)
	netCmd, netLine, shellCmd, shellLine := "", 0, "", 0
	decoder, decLine := "", 0
	homeFind, findWhat := false, ""
	for _, s := range stages {
		if homeFind {
			if w, ok := s.Cmd.(*syntax.WhileClause); ok {
				t.homeLoops[w] = true
			}
		}
		call, ok := s.Cmd.(*syntax.CallExpr)
		if !ok {
			continue
		}
		cmd, _, args := command(call)
		line := int(call.Pos().Line())
		if cmd == "find" {
			for _, p := range findPaths(args) {
				if v, ok := t.resolve(p); ok && (v == "$HOME" || strings.HasPrefix(v, "$HOME/")) {
					homeFind = true
				}
				if v, ok := t.resolve(p); ok && dangerous(v) != "" && findWhat == "" {
					findWhat = dangerous(v)
				}
			}
		}
		if cmd == "xargs" && findWhat != "" {
			t.xargs(line, findWhat, homeFind, args)
		}
		if netCmd == "" && isNetwork(cmd, args) {
			netCmd, netLine = cmd, line
		}
		if shellCmd == "" && (readsProgramFromStdin(cmd, args) || shells[cmd] && hasInteractive(args)) {
			shellCmd, shellLine = cmd, line
			if decoder != "" {
				t.addFrom(DecodedToShell, shellLine, decLine, cmd, fmt.Sprintf("data decoded by %s is piped into %s, which runs it as a program", decoder, cmd))
			}
		}
		if decoder == "" && shellCmd == "" && isDecoder(cmd, call.Args) {
			decoder, decLine = cmd, line
		}
	}
	if netCmd != "" && shellCmd != "" && shells[shellCmd] {
		t.addFrom(ReverseShell, netLine, shellLine, netCmd, fmt.Sprintf("a pipeline joins %s to the shell %s: a shell on a network connection", netCmd, shellCmd))
	}
}

// xargs reports an xargs fed by a find over a dangerous folder that runs
// rm or shred on what it finds, or encrypts the home folder's files.
func (t *threatWalk) xargs(line int, what string, home bool, args []*syntax.Word) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].Lit(), "-") {
		switch args[i].Lit() {
		case "-I", "-n", "-P", "-L", "-d", "-s", "-E":
			i++
		}
		i++
	}
	if i >= len(args) {
		return
	}
	sub, _, subArgs := command(&syntax.CallExpr{Args: args[i:]})
	switch {
	case sub == "rm" || sub == "shred" || sub == "unlink" || sub == "srm" || sub == "wipe" || sub == "truncate":
		t.add(DestroyFiles, line, "xargs", "xargs runs "+sub+" on what find lists in "+what)
	case home && t.isEncryptor(sub, subArgs):
		t.add(EncryptFiles, line, "xargs", "xargs runs "+sub+" to encrypt what find lists in "+what)
	}
}

func hasInteractive(args []*syntax.Word) bool {
	for _, a := range args {
		if lit := a.Lit(); strings.HasPrefix(lit, "-") && !strings.HasPrefix(lit, "--") && strings.Contains(lit, "i") {
			return true
		}
	}
	return false
}

// isNetwork reports whether a pipeline stage is a raw network connection:
// nc, ncat, netcat, telnet, socat, openssl s_client, or cat of /dev/tcp.
func isNetwork(cmd string, args []*syntax.Word) bool {
	switch cmd {
	case "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "telnet", "socat":
		return true
	case "openssl":
		return len(args) > 0 && args[0].Lit() == "s_client"
	}
	return false
}

// isDecoder reports whether a pipeline stage decodes data: base64/base32
// -d, xxd -r, openssl base64 -d or enc -d -a, printf or echo -e of \x or
// octal escapes, a $'\x..' word, rev, and the decompressors.
func isDecoder(cmd string, words []*syntax.Word) bool {
	if len(words) == 0 {
		return false
	}
	args := words[1:]
	for _, w := range words {
		for _, p := range w.Parts {
			if q, ok := p.(*syntax.SglQuoted); ok && q.Dollar && hasEscapes(q.Value) {
				return true
			}
		}
	}
	flag := func(short byte, long ...string) bool {
		for _, a := range args {
			lit := a.Lit()
			for _, l := range long {
				if lit == l {
					return true
				}
			}
			if short != 0 && strings.HasPrefix(lit, "-") && !strings.HasPrefix(lit, "--") && strings.IndexByte(lit, short) > 0 {
				return true
			}
		}
		return false
	}
	switch cmd {
	case "base64", "base32", "basenc":
		return flag('d', "--decode") || flag('D')
	case "xxd":
		return flag('r', "--revert")
	case "openssl":
		return len(args) > 0 && (args[0].Lit() == "base64" || args[0].Lit() == "enc") && flag(0, "-d")
	case "printf":
		for _, a := range args {
			if a.Lit() == "-v" {
				return false
			}
			if !strings.HasPrefix(a.Lit(), "-") {
				return hasEscapes(wordText(a))
			}
		}
	case "echo":
		if !flag('e') {
			return false
		}
		for _, a := range args {
			if hasEscapes(wordText(a)) {
				return true
			}
		}
	case "rev", "zcat", "gunzip", "unxz", "bunzip2", "xzcat", "bzcat", "uncompress":
		return true
	case "gzip", "xz", "bzip2", "zstd":
		return flag('d', "--decompress")
	}
	return false
}

// hasEscapes reports whether a string has a \x, \u or octal escape.
func hasEscapes(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		c := s[i+1]
		if c == 'x' || c == 'u' || c >= '0' && c <= '7' {
			return true
		}
		i++
	}
	return false
}

// decodedIn returns the first decoding command run inside a word's command
// or process substitutions, and its line.
func decodedIn(w *syntax.Word) (string, int) {
	name, line := "", 0
	syntax.Walk(w, func(node syntax.Node) bool {
		if name != "" {
			return false
		}
		if call, ok := node.(*syntax.CallExpr); ok {
			if cmd, _, _ := command(call); cmd != "" && isDecoder(cmd, call.Args) {
				name, line = cmd, int(call.Pos().Line())
				return false
			}
		}
		return true
	})
	return name, line
}
