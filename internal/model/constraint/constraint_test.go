package constraint_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/constraint"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string // MarshalJSON of the result
	}{
		{"empty", ``, `{}`},
		{"null", `null`, `{}`},
		{"all fields", `{"allowedDomains":["API.GitHub.com.","*.example.com","api.github.com"],"urlArgs":["url"],
			"pathGlobs":["/tmp/*.txt","/srv/data/**"],"pathArgs":["path"],"argValues":{"mode":["read*"],"client":["github"]},"rateLimit":"10/minute"}`,
			`{"allowedDomains":["*.example.com","api.github.com"],"urlArgs":["url"],"pathGlobs":["/srv/data/**","/tmp/*.txt"],"pathArgs":["path"],"argValues":{"client":["github"],"mode":["read*"]},"rateLimit":"10/minute"}`},
		{"empty lists are kept", `{"allowedDomains":[],"argValues":{"a":[]}}`, `{"allowedDomains":[],"argValues":{"a":[]}}`},
		{"ip literals", `{"allowedDomains":["127.0.0.1","[::1]"]}`, `{"allowedDomains":["127.0.0.1","::1"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := constraint.Parse(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			again, err := constraint.Parse(got)
			if err != nil || !reflect.DeepEqual(again, s) {
				t.Errorf("round trip: %v, %#v != %#v", err, again, s)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`[]`, `invalid constraints: the constraint set must be a JSON object`},
		{`{"allowedDomains":["a.com"]} x`, `invalid constraints: the constraint set has data after its closing brace`},
		{`{"AllowedDomains":[]}`, `invalid constraints: unknown key "AllowedDomains"; the keys are allowedDomains, urlArgs, pathGlobs, pathArgs, argValues and rateLimit (case-sensitive)`},
		{`{"rateLimit":"1/day","rateLimit":"2/day"}`, `invalid constraints: the constraint set has the key "rateLimit" twice; keep one`},
		{`{"allowedDomains":"a.com"}`, `invalid constraints: allowedDomains must be an array of strings`},
		{`{"allowedDomains":null}`, `invalid constraints: allowedDomains must be an array of strings`},
		{`{"allowedDomains":[1]}`, `invalid constraints: allowedDomains[0] must be a string`},
		{`{"allowedDomains":["*"]}`, `invalid constraints: allowedDomains[0] "*": "*" alone would allow every host; leave allowedDomains out instead, or name the domains`},
		{`{"allowedDomains":["*.com"]}`, `invalid constraints: allowedDomains[0] "*.com": a wildcard must keep at least two labels ("*.example.com", not "*.com")`},
		{`{"allowedDomains":["a.*.com"]}`, `invalid constraints: allowedDomains[0] "a.*.com": "*" is allowed only as a whole first label ("*.example.com")`},
		{`{"allowedDomains":["bücher.de"]}`, `invalid constraints: allowedDomains[0] "bücher.de": not ASCII; write an internationalized name in its punycode form (xn--…)`},
		{`{"allowedDomains":["https://a.com"]}`, `invalid constraints: allowedDomains[0] "https://a.com": label "https://a" may hold only letters, digits, '-' and '_'; write it like api.github.com`},
		{`{"allowedDomains":["a..com"]}`, `invalid constraints: allowedDomains[0] "a..com": has an empty label; write it like api.github.com or *.example.com`},
		{`{"pathGlobs":["srv/**"]}`, `invalid constraints: pathGlobs[0] "srv/**": not absolute; globs start with '/', like /srv/data/**`},
		{`{"pathGlobs":["/srv/../etc"]}`, `invalid constraints: pathGlobs[0] "/srv/../etc": not in cleaned form (no '//', '.', '..' or trailing '/'); write it like /srv/data/**`},
		{`{"pathGlobs":["/srv/a**"]}`, `invalid constraints: pathGlobs[0] "/srv/a**": "**" must be a whole segment (/a/**/b), not part of one`},
		{`{"pathGlobs":["/srv/[ab]"]}`, `invalid constraints: pathGlobs[0] "/srv/[ab]": only * (within a segment) and ** (any depth) are wildcards; ?, [ ], { } and \ are not supported`},
		{`{"pathGlobs":["/a/**/b/**/c/**/d/**/e/**"]}`, `invalid constraints: pathGlobs[0] "/a/**/b/**/c/**/d/**/e/**": more than 4 "**" segments`},
		{`{"pathArgs":[""]}`, `invalid constraints: pathArgs[0] "": an argument name is empty; write the top-level argument's name`},
		{`{"pathArgs":["*"]}`, ``},
		{`{"argValues":{"a":"x"}}`, `invalid constraints: argValues.a must be an array of strings`},
		{`{"argValues":{"a":["x"],"a":["y"]}}`, `invalid constraints: argValues has the key "a" twice; keep one`},
		{`{"rateLimit":"ten/minute"}`, `invalid constraints: rateLimit "ten/minute": write it as N/unit, like "10/minute"`},
		{`{"rateLimit":"10/week"}`, `invalid constraints: rateLimit "10/week": the unit must be second, minute, hour or day`},
		{`{"rateLimit":"0/second"}`, `invalid constraints: rateLimit "0/second": N must be from 1 to 1000000`},
		{`{"rateLimit":""}`, `invalid constraints: rateLimit is empty; leave it out for no limit, or write it like "10/minute"`},
		{`{"rateLimit":5}`, `invalid constraints: rateLimit must be a string like "10/minute"`},
		{`{"urlArgs":["url"],` + strings.Repeat(" ", constraint.MaxBytes) + `}`, `invalid constraints: the constraint set is 65556 bytes, limit 65536; split it or shorten its lists`},
	}
	for _, tt := range tests {
		_, err := constraint.Parse(json.RawMessage(tt.in))
		if tt.want == "" {
			if err != nil {
				t.Errorf("Parse(%.60s): %v", tt.in, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%.60s)\n got: %v\nwant: %s", tt.in, err, tt.want)
			continue
		}
		if !errors.Is(err, constraint.ErrInvalid) {
			t.Errorf("Parse(%.60s): error does not wrap ErrInvalid", tt.in)
		}
	}
}

