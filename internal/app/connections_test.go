package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPickProviderURL: one URL however many skills declare it; none and
// several different ones are errors that say what to do.
func TestPickProviderURL(t *testing.T) {
	tests := []struct {
		name  string
		found []remoteServer
		url   string
		err   string
	}{
		{"none", nil, "", `no enabled skill declares a remote server "remote": a provider is the mcp.json ID of a server with a url; see a skill's servers with 'skillgate review SKILL', or give the server's URL with --url`},
		{"one", []remoteServer{{"acme/a", "https://mcp.example.com/mcp", "https://mcp.example.com/mcp"}}, "https://mcp.example.com/mcp", ""},
		{"same URL twice", []remoteServer{{"acme/b", "https://mcp.example.com/mcp", "x"}, {"acme/a", "https://mcp.example.com/mcp", "x"}}, "https://mcp.example.com/mcp", ""},
		{"two URLs", []remoteServer{
			{"acme/b", "https://b.example.com/mcp?key=secret", "https://b.example.com/mcp?key=%5Bredacted%5D"},
			{"acme/a", "https://a.example.com/mcp", "https://a.example.com/mcp"},
		}, "", "remote server \"remote\" has 2 different URLs:\n  acme/a: https://a.example.com/mcp\n  acme/b: https://b.example.com/mcp?key=%5Bredacted%5D\npass --url URL to choose one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := pickProviderURL("remote", tc.found)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if u != tc.url || got != tc.err {
				t.Errorf("got %q, %q\nwant %q, %q", u, got, tc.url, tc.err)
			}
		})
	}
}

// TestOAuthConfig: the connections section makes the OAuth client's
// options and the configured clients, their secret from the environment.
func TestOAuthConfig(t *testing.T) {
	data := t.TempDir()
	cfg := "connections:\n  timeout: 3s\n  clients:\n    github:\n      client_id: Iv1.abc\n      client_secret_env: GH_OAUTH_SECRET\n    linear:\n      client_id: lin-public\n"
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	a := New(Options{Data: data, Getenv: func(k string) string { return env[k] }})
	c, err := a.Config()
	if err != nil {
		t.Fatal(err)
	}
	if d, err := c.Connections.timeout(); err != nil || d != 3*time.Second {
		t.Errorf("timeout %v %v", d, err)
	}
	if _, err := a.OAuthClient(); err != nil {
		t.Fatal(err)
	}
	if reg, err := a.OAuthRegistration("gitlab"); reg != nil || err != nil {
		t.Errorf("unconfigured provider: %v %v", reg, err)
	}
	if reg, err := a.OAuthRegistration("linear"); err != nil || reg == nil || reg.ClientID != "lin-public" || reg.AuthMethod != "none" {
		t.Errorf("public client: %v %v", reg, err)
	}
	_, err = a.OAuthRegistration("github")
	if want := "connections.clients.github.client_secret_env names GH_OAUTH_SECRET, which is not set in skillgate's environment: export it, or remove client_secret_env for a public client"; err == nil || err.Error() != want {
		t.Errorf("unset secret: %v", err)
	}
	env["GH_OAUTH_SECRET"] = "planted-client-secret"
	reg, err := a.OAuthRegistration("github")
	if err != nil || reg.ClientSecret != "planted-client-secret" || reg.AuthMethod != "client_secret_basic" {
		t.Fatalf("confidential client: %v %v", reg, err)
	}
	if s := reg.String(); strings.Contains(s, "planted") {
		t.Errorf("the registration printed its secret: %s", s)
	}
}

// TestRefreshConfig: refresh_lead and refresh_interval set the
// refresher's lead (with a quarter of it as jitter, at most 30s) and scan
// interval; unset they leave the connection package's defaults; a value
// out of range is refused naming its key.
func TestRefreshConfig(t *testing.T) {
	tests := []struct {
		name                 string
		lead, interval       string
		wantLead, wantJitter time.Duration
		wantInterval         time.Duration
		err                  string
	}{
		{"defaults", "", "", 0, 0, 0, ""},
		{"short", "1s", "250ms", time.Second, 250 * time.Millisecond, 250 * time.Millisecond, ""},
		{"long lead caps the jitter", "10m", "1m", 10 * time.Minute, 30 * time.Second, time.Minute, ""},
		{"lead too short", "500ms", "", 0, 0, 0, `connections.refresh_lead: "500ms": use a duration from 1s to 24h, such as 2m`},
		{"lead not a duration", "soon", "", 0, 0, 0, `connections.refresh_lead: "soon": use a duration from 1s to 24h, such as 2m`},
		{"interval too short", "", "10ms", 0, 0, 0, `connections.refresh_interval: "10ms": use a duration from 100ms to 1h, such as 15s`},
		{"interval too long", "", "2h", 0, 0, 0, `connections.refresh_interval: "2h": use a duration from 100ms to 1h, such as 15s`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ConfigConnections{RefreshLead: tc.lead, RefreshInterval: tc.interval}
			lead, jitter, interval, err := c.refreshOptions()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err || lead != tc.wantLead || jitter != tc.wantJitter || interval != tc.wantInterval {
				t.Errorf("got %v %v %v %q; want %v %v %v %q", lead, jitter, interval, got, tc.wantLead, tc.wantJitter, tc.wantInterval, tc.err)
			}
			var checked []string
			for _, err := range c.check() {
				checked = append(checked, err.Error())
			}
			if strings.Join(checked, "\n") != tc.err {
				t.Errorf("check: %q; want %q", checked, tc.err)
			}
		})
	}
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte("connections:\n  refresh_lead: 1s\n  refresh_interval: 0s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Data: data}).Config()
	if err == nil || !strings.Contains(err.Error(), `connections.refresh_interval: "0s": use a duration from 100ms to 1h, such as 15s`) {
		t.Errorf("config with a bad interval: %v", err)
	}
}
