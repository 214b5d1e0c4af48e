package remotemcp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
	"github.com/skillgate/skillgate/internal/testkit/remotemcp"
)

// TestUnauthorized holds what a client without a valid token sees: 401
// with a challenge naming the metadata, and metadata naming the issuer.
func TestUnauthorized(t *testing.T) {
	t.Parallel()
	as := oauthserver.New(t, nil)
	rs := remotemcp.New(t, &remotemcp.Options{AuthServer: as, Scopes: []string{"tools"}})
	for _, tc := range []struct {
		name, auth string
	}{
		{"no token", ""},
		{"unknown token", "Bearer not-a-token"},
		{"wrong scheme", "Basic dXNlcjpwYXNz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, rs.URL, strings.NewReader(`{}`))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := fmt.Sprintf("Bearer resource_metadata=%q", rs.MetadataURL)
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
				t.Fatalf("%s, WWW-Authenticate %q; want 401 and %s", resp.Status, resp.Header.Get("WWW-Authenticate"), want)
			}
		})
	}

	resp, err := http.Get(rs.MetadataURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		t.Fatal(err)
	}
	if md.Resource != rs.URL || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != as.URL || len(md.ScopesSupported) != 1 {
		t.Fatalf("metadata %+v: want resource %s, issuer %s, scopes [tools]", md, rs.URL, as.URL)
	}
}
