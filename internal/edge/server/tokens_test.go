package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

func TestTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", server.TokensFile)
	v, err := server.OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := v.Verify("sgt_anything"); ok || err != nil {
		t.Fatalf("no file: Verify = %v %v", ok, err)
	}
	p := capability.Principal{Tenant: "acme", Agent: "drafter", Tier: skill.T3}
	now := time.Date(2026, 8, 1, 10, 0, 0, 123, time.UTC)
	secret, tok, err := server.AddToken(path, p, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "sgt_") || len(secret) != 4+52 || !strings.HasPrefix(tok.ID, "tok_") || tok.Principal() != p || !tok.CreatedAt.Equal(now.Truncate(time.Second)) {
		t.Errorf("AddToken = %q %+v", secret, tok)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), secret) {
		t.Error("the token file holds the secret")
	}
	// The verifier notices the new token without being reopened.
	got, ok, err := v.Verify(secret)
	if !ok || err != nil || got.ID != tok.ID {
		t.Errorf("Verify(new secret) = %+v %v %v", got, ok, err)
	}
	if _, ok, _ := v.Verify(secret + "x"); ok {
		t.Error("a wrong secret verified")
	}
	_, tok2, err := server.AddToken(path, capability.Principal{Tenant: "acme", Agent: "lead", Tier: skill.T1}, now)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := server.ListTokens(path)
	if err != nil || len(toks) != 2 || toks[0].ID != tok.ID || toks[1].ID != tok2.ID {
		t.Errorf("ListTokens = %+v %v", toks, err)
	}
	if err := server.RemoveToken(path, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := v.Verify(secret); ok {
		t.Error("a removed token still verifies")
	}
	if err := server.RemoveToken(path, tok.ID); !errors.Is(err, server.ErrTokenNotFound) {
		t.Errorf("second RemoveToken = %v", err)
	}

	bad := []struct {
		name string
		p    capability.Principal
		want string
	}{
		{"no agent", capability.Principal{Tenant: "acme", Tier: skill.T3}, "invalid principal: agent id is empty; set --agent or SKILLGATE_AGENT"},
		{"bad tenant", capability.Principal{Tenant: "a b", Agent: "x", Tier: skill.T3}, `invalid principal: tenant "a b" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
	}
	for _, tc := range bad {
		if _, _, err := server.AddToken(path, tc.p, now); err == nil || err.Error() != tc.want {
			t.Errorf("%s: AddToken = %v, want %q", tc.name, err, tc.want)
		}
	}
	// A damaged file is reported, naming it; the verifier keeps what it had.
	if err := os.WriteFile(path, []byte(`{"tokens": [{"id": "t", "sha256": "short", "tenant": "acme", "agent": "a", "tier": "T3"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := server.ListTokens(path); err == nil || err.Error() != "tokens: "+path+": token 0 (t): sha256 must be 64 hex digits" {
		t.Errorf("damaged file: %v", err)
	}
}
