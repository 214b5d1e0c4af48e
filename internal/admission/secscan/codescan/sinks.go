package codescan

import (
	"math"
	"strconv"
	"strings"
)

// Kind is a capability a line of a script uses.
type Kind string

// The capabilities.
const (
	// KindNetwork is a network call: a download, an upload, a socket.
	KindNetwork Kind = "network"
	// KindProcess is a program started, or code evaluated (exec, eval).
	KindProcess Kind = "process"
	// KindFileWalk is a walk of a folder (os.walk, listdir, rglob,
	// readdir).
	KindFileWalk Kind = "file-walk"
	// KindDecode is a constant decoded at run time (base64, hex, rot13,
	// zlib, marshal).
	KindDecode Kind = "decode"
	// KindUnboundedLoop is a loop that grows memory or forks without end,
	// or an allocation of gigabytes.
	KindUnboundedLoop Kind = "unbounded-loop"
	// KindWriteOutside is a write, delete or copy whose target is outside
	// the skill's workspace (the home directory, /, start-up files).
	KindWriteOutside Kind = "write-outside"
)

// Capability is one use of a capability on one line of a script.
type Capability struct {
	// Line is the 1-based line of the call.
	Line int
	// Kind is the capability.
	Kind Kind
	// Text is the call as written ("requests.get", "os.system",
	// "while True").
	Text string
}

// Capabilities lists the capabilities a script of lang uses, line by line,
// in the order of the file: the calls that reach the network, start a
// program or evaluate code, walk folders, decode constants, write outside
// the workspace, and the loops and allocations without bound. It reads the
// calls (after imports: sp.run is subprocess.run after import subprocess as
// sp), not strings or comments. It is stable: the lineage checks use it to
// judge the lines added to a known skill's script.
func Capabilities(lang Lang, src []byte) []Capability {
	return analyze(lang, src).caps
}

// isExecSink reports a call that runs its argument as code or a command
// (JavaScript has no exec function: a regular expression's exec is not one).
func isExecSink(r string, lang Lang) bool {
	switch r {
	case "eval", "exec", "compile", "os.system", "os.popen", "pty.spawn", "commands.getoutput",
		"Function", "vm.runInThisContext", "vm.runInNewContext", "vm.Script":
		return r != "exec" || lang == Python
	}
	for _, p := range []string{"subprocess.", "os.exec", "os.spawn", "child_process.", "shelljs.exec", "execa"} {
		if strings.HasPrefix(r, p) {
			return true
		}
	}
	return false
}

// isSend reports a call that sends its arguments over the network.
func isSend(r, written string) bool {
	switch r {
	case "requests.post", "requests.put", "requests.patch", "requests.request", "httpx.post", "httpx.put",
		"urllib.request.urlopen", "urlopen", "urllib.request.Request", "Request", "fetch", "axios", "axios.post", "axios.put",
		"https.request", "http.request", "http.client.HTTPSConnection.request":
		return true
	}
	for _, m := range []string{".post", ".put", ".patch", ".sendall", ".send", ".sendto", ".request"} {
		if strings.HasSuffix(written, m) && strings.Contains(written, ".") {
			return true
		}
	}
	return false
}

func isDelete(r string) bool {
	switch r {
	case "shutil.rmtree", "os.remove", "os.unlink", "os.rmdir", "os.removedirs", "fs.rmSync", "fs.rm", "fs.rmdirSync",
		"fs.rmdir", "fs.promises.rm", "fs.promises.rmdir", "rimraf", "rimraf.sync", "fs-extra.removeSync", "fs-extra.remove", "fs-extra.emptyDirSync":
		return true
	}
	return false
}

// writeTarget is which argument of a write call names the file written:
// 0 for the first, 1 for the second, -1 for the line as a whole (a method
// of a path: Path(…).write_text), -2 when r is not a write.
func writeTarget(r, written string) int {
	switch r {
	case "open", "io.open", "codecs.open", "os.open", "fs.writeFileSync", "fs.appendFileSync", "fs.writeFile", "fs.appendFile",
		"fs.createWriteStream", "fs.promises.writeFile", "fs.promises.appendFile", "os.symlink":
		return 0
	case "shutil.copy", "shutil.copyfile", "shutil.copy2", "shutil.move", "os.rename", "os.replace", "fs.copyFileSync", "fs.symlinkSync":
		return 1
	}
	for _, m := range []string{".write_text", ".write_bytes", ".symlink_to"} {
		if strings.HasSuffix(written, m) {
			return -1
		}
	}
	return -2
}

