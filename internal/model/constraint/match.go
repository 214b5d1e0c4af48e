package constraint

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// MaxPathBytes and MaxPathSegments bound a path argument; longer paths are
// violations.
const (
	MaxPathBytes    = 4096
	MaxPathSegments = 128
)

// gseg is one segment of a compiled glob.
type gseg struct {
	pat    string // the segment, '*' a wildcard within it
	double bool   // "**": any number of segments
}

// glob is a compiled path glob.
type glob struct {
	text string
	segs []gseg
}

func compileGlob(g string) (glob, error) {
	switch {
	case g == "":
		return glob{}, errors.New("empty; write an absolute glob like /srv/data/**")
	case len(g) > MaxEntryBytes:
		return glob{}, errors.New("longer than 1024 bytes")
	case g[0] != '/':
		return glob{}, errors.New("not absolute; globs start with '/', like /srv/data/**")
	case !utf8.ValidString(g) || strings.IndexByte(g, 0) >= 0:
		return glob{}, errors.New("must be UTF-8 text without NUL bytes")
	case strings.ContainsAny(g, "?[]{}\\"):
		return glob{}, errors.New("only * (within a segment) and ** (any depth) are wildcards; ?, [ ], { } and \\ are not supported")
	case !cleanGlob(g):
		return glob{}, errors.New("not in cleaned form (no '//', '.', '..' or trailing '/'); write it like /srv/data/**")
	}
	out := glob{text: g}
	if g == "/" {
		return out, nil
	}
	stars := 0
	for _, s := range strings.Split(g[1:], "/") {
		if s == "**" {
			stars++
			if n := len(out.segs); n > 0 && out.segs[n-1].double {
				continue // "**/**" is "**"
			}
			out.segs = append(out.segs, gseg{double: true})
			continue
		}
		if strings.Contains(s, "**") {
			return glob{}, errors.New("\"**\" must be a whole segment (/a/**/b), not part of one")
		}
		out.segs = append(out.segs, gseg{pat: s})
	}
	if stars > MaxGlobStars {
		return glob{}, errors.New("more than 4 \"**\" segments")
	}
	if len(out.segs) > MaxGlobSegments {
		return glob{}, errors.New("more than 64 segments")
	}
	return out, nil
}

// match reports whether the cleaned absolute path p matches g. It
// allocates nothing.
func (g *glob) match(p string) bool {
	var starts [MaxPathSegments + 1]uint16
	n := splitSegments(p, &starts)
	if n < 0 {
		return false
	}
	seg := func(i int) string {
		end := len(p)
		if i+1 < n {
			end = int(starts[i+1]) - 1
		}
		return p[starts[i]:end]
	}
	return matchSegs(g.segs, n, func(gs gseg, i int) bool { return !gs.double && wildcard(gs.pat, seg(i)) })
}

// splitSegments records the start offset of each segment of the absolute
// path p and returns their number, or -1 when there are too many.
func splitSegments(p string, starts *[MaxPathSegments + 1]uint16) int {
	if p == "/" {
		return 0
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			if n == MaxPathSegments {
				return -1
			}
			starts[n] = uint16(i + 1)
			n++
		}
	}
	return n
}

// matchSegs is wildcard matching over segments: "**" matches any run of
// segments, and match(g, i) matches one glob segment against segment i. It
// backtracks only to the last "**", so it runs in O(len(segs) × n).
func matchSegs(segs []gseg, n int, match func(gseg, int) bool) bool {
	gi, pi := 0, 0
	starG, starP := -1, 0
	for pi < n {
		switch {
		case gi < len(segs) && segs[gi].double:
			starG, starP = gi, pi
			gi++
		case gi < len(segs) && match(segs[gi], pi):
			gi++
			pi++
		case starG >= 0:
			starP++
			pi, gi = starP, starG+1
		default:
			return false
		}
	}
	for gi < len(segs) && segs[gi].double {
		gi++
	}
	return gi == len(segs)
}

