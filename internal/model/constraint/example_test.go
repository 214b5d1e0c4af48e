package constraint_test

import (
	"fmt"

	"github.com/skillgate/skillgate/internal/model/constraint"
)

func ExampleParse() {
	set, err := constraint.Parse([]byte(`{"allowedDomains":["api.github.com"],"pathGlobs":["/srv/data/**"],"argValues":{"client":["github"]}}`))
	if err != nil {
		panic(err)
	}
	c, _ := set.Compile()
	for _, v := range c.Check(map[string]any{
		"url":    "https://api.github.com@evil.example/x",
		"path":   "/srv/data/../../etc/passwd",
		"client": "github",
	}) {
		fmt.Println(v)
	}
	// Output:
	// path: path "/srv/data/../../etc/passwd" (cleaned: "/etc/passwd") is outside the allowed paths "/srv/data/**" (pathGlobs)
	// url: host "evil.example" is not allowed; allowed: "api.github.com" (allowedDomains)
}

func ExampleIntersect() {
	manifest, _ := constraint.Parse([]byte(`{"allowedDomains":["*.example.com"],"rateLimit":"100/hour"}`))
	policy, _ := constraint.Parse([]byte(`{"allowedDomains":["api.example.com","other.org"],"rateLimit":"1/second"}`))
	fmt.Println(constraint.Intersect(manifest, policy).AllowedDomains, constraint.Intersect(manifest, policy).RateLimit)
	// Output: [api.example.com] 100/hour
}
