package codescan

import (
	"strings"
)

// AnalyzePowerShell reads a PowerShell script (a .ps1 file, a file pwsh or
// powershell runs, or a program given to them inline) line by line for the
// forms of the public download-and-run and reverse-shell lists. It is not a
// tokenizer: a line's comment (# to its end, outside quotes) and <# … #>
// blocks are skipped, names are matched case-insensitively, and a variable
// assigned a download or a decoded constant carries it to the lines after:
//
//   - a download (Invoke-WebRequest/iwr, Invoke-RestMethod/irm,
//     Net.WebClient's DownloadString/DownloadData, HttpClient) given to
//     Invoke-Expression/iex, [scriptblock]::Create or & on its line or
//     through a variable: FlowDownloadExec;
//   - a file saved by -OutFile or DownloadFile and then run by
//     Start-Process, &, ., Invoke-Item or cmd /c: FlowDownloadExec;
//   - [Convert]::FromBase64String decoded into iex: FlowDecodedExec;
//   - a Net.Sockets.TCPClient whose stream is read and written while the
//     script runs iex or a shell: FlowReverseShell, at the iex.
func AnalyzePowerShell(src []byte) []Flow {
	var out []Flow
	tainted := map[string]psTaint{} // variable (lower case, with $) -> what it holds
	saved := map[string]int{}       // file as written -> line of the download that saved it
	tcp, stream := 0, false
	inBlock := false
	for i, raw := range strings.Split(string(src), "\n") {
		n := i + 1
		line := raw
		if inBlock {
			j := strings.Index(line, "#>")
			if j < 0 {
				continue
			}
			line, inBlock = line[j+2:], false
		}
		if j := strings.Index(line, "<#"); j >= 0 {
			if k := strings.Index(line[j:], "#>"); k >= 0 {
				line = line[:j] + line[j+k+2:]
			} else {
				line, inBlock = line[:j], true
			}
		}
		line = psStripComment(line)
		if strings.TrimSpace(line) == "" {
			continue
		}
		low := strings.ToLower(line)
		// what the line holds: a download, a decoded constant, a tainted variable
		held, from := psTaint{}, 0
		if loc := psDownloadRE().FindStringIndex(low); loc != nil {
			held, from = psTaint{kind: FlowDownloadExec, src: psOrig(line, low, loc), line: n}, n
		} else if psDecodeRE().MatchString(low) {
			held, from = psTaint{kind: FlowDecodedExec, src: "FromBase64String", line: n}, n
		}
		for _, v := range psVarRE().FindAllString(low, -1) {
			if t, ok := tainted[v]; ok && held.kind == "" {
				held, from = t, t.line
			}
		}
		if m := psAssignRE().FindStringSubmatch(low); m != nil {
			if held.kind != "" {
				tainted[m[1]] = held
			} else {
				delete(tainted, m[1])
			}
		}
		if m := psOutFileRE().FindStringSubmatch(line); m != nil && psDownloadRE().MatchString(low) {
			saved[psUnquote(m[1])] = n
		}
		if m := psDownloadFileRE().FindStringSubmatch(line); m != nil {
			saved[psUnquote(m[1])] = n
		}
		if strings.Contains(low, "net.sockets.tcpclient") {
			tcp = n
		}
		if strings.Contains(low, "getstream") {
			stream = true
		}
		sink := ""
		if loc := psSinkRE().FindStringIndex(low); loc != nil {
			sink = strings.TrimRight(strings.TrimLeft(psOrig(line, low, loc), " \t;|("), " \t(")
		}
		switch {
		case sink != "" && held.kind != "":
			f := Flow{Kind: held.kind, Line: n, Sink: sink, Source: held.src}
			if from != n {
				f.SourceLine = from
			}
			out = append(out, f)
		case sink != "" && tcp != 0 && stream:
			out = append(out, Flow{Kind: FlowReverseShell, Line: n, SourceLine: tcp, Sink: sink, Source: "Net.Sockets.TCPClient"})
		default:
			if m := psRunRE().FindStringSubmatch(line); m != nil {
				if at, ok := saved[psUnquote(m[1])]; ok && at != n {
					out = append(out, Flow{Kind: FlowDownloadExec, Line: n, SourceLine: at, Sink: strings.TrimSpace(strings.Fields(m[0])[0]), Source: "-OutFile"})
				}
			}
		}
		if len(out) >= 32 {
			break
		}
	}
	return out
}

// psTaint is what a PowerShell variable holds: a download or a decoded
// constant (its flow kind), its source and line.
type psTaint struct {
	kind, src string
	line      int
}

var (
	psDownloadRE     = lazyRE(`\b(?:invoke-webrequest|iwr|invoke-restmethod|irm|downloadstring|downloaddata|getstringasync|getbytearrayasync|start-bitstransfer)\b|net\.webclient`)
	psDecodeRE       = lazyRE(`frombase64string\s*\(`)
	psVarRE          = lazyRE(`\$[a-z_][a-z0-9_]*\b`)
	psAssignRE       = lazyRE(`^\s*(\$[a-z_][a-z0-9_]*)\s*=[^=]`)
	psSinkRE         = lazyRE(`\b(?:invoke-expression|iex)\b|\[scriptblock\]::create\s*\(|(?:^|[\s;|(])&\s*\(|\binvoke-command\b[^\n]*-scriptblock`)
	psOutFileRE      = lazyRE(`(?i)-OutFile\s+("[^"]+"|'[^']+'|[^\s;|)]+)`)
	psDownloadFileRE = lazyRE(`(?i)\.DownloadFile\s*\(\s*[^,]+,\s*("[^"]+"|'[^']+'|[^\s;|)]+)\s*\)`)
	psRunRE          = lazyRE(`(?i)(?:\bStart-Process\s+(?:-FilePath\s+)?|(?:^|[;{]\s*)[&.]\s+|\bInvoke-Item\s+|\bcmd(?:\.exe)?\s+/c\s+|\bsaps\s+|\bstart\s+)("[^"]+"|'[^']+'|[^\s;|)]+)`)
)

// psOrig is the text at loc of low (line lower-cased) as line writes it.
func psOrig(line, low string, loc []int) string {
	if len(line) == len(low) {
		return line[loc[0]:loc[1]]
	}
	return low[loc[0]:loc[1]]
}

// psStripComment removes a line's # comment outside quotes.
func psStripComment(line string) string {
	var q byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q != 0:
			switch c {
			case q:
				q = 0
			case '`':
				i++
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#':
			return line[:i]
		}
	}
	return line
}

// psUnquote is a path as written without its quotes.
func psUnquote(s string) string {
	return strings.ToLower(strings.Trim(s, `"'`))
}
