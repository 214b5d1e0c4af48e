package constraint

import (
	"encoding/json"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
)

// MaxDepth bounds how deep Check looks into nested arguments for URLs; a
// deeper value is a violation when URLs are being checked.
const MaxDepth = 32

// MaxViolations bounds the violations one Check reports.
const MaxViolations = 16

// The constraint names a [Violation] carries.
const (
	KindDomain   = "allowedDomains"
	KindPath     = "pathGlobs"
	KindArgValue = "argValues"
)

// Violation is one argument that breaks a constraint.
type Violation struct {
	// Constraint is the field that was broken: "allowedDomains",
	// "pathGlobs" or "argValues".
	Constraint string `json:"constraint"`
	// Arg is where the value is: "url", "paths[2]", "items[0].href".
	Arg string `json:"arg"`
	// Message says what is wrong, quoting the offending value (shortened).
	Message string `json:"message"`
}

// String renders v as "arg: message (constraint)".
func (v Violation) String() string { return v.Arg + ": " + v.Message + " (" + v.Constraint + ")" }

// Compiled is a constraint set ready for [Compiled.Check]. It is immutable
// and safe for concurrent use.
type Compiled struct {
	set Set

	domains  bool // allowedDomains present
	exact    map[string]struct{}
	suffixes []string // ".example.com" for "*.example.com"
	ips      []netip.Addr
	urlAny   bool
	urlArgs  []string

	paths    bool // pathGlobs present
	globs    []glob
	pathArgs []string

	argValues []argRule
	rate      Rate
}

type argRule struct {
	name     string
	patterns []string
}

// Compile validates s and compiles it. Errors wrap [ErrInvalid].
func (s Set) Compile() (*Compiled, error) {
	n, err := s.normalize()
	if err != nil {
		return nil, err
	}
	c := &Compiled{set: n}
	if n.AllowedDomains != nil {
		c.domains = true
		c.exact = map[string]struct{}{}
		for _, d := range n.AllowedDomains {
			switch {
			case strings.HasPrefix(d, "*."):
				c.suffixes = append(c.suffixes, d[1:])
			default:
				if ip, err := netip.ParseAddr(d); err == nil {
					c.ips = append(c.ips, ip)
				} else {
					c.exact[d] = struct{}{}
				}
			}
		}
		c.urlAny = n.URLArgs == nil || slices.Contains(n.URLArgs, AnyURLArg)
		for _, a := range n.URLArgs {
			if a != AnyURLArg {
				c.urlArgs = append(c.urlArgs, a)
			}
		}
	}
	if n.PathGlobs != nil {
		c.paths = true
		for _, g := range n.PathGlobs {
			cg, _ := compileGlob(g) // validated by normalize
			c.globs = append(c.globs, cg)
		}
		c.pathArgs = n.PathArgs
		if c.pathArgs == nil {
			c.pathArgs = DefaultPathArgs
		}
	}
	for _, name := range sortedKeys(n.ArgValues) {
		c.argValues = append(c.argValues, argRule{name, n.ArgValues[name]})
	}
	if n.RateLimit != "" {
		c.rate, _ = ParseRate(n.RateLimit)
	}
	return c, nil
}

// MustCompile is [Set.Compile] for sets written in code; it panics on an
// invalid set.
func MustCompile(s Set) *Compiled {
	c, err := s.Compile()
	if err != nil {
		panic(err)
	}
	return c
}

// Set returns the normalized set c was compiled from.
func (c *Compiled) Set() Set { return c.set }

// Rate returns the set's rate limit; the zero Rate means none.
func (c *Compiled) Rate() Rate {
	if c == nil {
		return Rate{}
	}
	return c.rate
}

// Check returns the arguments that break c, sorted by argument, at most
// [MaxViolations]; nil means the arguments pass. A nil *Compiled passes
// everything. Check allocates nothing when the arguments pass. Argument
// values are what encoding/json decodes into any (string, float64, bool,
// nil, []any, map[string]any), plus json.Number, []string and Go integers.
func (c *Compiled) Check(args map[string]any) []Violation {
	if c == nil || c.pass(args) {
		return nil
	}
	return c.violations(args)
}

