package secscan

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/admission/secscan/decode"
)

// A script's string literals and long bare tokens that decode (package
// decode: base64, hex, \x/octal/\u escapes and printf's, ROT13 where the
// line names it; up to three layers) to text are read again by the pattern
// rules. A finding inside decoded data is reported at the literal's line
// and column, under the rule's own id and severity, with "decoded from
// base64: …" in its message and the decoded line in Finding.Normalized.
// Decoded data that is itself code that runs something (a #! line, a
// download, a process start, a shell) is SG507, critical: nothing honest
// hides a command line in base64. Data that decodes to binary (an image, a
// font, a digest) stops there and is never a finding.

// decodeLimits bound the decoding of one literal.
var decodeLimits = decode.Limits{Depth: 3, MaxBytes: 64 << 10, MinLen: 16}

// maxLiteralsPerFile bounds how many literals of one file are decoded.
const maxLiteralsPerFile = 2000

// literalRE finds quoted strings on one line (their contents are group 1,
// 2 or 3) and long bare tokens of the base64 and hex alphabets (group 4).
var literalRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|` + "`((?:[^`\\\\]|\\\\.)*)`" + `|([A-Za-z0-9+/_-]{24,}={0,2})`)
})

// runsRE is decoded text that runs something: a #! line, a download, a
// shell or interpreter given a program, a process start, eval/exec, a
// reverse shell.
var runsRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^#!|\b(?:curl|wget)\b[^\n]*(?:https?|ftp)://|\|\s*(?:sudo\s+)?(?:` + shells + `)\b|\b(?:sh|bash|zsh|dash|python[23]?|perl|ruby|node|pwsh|powershell)\s+-[ce]\b|\b(?:os\.system|os\.popen|subprocess\.\w+|child_process|execSync|spawnSync|Runtime\.getRuntime|exec|eval|system|popen|spawn)\s*\(|/dev/tcp/|\bnc\s+(?:-\w+\s+)*-e\b|\b(?:Invoke-Expression|Invoke-WebRequest|DownloadString|iex)\b|\brm\s+-rf\s+[~/])`)
})

// scanDecoded is the decoded reading of a script.
func scanDecoded(name string, data []byte, k kind, maxPerRule int) []Finding {
	if k != kindScript {
		return nil
	}
	var out []Finding
	count := map[string]int{}
	literals := 0
	lineNo := 0
	for rest := data; len(rest) > 0 && literals < maxLiteralsPerFile; {
		lineNo++
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		lim := decodeLimits
		lim.ROT13 = namesROT13(line)
		if !lim.ROT13 && !mayBeEncoded(line) {
			continue
		}
		for _, m := range literalRE().FindAllSubmatchIndex(line, -1) {
			at, end := -1, -1
			for g := 1; g <= 4; g++ {
				if m[2*g] >= 0 {
					at, end = m[2*g], m[2*g+1]
					break
				}
			}
			if at < 0 || !candidate(line[at:end], lim.ROT13) {
				continue
			}
			literals++
			layers := decode.Decode(string(line[at:end]), lim)
			if len(layers) == 0 {
				continue
			}
			found := decodedFindings(name, lineNo, line, at, end, layers, maxPerRule, count)
			out = append(out, found...)
		}
	}
	return out
}

// candidate reports whether a literal may be encoded: a backslash escape,
// or 16 characters and more of the base64 and hex alphabets alone, or any
// literal on a line that names ROT13. A sentence in quotes is not decoded.
func candidate(lit []byte, rot bool) bool {
	if len(lit) < 4 {
		return false
	}
	if rot || bytes.IndexByte(lit, '\\') >= 0 {
		return true
	}
	if len(lit) < decodeLimits.MinLen {
		return false
	}
	for _, c := range lit {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-' || c == '=') {
			return false
		}
	}
	return true
}

// namesROT13 reports whether line names ROT13 (codecs.decode(…, 'rot13'),
// 'rot_13', str.maketrans tables called ROT13): its literals are then
// also tried as ROT13.
func namesROT13(line []byte) bool {
	for _, w := range []string{"rot13", "rot_13", "ROT13", "rot-13"} {
		if bytes.Contains(line, []byte(w)) {
			return true
		}
	}
	return false
}

// mayBeEncoded reports whether line holds a run of 16 base64 or hex
// characters, or a backslash escape: the cheap test before the literals
// are looked for.
func mayBeEncoded(line []byte) bool {
	run := 0
	for i, c := range line {
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/', c == '_', c == '-':
			run++
			if run >= 16 {
				return true
			}
		case c == '\\' && i+1 < len(line) && (line[i+1] == 'x' || line[i+1] == 'u' || '0' <= line[i+1] && line[i+1] <= '7'):
			return true
		default:
			run = 0
		}
	}
	return false
}

// decodedFindings are the findings of the text layers decoded from the
// literal line[at:end]: SG507 when the innermost runs something, and every
// pattern rule's match in each layer, placed at the literal.
func decodedFindings(name string, lineNo int, line []byte, at, end int, layers []decode.Layer, maxPerRule int, count map[string]int) []Finding {
	var out []Finding
	seen := map[string]bool{}
	col := utf8.RuneCount(line[:at]) + 1
	ex := excerpt(line, at, end)
	add := func(r *Rule, sev Severity, msg, normalized string) {
		if seen[r.ID] || count[r.ID] >= maxPerRule {
			return
		}
		seen[r.ID] = true
		count[r.ID]++
		out = append(out, Finding{
			Rule: r.ID, Name: r.Name, Severity: sev, File: name, Line: lineNo, Column: col,
			Excerpt: ex, Message: msg, Why: r.Why, Fix: r.Fix, Normalized: normalized,
		})
	}
	var chain []string
	for _, l := range layers {
		chain = append(chain, string(l.Encoding))
		how := "decoded from " + strings.Join(chain, ", then ")
		text := []byte(l.Text)
		if loc := runsRE().FindIndex(text); loc != nil {
			r := RuleByID("SG507")
			add(r, r.Severity, fmt.Sprintf("%s (%s)", r.message, how), decodedLine(text, loc[0]))
		}
		for _, f := range scanLines(name, text, kindScript, maxPerRule, true) {
			r := RuleByID(f.Rule)
			if r == nil || r.runes != nil {
				continue
			}
			add(r, f.Severity, fmt.Sprintf("%s (%s)", f.Message, how), f.Excerpt)
		}
	}
	return out
}

// decodedLine is the line of decoded text holding byte at, as an excerpt.
func decodedLine(text []byte, at int) string {
	start := bytes.LastIndexByte(text[:at], '\n') + 1
	end := len(text)
	if i := bytes.IndexByte(text[at:], '\n'); i >= 0 {
		end = at + i
	}
	return excerpt(text[start:end], at-start, at-start)
}