// call checks a call at t[i] against the sinks.
func (a *analysis) call(i int) {
	written, r, open, ok := a.callee(i)
	if !ok {
		return
	}
	t := a.toks
	end := a.close(open)
	line := t[i].Line
	args := splitArgs(t, open, end)
	cp := func(k Kind) {
		c := Capability{Line: line, Kind: k, Text: written}
		if n := len(a.caps); n == 0 || a.caps[n-1] != c {
			a.caps = append(a.caps, c)
		}
	}
	switch l := a.sourceOf(r, open, end); {
	case l&Decoded != 0:
		cp(KindDecode)
	case l&(Network|Socket) != 0:
		cp(KindNetwork)
	}
	if isWalk(r) || strings.HasSuffix(written, ".rglob") || strings.HasSuffix(written, ".iterdir") {
		cp(KindFileWalk)
	}
	al, src, srcLine := a.argsLabel(open, end)
	flow := func(kind string) {
		f := Flow{Kind: kind, Line: line, Sink: written, Source: src}
		if srcLine != line {
			f.SourceLine = srcLine
		}
		a.flows = append(a.flows, f)
	}
	switch {
	case isExecSink(r, a.lang):
		cp(KindProcess)
		switch {
		case al&Decoded != 0:
			flow(FlowDecodedExec)
		case al&Network != 0:
			flow(FlowDownloadExec)
		case al&Socket != 0 && r != "os.dup2":
			flow(FlowReverseShell)
		default:
			for j := open + 1; j < end; j++ {
				if t[j].Kind != String {
					continue
				}
				for p, dl := range a.downloads {
					if p != "" && strings.Contains(t[j].Text, p) {
						src, srcLine = p, dl
						flow(FlowDownloadExec)
						return
					}
				}
			}
		}
	case r == "os.dup2" && al&Socket != 0:
		if a.spawnsShell() {
			flow(FlowReverseShell)
		}
	case isSend(r, written):
		cp(KindNetwork)
		var sl Label
		for _, arg := range args {
			switch keyword(t, arg) {
			case "headers", "auth", "timeout", "method", "params":
				continue
			}
			l, s, ln := a.label(arg[0], arg[1])
			if l&(EnvAll|SecretFile|HomeFiles) != 0 && sl == 0 {
				src, srcLine = s, ln
			}
			sl |= l
		}
		if sl&(EnvAll|SecretFile|HomeFiles) != 0 {
			flow(FlowSecretSend)
		}
	case (strings.HasSuffix(written, ".write") || strings.HasSuffix(written, ".end")) &&
		a.vars[strings.SplitN(written, ".", 2)[0]].label&(Network|Socket) != 0:
		// the body of a request opened earlier: req = https.request(…); req.write(body)
		cp(KindNetwork)
		if al&(EnvAll|SecretFile|HomeFiles) != 0 {
			flow(FlowSecretSend)
		}
	case strings.HasSuffix(written, ".pipe"):
		// a socket piped to or from a process: node's reverse shell
		recv := strings.TrimSuffix(written, ".pipe")
		rl := a.vars[strings.SplitN(recv, ".", 2)[0]].label
		if (rl|al)&Socket != 0 && (rl|al)&Process != 0 {
			flow(FlowReverseShell)
		}
	case isDelete(r):
		if len(args) > 0 && a.isHomeRoot(args[0][0], args[0][1]) {
			cp(KindWriteOutside)
			flow(FlowDestructive)
		}
	default:
		wt := writeTarget(r, written)
		if wt == -2 {
			return
		}
		var tl Label
		switch {
		case wt >= 0 && wt < len(args):
			tl, _, _ = a.label(args[wt][0], args[wt][1])
		case wt == -1:
			from := i
			for from > 0 && t[from-1].Kind != Newline {
				from--
			}
			tl, _, _ = a.label(from, open)
		}
		if r == "open" || r == "io.open" || r == "codecs.open" {
			if !openWrites(t, args) {
				return
			}
		}
		if tl&(Persist|Home) != 0 {
			cp(KindWriteOutside)
		}
		if tl&Persist != 0 {
			flow(FlowPersistence)
		}
	}
}

// openWrites reports whether open's mode argument writes or appends.
func openWrites(t []Token, args [][2]int) bool {
	for k, arg := range args {
		if k == 0 {
			continue
		}
		from := arg[0]
		if kw := keyword(t, arg); kw == "mode" {
			from += 2
		} else if kw != "" || k != 1 {
			continue
		}
		if from < arg[1] && t[from].Kind == String {
			m := unquote(t[from].Text)
			return strings.ContainsAny(m, "wax+")
		}
	}
	return false
}

// spawnsShell reports whether the file starts a shell (pty.spawn, a
// subprocess or exec of sh, bash …): with a socket dup2'ed onto the
// standard streams, that is a reverse shell.
func (a *analysis) spawnsShell() bool {
	for _, tk := range a.toks {
		if tk.Kind != String {
			continue
		}
		switch strings.Trim(unquote(tk.Text), " ") {
		case "/bin/sh", "/bin/bash", "sh", "bash", "/bin/zsh", "cmd.exe", "powershell":
			return true
		}
	}
	return false
}

