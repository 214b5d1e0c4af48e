package credential_test

import (
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestBearer: which token a principal's calls to a server carry, and why
// none when there is none.
func TestBearer(t *testing.T) {
	ctx := t.Context()
	s := open(t, t.TempDir(), credential.Options{})
	put := func(c credential.Connection) {
		t.Helper()
		if err := s.PutConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	put(credential.Connection{ConnectionKey: key("acme", "", "remote", "work"), OAuth: grant("work")})
	put(credential.Connection{ConnectionKey: key("acme", "", "remote", "old"), OAuth: grant("old")})
	put(credential.Connection{ConnectionKey: key("acme", "drafter", "remote", "own"), OAuth: grant("own")})
	put(credential.Connection{ConnectionKey: key("acme", "", "static", "ci"), Secret: "static-secret"})
	if err := s.MarkConnection(ctx, key("acme", "", "remote", "old"), credential.StateExpired, "invalid_grant"); err != nil {
		t.Fatal(err)
	}
	remote := mcpclient.ServerDecl{ID: "Remote", Transport: capability.TransportHTTP, URL: "https://mcp.example.com/mcp/"}
	elsewhere := remote
	elsewhere.URL = "https://evil.example.net/mcp"
	declared := remote
	declared.Headers = map[string]string{"authorization": "Bearer ${TOKEN}"}
	stdio := mcpclient.ServerDecl{ID: "remote", Transport: capability.TransportStdio, Command: "x"}
	static := mcpclient.ServerDecl{ID: "static", Transport: capability.TransportHTTP, URL: "https://static.example.com/mcp"}
	acme := capability.Principal{Tenant: "acme", Agent: "writer"}
	drafter := capability.Principal{Tenant: "acme", Agent: "drafter"}
	beta := capability.Principal{Tenant: "beta", Agent: "writer"}
	for _, tc := range []struct {
		name    string
		who     capability.Principal
		d       mcpclient.ServerDecl
		account string
		token   string
		err     string
		use     string // the account Account reports, "" for none
	}{
		{name: "tenant default", who: acme, d: remote, token: "at-work", use: "work"},
		{name: "agent's own default first", who: drafter, d: remote, token: "at-own", use: "own"},
		{name: "pinned", who: drafter, d: remote, account: "work", token: "at-work", use: "work"},
		{name: "pinned expired", who: acme, d: remote, account: "old",
			err: "connection required: remote for tenant acme (account old is expired; an operator reconnects it with skillgate connect remote --tenant acme --account old)"},
		{name: "pinned absent", who: acme, d: remote, account: "home",
			err: "connection required: remote for tenant acme (account home is not connected; an operator connects it with skillgate connect remote --tenant acme --account home)"},
		{name: "pin malformed", who: acme, d: remote, account: "a b",
			err: `connection required: remote for tenant acme (invalid connection: account "a b": use letters, digits, '.', '_', '-', '@' and '+', starting with a letter or digit, at most 64 bytes)`},
		{name: "another tenant", who: beta, d: remote,
			err: "connection required: remote for tenant beta (no account is connected; an operator connects one with skillgate connect remote --tenant beta)"},
		{name: "grant for another server", who: acme, d: elsewhere,
			err: "connection required: remote for tenant acme (account work was authorized for https://mcp.example.com/mcp, not for the server at https://evil.example.net/mcp; connect it to this server)"},
		{name: "nobody connects to it", who: beta, d: elsewhere},
		{name: "its own Authorization header", who: acme, d: declared},
		{name: "stdio", who: acme, d: stdio},
		{name: "static secret", who: acme, d: static, token: "static-secret", use: "ci"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := s.Bearer(tc.who, tc.d, tc.account)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, mcpclient.ErrConnectionRequired) {
					t.Errorf("%v does not match ErrConnectionRequired", err)
				}
			}
			if tok != tc.token || got != tc.err {
				t.Errorf("got %q, %q\nwant %q, %q", tok, got, tc.token, tc.err)
			}
			use, uerr := s.Use(tc.who, tc.d, tc.account)
			if use.Account != tc.use || (uerr == nil) != (err == nil) {
				t.Errorf("Use: %+v %v, want %q", use, uerr, tc.use)
			}
		})
	}
}
