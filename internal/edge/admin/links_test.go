package admin_test

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// hrefRE finds the links of a rendered page.
var hrefRE = regexp.MustCompile(`href="([^"]*)"`)

// consoleLinks returns the console links of page (html-unescaped, as a
// browser follows them): fragments and other origins left out.
func consoleLinks(page string) []string {
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(page, -1) {
		href := html.UnescapeString(m[1])
		if strings.HasPrefix(href, "/admin") {
			out = append(out, href)
		}
	}
	return out
}

// TestEveryLinkResolves renders every list page of the console, and the
// pages they link to, and follows every link found in them: each answers
// 200. Links carry skill names with a category ("escrituras/compraventa"),
// digests ("sha256:…") and nested file paths ("resources/ejemplo.md"),
// which a link escaped twice turns into a 404.
func TestEveryLinkResolves(t *testing.T) {
	c := newConsole(t)
	installNotes(t, c)
	c.signIn(t, "sgt_admin")
	lists := []string{"/admin/", "/admin/installs", "/admin/skills", "/admin/changes", "/admin/grants", "/admin/audit", "/admin/policies"}
	seen := map[string]bool{}
	queue := append([]string(nil), lists...)
	for depth := 0; depth < 3 && len(queue) > 0; depth++ {
		var next []string
		for _, u := range queue {
			if seen[u] {
				continue
			}
			seen[u] = true
			status, loc, body := c.get(t, u)
			if status != http.StatusOK {
				t.Errorf("GET %s: %d %s", u, status, loc)
				continue
			}
			if strings.HasSuffix(strings.SplitN(u, "?", 2)[0], ".jsonl") || strings.HasPrefix(u, "/admin/static/") {
				continue
			}
			next = append(next, consoleLinks(body)...)
		}
		queue = next
	}
	// The links that broke: an install's version, a skill in a category,
	// a nested file of it (html/template writes %xx in lower case).
	for _, want := range []string{"/admin/installs/review?name=notes%40sha256%3a", "/admin/skills/show?name=escrituras%2fcompraventa",
		"/admin/skills/show?name=escrituras%2fcompraventa&file=resources%2fejemplo.md"} {
		found := false
		for u := range seen {
			found = found || strings.HasPrefix(u, want)
		}
		if !found {
			t.Errorf("no link to %s… among the %d followed", want, len(seen))
		}
	}
}
