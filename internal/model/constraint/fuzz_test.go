package constraint_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/model/constraint"
)

// FuzzParse feeds hostile constraint sets to Parse. The seed corpus is in
// testdata/fuzz/FuzzParse. Properties: no panic; errors wrap ErrInvalid and
// stay short; an accepted set compiles, survives a JSON round trip
// unchanged, checks arbitrary arguments without panicking, and intersected
// with itself is still valid.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"allowedDomains":["api.github.com","*.example.com"],"urlArgs":["url"],"pathGlobs":["/srv/data/**","/tmp/*.txt"],"pathArgs":["path"],"argValues":{"client":["github"],"mode":["read*"]},"rateLimit":"10/minute"}`))
	f.Add([]byte(`{"allowedDomains":[]}`))
	f.Add([]byte(`{"pathGlobs":["/a/**/b/**"],"argValues":{"a":["*"]}}`))
	f.Add([]byte(`{"allowedDomains":["A.COM."],"allowedDomains":["b.com"]}`))
	f.Add([]byte("{\"argValues\":{\"\u0000\":[\"x\"]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := constraint.Parse(data)
		if err != nil {
			if !errors.Is(err, constraint.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			if len(err.Error()) > 512 {
				t.Fatalf("error message is %d bytes", len(err.Error()))
			}
			return
		}
		c, err := s.Compile()
		if err != nil {
			t.Fatalf("Parse accepted a set Compile refuses: %v", err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		again, err := constraint.Parse(b)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("round trip of %s: %v", b, err)
		}
		var args map[string]any
		if json.Unmarshal(data, &args) == nil {
			c.Check(args)
		}
		if err := constraint.Intersect(s, s).Validate(); err != nil {
			t.Fatalf("s ∩ s invalid: %v", err)
		}
	})
}

// FuzzCheck checks arbitrary argument JSON against a fixed set: no panic,
// at most MaxViolations violations.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"url":"https://api.github.com@evil.com","path":"/srv/../etc","client":"github"}`))
	f.Add([]byte(`{"x":[[[["http:\\\\evil.com"]]]]}`))
	c := constraint.MustCompile(constraint.Set{AllowedDomains: []string{"api.github.com", "*.example.com"},
		PathGlobs: []string{"/srv/data/**"}, ArgValues: map[string][]string{"client": {"git*"}}})
	f.Fuzz(func(t *testing.T, data []byte) {
		var args map[string]any
		if json.Unmarshal(data, &args) != nil {
			return
		}
		if v := c.Check(args); len(v) > constraint.MaxViolations {
			t.Fatalf("%d violations", len(v))
		}
	})
}
