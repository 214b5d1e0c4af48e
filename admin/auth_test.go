package admin_test

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// htmlText is s as html/template writes it in an element's text.
func htmlText(s string) string {
	return strings.ReplaceAll(template.HTMLEscapeString(s), "+", "&#43;")
}

// TestPrincipalsRefusedConsole: the grant form and the policy replay form
// refuse a principal with control characters, bidi formatting characters
// or empty '/' segments with Principal.Validate's message; nothing is
// stored.
func TestPrincipalsRefusedConsole(t *testing.T) {
	c := newConsole(t)
	csrf := c.signIn(t, "sgt_admin")
	for _, tc := range []struct{ principal, want string }{
		{"acme/x\x00y", `invalid principal: agent id "x\x00y" contains control characters or invalid UTF-8`},
		{"acme/x\x07y", `invalid principal: agent id "x\ay" contains control characters or invalid UTF-8`},
		{"acme/x\x1b[2Jy", `invalid principal: agent id "x\x1b[2Jy" contains control characters or invalid UTF-8`},
		{"acme/x\x7fy", `invalid principal: agent id "x\x7fy" contains control characters or invalid UTF-8`},
		{"acme/x\u202ey", `invalid principal: agent id "x\u202ey" contains a bidirectional formatting character (U+202E)`},
		{"acme/x\u2067y", `invalid principal: agent id "x\u2067y" contains a bidirectional formatting character (U+2067)`},
		{"ac\x00me/x", `invalid principal: tenant "ac\x00me" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{"acme//x", `invalid principal: agent id "/x" has an empty segment: no '/' at its start or end, nor two in a row`},
		{"acme/x/", `invalid principal: agent id "x/" has an empty segment: no '/' at its start or end, nor two in a row`},
		{"/x", `invalid principal: tenant is empty`},
	} {
		status, _, page := c.post(t, "/admin/grants", url.Values{"csrf": {csrf}, "principal": {tc.principal}, "capability": {"tools/fs:fs/delete_file"},
			"level": {"destructive"}, "uses": {"1"}, "reason": {"a reason"}})
		if want := htmlText("invalid grant: principal: " + tc.want); status != http.StatusBadRequest || !strings.Contains(page, want) {
			t.Errorf("grant for %q: %d; want 400 with %s\n%s", tc.principal, status, want, page)
		}
		_, _, page = c.get(t, "/admin/policies?"+url.Values{"principal": {tc.principal}, "tier": {"T3"}, "capability": {"tools/fs:fs/delete_file"}}.Encode())
		if want := htmlText(tc.want); !strings.Contains(page, want) {
			t.Errorf("policy test of %q: want %s\n%s", tc.principal, want, page)
		}
	}
	if gs := c.eng.Grants(); len(gs) != 0 {
		t.Errorf("grants stored: %+v", gs)
	}
}
