package server_test

import (
	"context"
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

// TestDelegatedTokens checks sub-agent tokens: what AddDelegated refuses,
// the chain a verifier resolves, and the delegations a hostile token file
// may not hold.
func TestDelegatedTokens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), server.TokensFile)
	set := server.FileTokens(path)
	now := time.Now()
	acme := func(agent string, tier skill.AgentTier) capability.Principal {
		return capability.Principal{Tenant: "acme", Agent: agent, Tier: tier}
	}
	if _, _, err := set.Add(ctx, acme("lead", skill.T2), now); err != nil {
		t.Fatal(err)
	}
	_, scout, err := set.AddDelegated(ctx, acme("scout", skill.T3), server.Delegation{Parent: "acme/lead", Forward: []string{"fs/read_text_file"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	_, deputy, err := set.AddDelegated(ctx, acme("deputy", skill.T3), server.Delegation{Parent: "acme/scout"}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    capability.Principal
		d    server.Delegation
		want string
	}{
		{"above parent", acme("boss", skill.T1), server.Delegation{Parent: "acme/lead"}, "invalid delegation: acme/boss at T1 would rank above its parent acme/lead at T2; give the sub-agent T2 or lower"},
		{"no parent token", acme("stray", skill.T3), server.Delegation{Parent: "acme/ghost"}, "invalid delegation: parent acme/ghost has no token; add one first ('skillgate token add --agent ... --tenant ...')"},
		{"own parent", acme("self", skill.T3), server.Delegation{Parent: "acme/self"}, "invalid delegation: acme/self cannot be its own parent"},
		{"other tenant", acme("x", skill.T3), server.Delegation{Parent: "beta/lead"}, "invalid delegation: parent beta/lead is of tenant beta, not acme"},
		{"bare parent", acme("x", skill.T3), server.Delegation{Parent: "lead"}, `invalid delegation: parent "lead" must be written TENANT/AGENT (default/lead)`},
		{"forward without parent", acme("x", skill.T3), server.Delegation{Forward: []string{"fs/read"}}, "invalid delegation: forwarded capabilities need a parent (--parent TENANT/AGENT)"},
		{"bad forward", acme("x", skill.T3), server.Delegation{Parent: "acme/lead", Forward: []string{"a b"}}, `invalid delegation: forwarded capability "a b" is not SKILL:EXT/CAP or EXT/CAP`},
		{"too many forwards", acme("x", skill.T3), server.Delegation{Parent: "acme/lead", Forward: make([]string, server.MaxForward+1)}, "invalid delegation: 257 forwarded capabilities, at most 256"},
		{"second delegation", acme("scout", skill.T3), server.Delegation{Parent: "acme/lead"}, "invalid delegation: acme/scout already has token " + scout.ID + " with another delegation; remove it first ('skillgate token rm " + scout.ID + "')"},
	} {
		_, _, err := set.AddDelegated(ctx, tc.p, tc.d, now)
		if err == nil || err.Error() != tc.want || !errors.Is(err, server.ErrInvalidDelegation) {
			t.Errorf("%s: AddDelegated = %v, want %q", tc.name, err, tc.want)
		}
	}

	v, err := server.OpenTokenSet(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	chain, err := v.Chain(deputy)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range chain {
		ids = append(ids, c.Principal().ID())
	}
	if got := strings.Join(ids, " > "); got != "acme/lead > acme/scout > acme/deputy" {
		t.Errorf("Chain(deputy) = %s", got)
	}
	toks, _ := set.List(ctx)
	if err := set.Remove(ctx, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Chain(deputy); !errors.Is(err, server.ErrParentRevoked) || err.Error() != "the parent of this sub-agent token has no token any more: acme/lead (parent of acme/scout)" {
		t.Errorf("Chain after the top token went = %v", err)
	}

	// A token file written by hand (or another host) is held to the same
	// rules as 'token add'.
	sha := strings.Repeat("a", 64)
	for _, tc := range []struct{ body, want string }{
		{`{"tokens":[{"id":"t1","sha256":"` + sha + `","tenant":"acme","agent":"x","tier":"T3","forward":["fs/read"]}]}`, "token 0 (t1): invalid delegation: forwarded capabilities need a parent (--parent TENANT/AGENT)"},
		{`{"tokens":[{"id":"t1","sha256":"` + sha + `","tenant":"acme","agent":"x","tier":"T3","parent":"../lead"}]}`, "token 0 (t1): invalid delegation: parent: "},
	} {
		bad := filepath.Join(t.TempDir(), server.TokensFile)
		if err := os.WriteFile(bad, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := server.OpenTokens(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("token file %s: %v, want %q", tc.body, err, tc.want)
		}
	}
}