// wildcard reports whether s matches pattern, where '*' matches any run of
// bytes and every other byte matches itself. O(len(pattern) × len(s)), no
// allocation.
func wildcard(pattern, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(pattern) && pattern[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(pattern) && pattern[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			mark++
			pi, si = star+1, mark
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}

// isCleanAbs reports whether p is absolute and already in path.Clean form.
func isCleanAbs(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	if p == "/" {
		return true
	}
	if p[len(p)-1] == '/' {
		return false
	}
	segStart := 1
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			seg := p[segStart:i]
			if seg == "" || seg == "." || seg == ".." {
				return false
			}
			segStart = i + 1
		}
	}
	return true
}

// specialSchemes are the schemes whose URLs browsers and fetch libraries
// parse with a host even without "//" ("http:example.com").
var specialSchemes = [...]string{"http", "https", "ws", "wss", "ftp"}

// urlHost extracts the host of an absolute URL the way WHATWG URL parsers
// do. isURL is false when s is not an absolute URL with an authority; when
// it is, problem is non-empty if the host cannot be checked safely.
// It allocates nothing.
func urlHost(s string) (host string, isURL bool, problem string) {
	s = trimControlSpace(s)
	// scheme
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			i++
			continue
		}
		break
	}
	if i == 0 || i >= len(s) || s[i] != ':' {
		return "", false, ""
	}
	scheme, rest := s[:i], s[i+1:]
	special := false
	for _, sp := range specialSchemes {
		if equalFoldASCII(scheme, sp) { // the scheme is ASCII (above)
			special = true
		}
	}
	if special {
		for rest != "" && (rest[0] == '/' || rest[0] == '\\') {
			rest = rest[1:]
		}
	} else {
		if !strings.HasPrefix(rest, "//") {
			return "", false, ""
		}
		rest = rest[2:]
	}
	for j := 0; j < len(rest); j++ {
		if c := rest[j]; c == '/' || c == '\\' || c == '?' || c == '#' {
			rest = rest[:j]
			break
		}
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	if strings.HasPrefix(rest, "[") {
		close := strings.IndexByte(rest, ']')
		if close < 0 {
			return "", true, "has an unterminated IPv6 address"
		}
		rest = rest[1:close]
	} else if c := strings.IndexByte(rest, ':'); c >= 0 {
		rest = rest[:c]
	}
	rest = strings.TrimSuffix(rest, ".")
	if rest == "" {
		if special {
			return "", true, "has no host"
		}
		return "", false, "" // file:///etc/passwd and the like: no host to check
	}
	for j := 0; j < len(rest); j++ {
		switch c := rest[j]; {
		case c == '%':
			return "", true, "has a percent-encoded host"
		case c >= utf8.RuneSelf:
			return "", true, "has a host that is not ASCII (write it in punycode, xn--…)"
		case c <= ' ' || c == 0x7f:
			return "", true, "has spaces or control characters in its host"
		}
	}
	return rest, true, ""
}

// hasTabOrNewline reports whether s contains a byte that URL parsers
// silently delete.
func hasTabOrNewline(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\t' || c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}

// trimControlSpace removes the leading and trailing bytes up to ' ' (C0
// controls and space), as URL parsers do. No byte of a multi-byte UTF-8
// sequence is in that range, so this is strings.TrimFunc with r <= ' '.
func trimControlSpace(s string) string {
	for s != "" && s[0] <= ' ' {
		s = s[1:]
	}
	for s != "" && s[len(s)-1] <= ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// equalFoldASCII reports whether the ASCII strings a and b are equal
// ignoring case.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// stripTabNewline removes tab, CR and LF, as URL parsers do.
func stripTabNewline(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
}

// MatchWildcard reports whether s matches pattern, where '*' matches any run
// of characters (including '/') and every other character matches itself.
// It is the matcher of argValues, exported for other patterns of the same
// language (grant principals and capabilities).
func MatchWildcard(pattern, s string) bool { return wildcard(pattern, s) }