// loops finds loops without an end that grow memory or fork: while True (or
// while 1, while(true), for(;;)) whose body appends to a list, pushes to an
// array or forks, and holds no break, return, raise or exit.
func (a *analysis) loops() {
	t := a.toks
	for i := 0; i+1 < len(t); i++ {
		var from, to int
		switch {
		case a.lang == Python && t[i].Text == "while" && i+2 < len(t) && (t[i+1].Text == "True" || t[i+1].Text == "1") && t[i+2].Text == ":":
			from = i + 3
			col := t[i].Col
			to = from
			for to < len(t) && !(t[to].Kind != Newline && to > from && t[to-1].Kind == Newline && t[to].Col <= col) {
				to++
			}
		case a.lang == JavaScript && t[i].Text == "while" && i+3 < len(t) && t[i+1].Text == "(" && (t[i+2].Text == "true" || t[i+2].Text == "1") && t[i+3].Text == ")":
			from = i + 4
		case a.lang == JavaScript && t[i].Text == "for" && i+4 < len(t) && t[i+1].Text == "(" && t[i+2].Text == ";" && t[i+3].Text == ";" && t[i+4].Text == ")":
			from = i + 5
		default:
			continue
		}
		if a.lang == JavaScript {
			if from >= len(t) || t[from].Text != "{" {
				continue
			}
			to = a.close(from)
		}
		a.loopBody(t[i], from, to)
	}
}

// loopBody checks the body t[from:to] of an endless loop starting at head.
func (a *analysis) loopBody(head Token, from, to int) {
	t := a.toks
	grow, what := 0, ""
	for j := from; j < to && j < len(t); j++ {
		switch t[j].Text {
		case "break", "return", "raise", "throw", "exit", "_exit", "yield", "sleep", "accept", "recv", "read", "get", "wait", "input", "readline":
			return
		}
	}
	for j := from; j < to && j < len(t); j++ {
		if t[j].Kind != Name || j == 0 || t[j-1].Text != "." {
			continue
		}
		switch t[j].Text {
		case "append", "extend", "push":
			if j+1 < len(t) && t[j+1].Text == "(" && j >= 2 {
				list := t[j-2].Text
				end := a.close(j + 1)
				for k := j + 2; k < end; k++ {
					if t[k].Text == list || t[k].Text == "bytes" || t[k].Text == "bytearray" || t[k].Text == "*" || t[k].Text == "<<" || t[k].Text == "repeat" || t[k].Text == "alloc" {
						grow, what = t[j].Line, list+"."+t[j].Text
						break
					}
				}
			}
		case "fork":
			if t[j-2].Text == "os" {
				grow, what = t[j].Line, "os.fork"
			}
		}
		if grow != 0 {
			break
		}
	}
	if grow == 0 {
		return
	}
	text := "while True"
	if a.lang == JavaScript {
		text = head.Text + " loop"
	}
	a.caps = append(a.caps, Capability{Line: head.Line, Kind: KindUnboundedLoop, Text: text})
	a.flows = append(a.flows, Flow{Kind: FlowUnbounded, Line: grow, SourceLine: head.Line, Sink: what, Source: text})
}

// bigAlloc is the least size of an allocation counted as huge: 1 GiB.
const bigAlloc = 1 << 30

// allocations finds allocations of a gigabyte or more: b'x' * 10**10,
// bytearray(1 << 40), Buffer.alloc(2 ** 31), 'x'.repeat(1e10).
func (a *analysis) allocations() {
	t := a.toks
	for i := range t {
		v, ok := constValue(t, i)
		if !ok || v < bigAlloc {
			continue
		}
		huge := false
		if i >= 2 && t[i-1].Text == "*" && t[i-2].Kind == String {
			huge = true
		}
		if i >= 3 && t[i-1].Text == "(" {
			switch t[i-2].Text {
			case "bytearray", "bytes", "alloc", "allocUnsafe", "repeat", "Array", "zeros", "ones":
				huge = true
			}
		}
		if !huge {
			continue
		}
		a.caps = append(a.caps, Capability{Line: t[i].Line, Kind: KindUnboundedLoop, Text: "allocation"})
		a.flows = append(a.flows, Flow{Kind: FlowUnbounded, Line: t[i].Line, Sink: "allocation", Source: t[i].Text})
	}
}

// constValue evaluates the constant at t[i]: a number, N ** M or N << M.
func constValue(t []Token, i int) (float64, bool) {
	if t[i].Kind != Number {
		return 0, false
	}
	n, ok := number(t[i].Text)
	if !ok {
		return 0, false
	}
	if i+3 < len(t) && t[i+1].Text == "*" && t[i+2].Text == "*" && t[i+3].Kind == Number {
		m, ok := number(t[i+3].Text)
		return math.Pow(n, m), ok
	}
	if i+3 < len(t) && t[i+1].Text == "<" && t[i+2].Text == "<" && t[i+3].Kind == Number {
		m, ok := number(t[i+3].Text)
		return n * math.Pow(2, m), ok
	}
	return n, true
}

func number(s string) (float64, bool) {
	s = strings.ReplaceAll(strings.TrimRight(s, "nLljJ"), "_", "")
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, true
	}
	if v, err := strconv.ParseInt(s, 0, 64); err == nil {
		return float64(v), true
	}
	return 0, false
}
