package codescan

import (
	"strings"
)

// AnalyzeInline reads the program a shell script gives an interpreter
// inline (python3 -c '…', node -e '…', perl -e '…', ruby -e '…', or a
// here-document it reads as its program; shellscan.Inline): Python and
// JavaScript through Analyze, Perl and Ruby through the few forms of
// inlinePerlRuby, PowerShell through AnalyzePowerShell. interp is the interpreter's command name; the flows'
// lines are lines of src. Another interpreter (php) has none.
func AnalyzeInline(interp string, src []byte) []Flow {
	interp = strings.TrimSuffix(interp, ".exe")
	switch {
	case strings.HasPrefix(interp, "python") || strings.HasPrefix(interp, "pypy"):
		return Analyze(Python, src)
	case interp == "node" || interp == "nodejs" || interp == "deno" || interp == "bun":
		return Analyze(JavaScript, src)
	case interp == "perl" || interp == "ruby":
		return inlinePerlRuby(string(src))
	case interp == "pwsh" || interp == "powershell":
		return AnalyzePowerShell(src)
	}
	return nil
}

// The forms of Perl and Ruby one-liners the code rules read. They are not a
// tokenizer's: a one-liner is short, and these are the forms of the public
// reverse-shell and download-and-run lists. A reverse shell is a socket
// (Perl's socket()/IO::Socket, Ruby's TCPSocket/Socket.tcp) and, in the
// same program, a shell run or the socket made the program's input and
// output (open(STDIN,">&S"), fdopen, exec, system, IO.popen, spawn, /bin/sh).
// A download run is an HTTP get (LWP, HTTP::Tiny, open-uri, Net::HTTP,
// URI.open) and an eval, system, exec or backquotes of the program.
var (
	prSocket   = lazyRE(`\bsocket\s*\(|IO::Socket|\bTCPSocket\b|\bSocket\.tcp\b|\bUNIXSocket\b`)
	prShellRun = lazyRE(`/bin/(?:ba|z|da)?sh\b|\bopen\s*\(\s*STD(?:IN|OUT|ERR)\s*,\s*["']?[+<>]*&|\bfdopen\b|\bexec\b|\bsystem\b|\bIO\.popen\b|\bspawn\b|` + "`")
	prDownload = lazyRE(`LWP::(?:Simple|UserAgent)|HTTP::Tiny|\bopen-uri\b|\bNet::HTTP\b|\bURI\.open\b|\bURI\.parse\b|\bgetstore\s*\(|\bget\s*\(\s*["']https?://|\bopen\s*\(\s*["']https?://`)
	prEval     = lazyRE(`\beval\b|\binstance_eval\b|\bsystem\b|\bexec\b|\bIO\.popen\b|%x[({\[]|` + "`")
)

// inlinePerlRuby is the flows of a Perl or Ruby one-liner: a reverse shell
// or a download run, at the line of the shell run or eval.
func inlinePerlRuby(src string) []Flow {
	flow := func(kind string, src string, m, r []int) []Flow {
		f := Flow{Kind: kind, Line: inlineLine(src, r[0]), Sink: callName(src[r[0]:r[1]]), Source: callName(src[m[0]:m[1]])}
		if l := inlineLine(src, m[0]); l != f.Line {
			f.SourceLine = l
		}
		return []Flow{f}
	}
	if m := prSocket().FindStringIndex(src); m != nil {
		if r := prShellRun().FindStringIndex(src); r != nil {
			return flow(FlowReverseShell, src, m, r)
		}
	}
	if m := prDownload().FindStringIndex(src); m != nil {
		if r := prEval().FindStringIndex(src); r != nil {
			return flow(FlowDownloadExec, src, m, r)
		}
	}
	return nil
}

// callName is a matched form without its arguments: "socket(" is
// "socket", `get("https://` is "get".
func callName(m string) string {
	if i := strings.IndexByte(m, '('); i > 0 {
		m = m[:i]
	}
	return strings.TrimSpace(m)
}

// inlineLine is the 1-based line of byte offset at in src.
func inlineLine(src string, at int) int {
	return strings.Count(src[:at], "\n") + 1
}
