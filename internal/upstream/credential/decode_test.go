package credential

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDecodeErrors(t *testing.T) {
	const conn = `"tenant":"acme","provider":"github","account":"work","state":"active","created":"2026-11-29T18:00:00Z"`
	const grant = `"access_token":"at-secret-1","token_type":"Bearer","token_endpoint":"https://as.example.com/token","client_id":"c1","auth_method":"none"`
	for _, tc := range []struct{ doc, want string }{
		{`{"version":3,"credentials":[]}`, "version 3 is not supported (this skillgate reads versions 1 and 2)"},
		{`{"version":1,"credentials":[],"connections":[]}`, "version 1 has no connections (they came with version 2)"},
		{`{"version":1,"credentials":[{"name":"A","tenant":"acme","value":"x"},{"name":"A","tenant":"acme","value":"y"}]}`,
			"credentials[1]: A for tenant acme appears twice"},
		{`{"version":1,"credentials":[{"name":"a","tenant":"acme","value":"x"}]}`, `credentials[0].name: invalid credential name: "a"`},
		{`{"version":1,"credentials":[{"name":"A","tenant":"","value":"x"}]}`, "credentials[0] (A): invalid credential scope: a tenant is required"},
		{`{"version":1,"credentials":[{"name":"A","tenant":"acme","value":""}]}`, "credentials[0] (A): invalid credential value: the value is empty"},
		{`{"version":1,"credentials":[],"extra":1}`, "not a credential store document"},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true,"secret":"s-secret-1"},{` + conn + `,"secret":"s-secret-2"}]}`,
			"connections[1]: github account work for tenant acme appears twice"},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"secret":"s-secret-1"}]}`,
			"connections: github for tenant acme have no default account; mark exactly one default"},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true,"secret":"s-secret-1"},{` + strings.Replace(conn, "work", "home", 1) + `,"default":true,"secret":"s-secret-2"}]}`,
			"connections: github for tenant acme have 2 default accounts; mark exactly one default"},
		{`{"version":2,"credentials":[],"connections":[{` + strings.Replace(conn, "github", "Git Hub", 1) + `,"default":true,"secret":"s-secret-1"}]}`,
			`connections[0].provider: invalid connection: provider "Git Hub": use lower-case letters, digits, '.', '_' and '-' (optionally category/name), at most 128 bytes, e.g. github`},
		{`{"version":2,"credentials":[],"connections":[{` + strings.Replace(conn, `"work"`, `"-x"`, 1) + `,"default":true,"secret":"s-secret-1"}]}`,
			`connections[0].account: invalid connection: account "-x": use letters, digits, '.', '_', '-', '@' and '+', starting with a letter or digit, at most 64 bytes`},
		{`{"version":2,"credentials":[],"connections":[{` + strings.Replace(conn, `"acme"`, `""`, 1) + `,"default":true,"secret":"s-secret-1"}]}`,
			`connections[0]: invalid credential scope: a tenant is required (--tenant)`},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true}]}`,
			"connections[0] (github account work for tenant acme): invalid connection: neither an oauth grant nor a secret"},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true,"secret":"s-secret-1","oauth":{` + grant + `}}]}`,
			"connections[0] (github account work for tenant acme): invalid connection: both an oauth grant and a secret; keep one"},
		{`{"version":2,"credentials":[],"connections":[{` + strings.Replace(conn, "active", "gone", 1) + `,"default":true,"secret":"s-secret-1"}]}`,
			`connections[0] (github account work for tenant acme): invalid connection: state "gone": use active, expired or revoked`},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true,"oauth":{` + strings.Replace(grant, "Bearer", "MAC", 1) + `}}]}`,
			"connections[0] (github account work for tenant acme): invalid connection: oauth.token_type: only Bearer is kept"},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true,"oauth":{` + strings.Replace(grant, "https://as.example.com/token", "ftp://x", 1) + `}}]}`,
			"connections[0] (github account work for tenant acme): invalid connection: oauth.token_endpoint: not an absolute http(s) URL without user info or fragment"},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true,"oauth":{` + strings.Replace(grant, `"at-secret-1"`, `""`, 1) + `}}]}`,
			"connections[0] (github account work for tenant acme): oauth.access_token: invalid credential value: the value is empty"},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true,"oauth":{` + grant + `,"client_secret":"cs-secret-1"}}]}`,
			"connections[0] (github account work for tenant acme): invalid connection: oauth.client_secret: a client secret goes with client_secret_basic or _post, none without"},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true,"oauth":{` + grant + `,"scopes":["a b"]}}]}`,
			`connections[0] (github account work for tenant acme): invalid connection: oauth.scopes[0]: a scope is 1 to 256 printable characters without spaces, '"' or '\'`},
		{`{"version":2,"credentials":[],"connections":[{` + conn + `,"default":true,"oauth":{` + grant + `,"id_token":"x"}}]}`,
			"not a credential store document"},
	} {
		_, err := decode([]byte(tc.doc))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("decode(%s)\n got %v\nwant prefix %q", tc.doc, err, tc.want)
			continue
		}
		for _, s := range []string{"at-secret-1", "s-secret-1", "s-secret-2", "cs-secret-1"} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("error repeats a secret: %v", err)
			}
		}
	}
}

// TestSeedCorpusAccepted: the fuzz seeds meant to be valid are read, and
// re-encoded to the same bytes; the others are refused.
func TestSeedCorpusAccepted(t *testing.T) {
	for name, ok := range map[string]bool{
		"v2_oauth": true, "v2_secret_agent": true, "seed1": true,
		"v2_two_defaults": false, "v2_no_default": false, "v2_duplicate": false, "v2_both_kinds": false,
		"v2_bad_state": false, "v1_with_connections": false, "v2_unknown_oauth_field": false,
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzDecode", name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 3)
		doc := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
		var raw string
		if err := jsonUnquote(doc, &raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = decode([]byte(raw))
		if (err == nil) != ok {
			t.Errorf("%s: decode = %v, want accepted %v", name, err, ok)
		}
	}
}

func jsonUnquote(s string, out *string) error {
	v, err := strconv.Unquote(s)
	*out = v
	return err
}

// TestDecodeConnectionBound: a document with more than MaxConnections
// connections is refused before any is checked.
func TestDecodeConnectionBound(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"version":2,"credentials":[],"connections":[`)
	for i := range MaxConnections + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"tenant":"acme","provider":"github","account":"a%d","state":"active","created":"2026-11-29T18:00:00Z","secret":"s"}`, i)
	}
	b.WriteString(`]}`)
	_, err := decode([]byte(b.String()))
	if want := "1025 connections; the limit is 1024"; err == nil || err.Error() != want {
		t.Fatalf("decode = %v, want %q", err, want)
	}
}
