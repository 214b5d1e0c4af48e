package lineage

import (
	"bytes"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Capability kinds: what a line of a script does that a changed line of a
// known skill must not do unnoticed.
const (
	Network   = "network call"
	Process   = "process start"
	FileWalk  = "file walk"
	Decode    = "decode"
	Unbounded = "unbounded loop"
	// WriteOutside is a write to a file outside the skill's workspace (a
	// shell start-up file, a cron table, a git hook).
	WriteOutside = "write outside the workspace"
)

// Capability is one capability found on a line of a script.
type Capability struct {
	// Line is 1-based; Kind one of the kinds above; What names the call
	// (curl, subprocess.run, …).
	Line int
	Kind string
	What string
}

// CapabilityFunc finds the capabilities of src, a script in lang
// ("shell", "python", "javascript"). It is the hook a code analyser plugs
// into layer 4's stricter rule for changed lines (SG950): when it is nil,
// or returns nil for a language, Capabilities' fallbacks are used.
type CapabilityFunc func(lang string, src []byte) []Capability

// Language returns the script language of a file by its extension or
// shebang, or "" when it is not a script the changed-line rule reads.
func Language(name string, src []byte) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".sh", ".bash", ".zsh", ".ksh":
		return "shell"
	case ".py", ".pyw":
		return "python"
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx":
		return "javascript"
	}
	first, _, _ := bytes.Cut(src, []byte("\n"))
	if bytes.HasPrefix(first, []byte("#!")) {
		switch s := string(first); {
		case strings.Contains(s, "python"):
			return "python"
		case strings.Contains(s, "node") || strings.Contains(s, "deno") || strings.Contains(s, "bun"):
			return "javascript"
		case strings.Contains(s, "sh"):
			return "shell"
		}
	}
	return ""
}

// Capabilities finds src's capabilities with hook when it is set and
// answers, else with the built-in fallbacks: the shell parser for shell,
// a line reader that skips comments for Python and JavaScript.
func Capabilities(hook CapabilityFunc, lang string, src []byte) []Capability {
	if hook != nil {
		if c := hook(lang, src); c != nil {
			return c
		}
	}
	if lang == "shell" {
		if c, ok := shellCapabilities(src); ok {
			return c
		}
	}
	return plainCapabilities(lang, src)
}

// shellCommands maps a command name to its capability kind.
var shellCommands = map[string]string{
	"curl": Network, "wget": Network, "nc": Network, "ncat": Network, "netcat": Network, "socat": Network,
	"scp": Network, "rsync": Network, "ssh": Network, "ftp": Network, "telnet": Network,
	"sh": Process, "bash": Process, "zsh": Process, "dash": Process, "eval": Process, "exec": Process,
	"nohup": Process, "setsid": Process, "python": Process, "python3": Process, "node": Process, "perl": Process,
	"find": FileWalk, "tar": FileWalk, "zip": FileWalk,
	"base64": Decode, "xxd": Decode, "openssl": Decode,
}

// shellCapabilities reads src with the shell parser: every command named
// in shellCommands, and every while/until loop whose condition is true or
// ':' (a loop without bound). It reports false when src does not parse.
func shellCapabilities(src []byte) ([]Capability, bool) {
	f, err := syntax.NewParser(syntax.KeepComments(false)).Parse(bytes.NewReader(src), "")
	if err != nil {
		return nil, false
	}
	var out []Capability
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			name := path.Base(n.Args[0].Lit())
			if kind, ok := shellCommands[name]; ok {
				out = append(out, Capability{Line: int(n.Pos().Line()), Kind: kind, What: name})
			}
		case *syntax.WhileClause:
			if len(n.Cond) == 1 {
				if c, ok := n.Cond[0].Cmd.(*syntax.CallExpr); ok && len(c.Args) == 1 {
					if w := c.Args[0].Lit(); w == "true" || w == ":" {
						out = append(out, Capability{Line: int(n.Pos().Line()), Kind: Unbounded, What: "while " + w})
					}
				}
			}
		}
		return true
	})
	return out, true
}

// plainPatterns are the fallback's calls per kind for Python and
// JavaScript, matched on a line outside a comment: names of the standard
// and common libraries, not a data-flow analysis (that is the hook's).
var plainPatterns = []struct {
	kind string
	re   *regexp.Regexp
}{
	{Network, regexp.MustCompile(`\b(?:urllib\.request|urlopen|urlretrieve|requests\.(?:get|post|put|patch|request|Session)|httpx\.|http\.client|aiohttp|socket\.(?:socket|create_connection)|fetch\(|XMLHttpRequest|https?\.(?:get|request)\(|axios\b)`)},
	{Process, regexp.MustCompile(`\b(?:os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|subprocess\.\w+|pty\.spawn|child_process|execSync|spawnSync|execFile|exec\(|eval\()`)},
	{FileWalk, regexp.MustCompile(`\b(?:os\.walk|os\.scandir|os\.listdir|glob\.glob|\.rglob\(|\.glob\(|\.iterdir\(|readdirSync|readdir\(|expanduser\()`)},
	{Decode, regexp.MustCompile(`\b(?:b64decode|b32decode|a85decode|fromhex|codecs\.decode|unhexlify|atob\(|Buffer\.from\([^)]*['"](?:base64|hex)['"])`)},
	{Unbounded, regexp.MustCompile(`\bwhile\s*\(?\s*(?:True|true|1)\s*\)?\s*[:{]|\bfor\s*\(\s*;\s*;\s*\)|\bitertools\.count\(`)},
}

// plainCapabilities is the line fallback for Python and JavaScript.
func plainCapabilities(lang string, src []byte) []Capability {
	if lang != "python" && lang != "javascript" {
		return nil
	}
	var out []Capability
	n := 0
	for line := range bytes.Lines(src) {
		n++
		t := strings.TrimSpace(string(line))
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "*") {
			continue
		}
		for _, p := range plainPatterns {
			if m := p.re.FindString(t); m != "" {
				out = append(out, Capability{Line: n, Kind: p.kind, What: strings.TrimRight(m, "(")})
			}
		}
	}
	return out
}