func mustCompile(t testing.TB, js string) *constraint.Compiled {
	t.Helper()
	s, err := constraint.Parse(json.RawMessage(js))
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func decodeArgs(t testing.TB, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, set, args string
		want            []string // Violation.String()
	}{
		// allowedDomains, default selection: every URL-shaped string.
		{"domain exact", `{"allowedDomains":["api.github.com"]}`, `{"url":"https://api.github.com/repos"}`, nil},
		{"domain case and trailing dot", `{"allowedDomains":["api.github.com"]}`, `{"u":"HTTPS://API.GitHub.COM./x"}`, nil},
		{"domain wildcard", `{"allowedDomains":["*.example.com"]}`, `{"u":"http://a.b.example.com:8080/"}`, nil},
		{"wildcard is not the apex", `{"allowedDomains":["*.example.com"]}`, `{"u":"http://example.com/"}`,
			[]string{`u: host "example.com" is not allowed; allowed: "*.example.com" (allowedDomains)`}},
		{"suffix is not a label boundary", `{"allowedDomains":["*.example.com"]}`, `{"u":"http://evilexample.com/"}`,
			[]string{`u: host "evilexample.com" is not allowed; allowed: "*.example.com" (allowedDomains)`}},
		{"userinfo trick", `{"allowedDomains":["api.github.com"]}`, `{"u":"https://api.github.com@evil.com/"}`,
			[]string{`u: host "evil.com" is not allowed; allowed: "api.github.com" (allowedDomains)`}},
		{"backslash trick", `{"allowedDomains":["good.com"]}`, `{"u":"https://evil.com\\@good.com/"}`,
			[]string{`u: host "evil.com" is not allowed; allowed: "good.com" (allowedDomains)`}},
		{"no slashes", `{"allowedDomains":["good.com"]}`, `{"u":"http:evil.com"}`,
			[]string{`u: host "evil.com" is not allowed; allowed: "good.com" (allowedDomains)`}},
		{"leading space", `{"allowedDomains":["good.com"]}`, `{"u":"  http://evil.com"}`,
			[]string{`u: host "evil.com" is not allowed; allowed: "good.com" (allowedDomains)`}},
		{"tab inside", `{"allowedDomains":["good.com"]}`, `{"u":"ht\ttp://evil.com"}`,
			[]string{`u: "ht\ttp://evil.com" has a tab or newline inside a URL (allowedDomains)`}},
		{"percent host", `{"allowedDomains":["good.com"]}`, `{"u":"http://%65vil.com"}`,
			[]string{`u: URL "http://%65vil.com" has a percent-encoded host (allowedDomains)`}},
		{"idna host", `{"allowedDomains":["good.com"]}`, `{"u":"http://gооd.com"}`,
			[]string{`u: URL "http://gооd.com" has a host that is not ASCII (write it in punycode, xn--…) (allowedDomains)`}},
		{"ipv6", `{"allowedDomains":["::1"]}`, `{"u":"http://[0:0::1]:80/"}`, nil},
		{"ipv4 not listed", `{"allowedDomains":["api.github.com"]}`, `{"u":"http://169.254.169.254/latest"}`,
			[]string{`u: host "169.254.169.254" is not allowed; allowed: "api.github.com" (allowedDomains)`}},
		{"nested", `{"allowedDomains":["a.com"]}`, `{"req":{"items":[{"href":"https://a.com"},{"href":"https://b.com"}]}}`,
			[]string{`req.items[1].href: host "b.com" is not allowed; allowed: "a.com" (allowedDomains)`}},
		{"prose and file URLs are not checked", `{"allowedDomains":["a.com"]}`, `{"q":"see https://b.com","f":"file:///etc/passwd","n":3}`, nil},
		{"empty list forbids every URL", `{"allowedDomains":[]}`, `{"u":"https://a.com"}`,
			[]string{`u: host "a.com" is not allowed; allowed: none (allowedDomains)`}},
		// allowedDomains with urlArgs.
		{"named arg must be a URL", `{"allowedDomains":["a.com"],"urlArgs":["url"]}`, `{"url":"a.com/x","other":"https://b.com"}`,
			[]string{`url: "a.com/x" is not an absolute URL with a host (like https://api.github.com/…) (allowedDomains)`}},
		{"named arg type", `{"allowedDomains":["a.com"],"urlArgs":["url"]}`, `{"url":7}`,
			[]string{`url: must be a URL string, got a number (allowedDomains)`}},
		{"named plus any", `{"allowedDomains":["a.com"],"urlArgs":["url","*"]}`, `{"url":"https://a.com","x":["https://b.com"]}`,
			[]string{`x[0]: host "b.com" is not allowed; allowed: "a.com" (allowedDomains)`}},
		// pathGlobs.
		{"path ok", `{"pathGlobs":["/srv/data/**","/tmp/*.txt"]}`, `{"path":"/srv/data/a/b.csv","paths":["/tmp/x.txt","/srv/data"]}`, nil},
		{"dotdot escape", `{"pathGlobs":["/srv/data/**"]}`, `{"path":"/srv/data/../../etc/passwd"}`,
			[]string{`path: path "/srv/data/../../etc/passwd" (cleaned: "/etc/passwd") is outside the allowed paths "/srv/data/**" (pathGlobs)`}},
		{"star within one segment", `{"pathGlobs":["/tmp/*.txt"]}`, `{"file":"/tmp/a/b.txt"}`,
			[]string{`file: path "/tmp/a/b.txt" is outside the allowed paths "/tmp/*.txt" (pathGlobs)`}},
		{"relative", `{"pathGlobs":["/srv/**"]}`, `{"source":"srv/x"}`,
			[]string{`source: path "srv/x" is not absolute; paths must start with '/' (pathGlobs)`}},
		{"array element type", `{"pathGlobs":["/srv/**"]}`, `{"paths":["/srv/a",{"p":1}]}`,
			[]string{`paths[1]: must be a path string, got an object (pathGlobs)`}},
		{"custom pathArgs", `{"pathGlobs":["/srv/**"],"pathArgs":["target"]}`, `{"target":"/etc","path":"/etc"}`,
			[]string{`target: path "/etc" is outside the allowed paths "/srv/**" (pathGlobs)`}},
		{"middle double star", `{"pathGlobs":["/a/**/c"]}`, `{"path":"/a/c","file":"/a/b/b/c","source":"/a/b/d"}`,
			[]string{`source: path "/a/b/d" is outside the allowed paths "/a/**/c" (pathGlobs)`}},
		// argValues.
		{"arg value ok", `{"argValues":{"client":["github"],"mode":["read*"],"n":["10"],"b":["true"]}}`, `{"client":"github","mode":"readonly","n":10,"b":true}`, nil},
		{"arg value missing and wrong", `{"argValues":{"client":["github"],"mode":["read*"]}}`, `{"mode":"write"}`,
			[]string{`client: is required: this capability is allowed only with client set to "github" (argValues)`,
				`mode: "write" is not allowed; allowed: "read*" (argValues)`}},
		{"arg value type", `{"argValues":{"client":["github"]}}`, `{"client":["github"]}`,
			[]string{`client: must be a string, number or boolean, got an array (argValues)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustCompile(t, tt.set)
			var got []string
			for _, v := range c.Check(decodeArgs(t, tt.args)) {
				got = append(got, v.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestCheckNilAndRate(t *testing.T) {
	t.Parallel()
	var c *constraint.Compiled
	if v := c.Check(map[string]any{"url": "https://x"}); v != nil {
		t.Fatal(v)
	}
	if !c.Rate().IsZero() {
		t.Fatal("nil rate")
	}
	r := mustCompile(t, `{"rateLimit":"30/hour"}`).Rate()
	if r.N != 30 || r.String() != "30/hour" || r.PerSecond() != 30.0/3600 {
		t.Fatalf("%+v", r)
	}
}

func TestCheckAllocs(t *testing.T) {
	c := mustCompile(t, `{"allowedDomains":["api.github.com","*.example.com","10.0.0.1"],"pathGlobs":["/srv/data/**","/tmp/*.txt"],
		"argValues":{"client":["github"],"mode":["read*"],"n":["10"]}}`)
	args := decodeArgs(t, `{"url":"https://API.github.com/repos/x","nested":{"l":["http://a.example.com","plain"]},
		"ip":"http://10.0.0.1/","path":"/srv/data/x/../y.csv","paths":["/tmp/a.txt"],"client":"github","mode":"readonly","n":10}`)
	if v := c.Check(args); v != nil {
		t.Fatal(v)
	}
	if n := testing.AllocsPerRun(100, func() { c.Check(args) }); n != 2 { // path.Clean of the uncleaned path
		t.Errorf("Check allocates %.0f times on this pass path, want 2 (path.Clean)", n)
	}
	args["path"] = "/srv/data/y.csv"
	if n := testing.AllocsPerRun(100, func() { c.Check(args) }); n != 0 {
		t.Errorf("Check allocates %.0f times on the pass path, want 0", n)
	}
}

func TestIntersect(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, a, b, want string }{
		{"one side", `{"allowedDomains":["a.com"],"urlArgs":["url"]}`, `{}`, `{"allowedDomains":["a.com"],"urlArgs":["url"]}`},
		{"domains", `{"allowedDomains":["*.example.com","a.com"]}`, `{"allowedDomains":["x.example.com","*.b.example.com","b.com"]}`,
			`{"allowedDomains":["*.b.example.com","x.example.com"]}`},
		{"disjoint domains allow nothing", `{"allowedDomains":["a.com"]}`, `{"allowedDomains":["b.com"]}`, `{"allowedDomains":[]}`},
		{"url args union", `{"allowedDomains":["a.com"],"urlArgs":["url"]}`, `{"allowedDomains":["a.com"]}`, `{"allowedDomains":["a.com"],"urlArgs":["*","url"]}`},
		{"globs", `{"pathGlobs":["/srv/**","/tmp/*.txt"]}`, `{"pathGlobs":["/srv/data/**","/tmp/**","/home/*"]}`, `{"pathGlobs":["/srv/data/**","/tmp/*.txt"]}`},
		{"double star not within star", `{"pathGlobs":["/srv/*"]}`, `{"pathGlobs":["/srv/**"]}`, `{"pathGlobs":["/srv/*"]}`},
		{"path args union", `{"pathGlobs":["/srv/**"],"pathArgs":["target"]}`, `{"pathGlobs":["/srv/**"]}`,
			`{"pathGlobs":["/srv/**"],"pathArgs":["destination","directory","file","path","paths","source","target"]}`},
		{"arg values", `{"argValues":{"mode":["read*","list"],"client":["github"]}}`, `{"argValues":{"mode":["readonly","re*"],"x":["1"]}}`,
			`{"argValues":{"client":["github"],"mode":["read*","readonly"],"x":["1"]}}`},
		{"rate", `{"rateLimit":"100/hour"}`, `{"rateLimit":"2/minute"}`, `{"rateLimit":"100/hour"}`},
		{"rate tie", `{"rateLimit":"60/minute"}`, `{"rateLimit":"1/second"}`, `{"rateLimit":"1/second"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := constraint.Parse(json.RawMessage(tt.a))
			if err != nil {
				t.Fatal(err)
			}
			b, err := constraint.Parse(json.RawMessage(tt.b))
			if err != nil {
				t.Fatal(err)
			}
			for _, pair := range [][2]constraint.Set{{a, b}, {b, a}} {
				got, _ := json.Marshal(constraint.Intersect(pair[0], pair[1]))
				if string(got) != tt.want {
					t.Errorf("got  %s\nwant %s", got, tt.want)
				}
			}
		})
	}
}

// TestIntersectIsStricter checks on many argument sets that whatever the
// intersection allows, both sides allow.
func TestIntersectIsStricter(t *testing.T) {
	t.Parallel()
	sets := []string{
		`{}`,
		`{"allowedDomains":["*.example.com","a.com"]}`,
		`{"allowedDomains":["x.example.com","b.com"],"urlArgs":["url"]}`,
		`{"pathGlobs":["/srv/**","/tmp/*.txt"]}`,
		`{"pathGlobs":["/srv/data/**","/tmp/a*"],"pathArgs":["path","target"]}`,
		`{"argValues":{"mode":["read*","list"]}}`,
		`{"argValues":{"mode":["readonly","r*y"],"client":["github","gitlab"]}}`,
	}
	args := []string{
		`{}`, `{"url":"https://x.example.com"}`, `{"url":"https://a.com","other":"https://b.com"}`, `{"url":"b.com"}`,
		`{"path":"/srv/data/x"}`, `{"path":"/srv/x","target":"/tmp/a.txt"}`, `{"file":"/tmp/ab.txt"}`,
		`{"mode":"readonly"}`, `{"mode":"ready","client":"github"}`, `{"mode":"list","client":"gitlab"}`,
	}
	for _, as := range sets {
		for _, bs := range sets {
			a, _ := constraint.Parse(json.RawMessage(as))
			b, _ := constraint.Parse(json.RawMessage(bs))
			ab := constraint.Intersect(a, b)
			if err := ab.Validate(); err != nil {
				t.Fatalf("%s ∩ %s: %v", as, bs, err)
			}
			ca, cb, cab := constraint.MustCompile(a), constraint.MustCompile(b), constraint.MustCompile(ab)
			for _, js := range args {
				m := decodeArgs(t, js)
				if cab.Check(m) == nil && (ca.Check(m) != nil || cb.Check(m) != nil) {
					t.Errorf("%s ∩ %s allows %s, which a side refuses", as, bs, js)
				}
			}
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	c := mustCompile(b, `{"allowedDomains":["api.github.com","*.example.com"],"pathGlobs":["/srv/data/**"],"argValues":{"client":["github"]}}`)
	args := decodeArgs(b, `{"url":"https://api.github.com/repos/x","path":"/srv/data/y.csv","client":"github"}`)
	b.ReportAllocs()
	for b.Loop() {
		if c.Check(args) != nil {
			b.Fatal("violation")
		}
	}
}
