package shellscan

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// downloader describes a download command's options: which short options
// take a value (so that clustered flags such as -sSLo f and -qO- are read
// right), which options name the output file, which ones save under the
// URL's last path segment, and whether it saves to that name by default.
type downloader struct {
	valued      string          // short options that take a value
	outShort    byte            // the short option naming the output file
	outLong     string          // the long option naming it
	remoteShort byte            // the short option that saves under the URL's name (curl -O)
	remoteLong  string          // its long form
	byDefault   bool            // saves under the URL's name without an option (wget, fetch)
	longValued  map[string]bool // long options that take a separate value
}

// downloaders are the commands that fetch a URL.
var downloaders = map[string]downloader{
	"curl": {
		valued: "oHdXuAebcDEFKTwrYyzCUPQtmx", outShort: 'o', outLong: "--output",
		remoteShort: 'O', remoteLong: "--remote-name",
		longValued: map[string]bool{"--header": true, "--data": true, "--request": true, "--user": true, "--user-agent": true, "--max-time": true, "--retry": true, "--connect-timeout": true},
	},
	"wget": {
		valued: "OoaPtTUeiBwQlDARIX", outShort: 'O', outLong: "--output-document", byDefault: true,
		longValued: map[string]bool{"--header": true, "--user-agent": true, "--tries": true, "--timeout": true, "--directory-prefix": true},
	},
	"fetch":  {valued: "oBSTNi", outShort: 'o', outLong: "--output", byDefault: true},
	"aria2c": {valued: "odsxkj", outShort: 'o', outLong: "--out", byDefault: true},
}

// output returns the file a download command writes, as written in the
// script: its output option, its stdout redirection, or the URL's last path
// segment where the command saves there. It is "" when the download goes to
// standard output (curl URL, wget -O- URL) or nothing says where.
func (d downloader) output(args []*syntax.Word, redirs []*syntax.Redirect) string {
	out, remote, url := "", false, ""
	for i := 0; i < len(args); i++ {
		lit := wordText(args[i])
		switch {
		case d.outLong != "" && lit == d.outLong && i+1 < len(args):
			out = wordText(args[i+1])
			i++
		case d.outLong != "" && strings.HasPrefix(lit, d.outLong+"="):
			out = strings.TrimPrefix(lit, d.outLong+"=")
		case d.remoteLong != "" && lit == d.remoteLong:
			remote = true
		case d.longValued[lit]:
			i++
		case strings.HasPrefix(lit, "--"):
		case strings.HasPrefix(lit, "-") && len(lit) > 1:
			for k := 1; k < len(lit); k++ {
				c := lit[k]
				if c == d.remoteShort && c != 0 {
					remote = true
				}
				if !strings.ContainsRune(d.valued, rune(c)) {
					continue
				}
				value := lit[k+1:]
				if value == "" && i+1 < len(args) {
					i++
					value = wordText(args[i])
				}
				if c == d.outShort {
					out = value
				}
				break
			}
		default:
			if url == "" {
				url = lit
			}
		}
	}
	for _, r := range redirs {
		if (r.Op == syntax.RdrOut || r.Op == syntax.RdrClob || r.Op == syntax.RdrAll) && (r.N == nil || r.N.Value == "1") {
			out = wordText(r.Word)
		}
	}
	switch {
	case out == "-" || out == "/dev/stdout":
		return ""
	case out != "":
		return out
	case remote || d.byDefault:
		return urlName(url)
	}
	return ""
}

// urlName is the last path segment of a URL, without its query: the name
// curl -O and wget save a download under.
func urlName(url string) string {
	url, _, _ = strings.Cut(url, "?")
	url, _, _ = strings.Cut(url, "#")
	_, rest, ok := strings.Cut(url, "://")
	if !ok {
		rest = url
	}
	_, p, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	return p
}