// violations lists what breaks c, in Check's order.
func (c *Compiled) violations(args map[string]any) []Violation {
	var out []Violation
	if c.domains {
		if c.urlAny {
			for k, v := range args {
				if !c.urlsOK(v, 0) {
					out = c.urlViolations(out, k, v)
				}
			}
		}
		for _, name := range c.urlArgs {
			v, ok := args[name]
			if !ok {
				continue
			}
			s, isStr := v.(string)
			if !isStr {
				out = appendV(out, KindDomain, name, "must be a URL string, got "+typeName(v))
				continue
			}
			if msg := c.checkURL(s, true); msg != "" {
				out = appendV(out, KindDomain, name, msg)
			}
		}
	}
	if c.paths {
		for _, name := range c.pathArgs {
			v, ok := args[name]
			if !ok {
				continue
			}
			switch v := v.(type) {
			case string:
				if msg := c.checkPath(v); msg != "" {
					out = appendV(out, KindPath, name, msg)
				}
			case []any:
				for i, e := range v {
					var msg string
					if s, isStr := e.(string); isStr {
						msg = c.checkPath(s)
					} else {
						msg = "must be a path string, got " + typeName(e)
					}
					if msg != "" {
						out = appendV(out, KindPath, name+"["+strconv.Itoa(i)+"]", msg)
					}
				}
			case []string:
				for i, s := range v {
					if msg := c.checkPath(s); msg != "" {
						out = appendV(out, KindPath, name+"["+strconv.Itoa(i)+"]", msg)
					}
				}
			default:
				out = appendV(out, KindPath, name, "must be a path string or an array of them, got "+typeName(v))
			}
		}
	}
	for _, r := range c.argValues {
		v, ok := args[r.name]
		if !ok {
			out = appendV(out, KindArgValue, r.name, "is required: this capability is allowed only with "+r.name+" set to "+listQuoted(r.patterns))
			continue
		}
		var buf [32]byte
		text, ok := scalarText(v, buf[:0])
		if !ok {
			out = appendV(out, KindArgValue, r.name, "must be a string, number or boolean, got "+typeName(v))
			continue
		}
		if !matchAny(r.patterns, text) {
			out = appendV(out, KindArgValue, r.name, quote(string(text))+" is not allowed; allowed: "+listQuoted(r.patterns))
		}
	}
	if len(out) > 1 {
		slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.Arg, b.Arg) })
	}
	if len(out) > MaxViolations {
		out = out[:MaxViolations]
	}
	return out
}

// pass reports whether Check finds nothing, the usual case, in one walk
// over the arguments instead of a lookup per URL and path argument name;
// when it says no, Check lists the violations in its fixed order.
func (c *Compiled) pass(args map[string]any) bool {
	if c.urlAny || c.paths && len(args) <= 2*len(c.pathArgs) {
		for k, v := range args {
			if c.urlAny && !c.urlsOK(v, 0) {
				return false
			}
			if c.paths && slices.Contains(c.pathArgs, k) && !c.pathsOK(v) {
				return false
			}
		}
	} else if c.paths {
		for _, name := range c.pathArgs {
			if v, ok := args[name]; ok && !c.pathsOK(v) {
				return false
			}
		}
	}
	if c.domains {
		for _, name := range c.urlArgs {
			v, ok := args[name]
			if !ok {
				continue
			}
			if s, isStr := v.(string); !isStr || c.checkURL(s, true) != "" {
				return false
			}
		}
	}
	for _, r := range c.argValues {
		v, ok := args[r.name]
		if !ok {
			return false
		}
		var buf [32]byte
		text, ok := scalarText(v, buf[:0])
		if !ok || !matchAny(r.patterns, text) {
			return false
		}
	}
	return true
}

// pathsOK reports whether v, the value of a path argument, passes
// pathGlobs: a path string or an array of them.
func (c *Compiled) pathsOK(v any) bool {
	switch v := v.(type) {
	case string:
		return c.checkPath(v) == ""
	case []any:
		for _, e := range v {
			if s, isStr := e.(string); !isStr || c.checkPath(s) != "" {
				return false
			}
		}
		return true
	case []string:
		for _, s := range v {
			if c.checkPath(s) != "" {
				return false
			}
		}
		return true
	}
	return false
}

func appendV(out []Violation, kind, arg, msg string) []Violation {
	if len(out) > MaxViolations {
		return out
	}
	return append(out, Violation{Constraint: kind, Arg: arg, Message: msg})
}

func joinArg(k, where string) string {
	if where == "" || where[0] == '[' {
		return k + where
	}
	return k + "." + where
}

// urlsOK is scanURLs's fast path: whether every URL in v passes, without
// allocating.
func (c *Compiled) urlsOK(v any, depth int) bool {
	if depth > MaxDepth {
		return false
	}
	switch v := v.(type) {
	case string:
		return c.checkURL(v, false) == ""
	case map[string]any:
		for _, e := range v {
			if !c.urlsOK(e, depth+1) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !c.urlsOK(e, depth+1) {
				return false
			}
		}
	case []string:
		for _, e := range v {
			if c.checkURL(e, false) != "" {
				return false
			}
		}
	}
	return true
}

// urlViolations appends the URL violations under argument k.
func (c *Compiled) urlViolations(out []Violation, k string, v any) []Violation {
	c.scanURLs(v, 0, func(where, msg string) {
		out = appendV(out, KindDomain, joinArg(k, where), msg)
	})
	return out
}

// scanURLs walks v and checks every string that is an absolute URL with a
// host; report gets the path below v ("" for v itself) and the message.
func (c *Compiled) scanURLs(v any, depth int, report func(where, msg string)) {
	if depth > MaxDepth {
		report("", "is nested deeper than "+strconv.Itoa(MaxDepth)+" levels; URLs in it cannot be checked")
		return
	}
	switch v := v.(type) {
	case string:
		if msg := c.checkURL(v, false); msg != "" {
			report("", msg)
		}
	case map[string]any:
		for k, e := range v {
			c.scanURLs(e, depth+1, func(where, msg string) { report(joinArg(k, where), msg) })
		}
	case []any:
		for i, e := range v {
			c.scanURLs(e, depth+1, func(where, msg string) { report(joinArg("["+strconv.Itoa(i)+"]", where), msg) })
		}
	case []string:
		for i, e := range v {
			if msg := c.checkURL(e, false); msg != "" {
				report("["+strconv.Itoa(i)+"]", msg)
			}
		}
	}
}

// checkURL returns "" when s passes allowedDomains. With required, s must
// be an absolute URL with a host; otherwise strings that are not such URLs
// pass.
func (c *Compiled) checkURL(s string, required bool) string {
	if !required && strings.IndexByte(s, ':') < 0 {
		return "" // no scheme, not a URL (tab and newline do not make one)
	}
	if hasTabOrNewline(s) {
		if _, isURL, _ := urlHost(stripTabNewline(s)); isURL || required {
			return quote(s) + " has a tab or newline inside a URL"
		}
		return ""
	}
	host, isURL, problem := urlHost(s)
	switch {
	case problem != "":
		return "URL " + quote(s) + " " + problem
	case !isURL:
		if required {
			return quote(s) + " is not an absolute URL with a host (like https://api.github.com/…)"
		}
		return ""
	case c.hostAllowed(host):
		return ""
	}
	return "host " + quote(host) + " is not allowed; allowed: " + listQuoted(c.set.AllowedDomains)
}

// hostAllowed matches host against the allowed domains without allocating.
func (c *Compiled) hostAllowed(host string) bool {
	if strings.IndexByte(host, ':') >= 0 || isDigitDot(host) {
		ip, err := netip.ParseAddr(host)
		if err == nil {
			return slices.Contains(c.ips, ip.Unmap())
		}
	}
	if len(host) > 253 {
		return false
	}
	var buf [253]byte
	lower := buf[:len(host)]
	for i := 0; i < len(host); i++ {
		ch := host[i]
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		lower[i] = ch
	}
	if _, ok := c.exact[string(lower)]; ok {
		return true
	}
	for _, suf := range c.suffixes {
		if len(lower) > len(suf) && string(lower[len(lower)-len(suf):]) == suf {
			return true
		}
	}
	return false
}

func isDigitDot(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return s != ""
}

// checkPath returns "" when p passes pathGlobs.
func (c *Compiled) checkPath(p string) string {
	switch {
	case len(p) > MaxPathBytes:
		return "path is longer than " + strconv.Itoa(MaxPathBytes) + " bytes"
	case strings.IndexByte(p, 0) >= 0:
		return "path " + quote(p) + " contains a NUL byte"
	case p == "" || p[0] != '/':
		return "path " + quote(p) + " is not absolute; paths must start with '/'"
	}
	cleaned := p
	if !isCleanAbs(p) {
		cleaned = path.Clean(p)
	}
	for i := range c.globs {
		if c.globs[i].match(cleaned) {
			return ""
		}
	}
	if cleaned != p {
		return "path " + quote(p) + " (cleaned: " + quote(cleaned) + ") is outside the allowed paths " + listQuoted(c.set.PathGlobs)
	}
	return "path " + quote(p) + " is outside the allowed paths " + listQuoted(c.set.PathGlobs)
}

// scalarText renders a scalar argument as its JSON text into buf.
func scalarText(v any, buf []byte) ([]byte, bool) {
	switch v := v.(type) {
	case string:
		return append(buf, v...), true
	case float64:
		return strconv.AppendFloat(buf, v, 'f', -1, 64), true
	case bool:
		return strconv.AppendBool(buf, v), true
	case json.Number:
		return append(buf, v...), true
	case int:
		return strconv.AppendInt(buf, int64(v), 10), true
	case int64:
		return strconv.AppendInt(buf, v, 10), true
	}
	return nil, false
}

func matchAny(patterns []string, text []byte) bool {
	for _, p := range patterns {
		if wildcard(p, string(text)) {
			return true
		}
	}
	return false
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64, json.Number, int, int64:
		return "a number"
	case bool:
		return "a boolean"
	case []any, []string:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "an unsupported value"
}

func listQuoted(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, e := range s {
		if i == 8 {
			b.WriteString(", … (" + strconv.Itoa(len(s)) + " in all)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(e))
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
