package mcpclient

import (
	"sync/atomic"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
)

type benchSource struct{ gen atomic.Uint64 }

func (*benchSource) Resolve(p capability.Principal, name string) (string, bool) {
	return "token-of-" + p.Tenant, true
}
func (s *benchSource) Generation() uint64 { return s.gen.Load() }

// BenchmarkRoute measures what Pool.Call adds before a call is written on
// a live connection: the credential generation, the cached route of the
// principal to the target and the connection's lookup ("route"), against
// the lookup of the connection by target id alone that it replaced
// ("byTarget"). Neither allocates beyond the target id.
func BenchmarkRoute(b *testing.B) {
	t := Target{Skill: "github", Digest: "sha256:1", Server: ServerDecl{ID: "gh", Command: "x", Env: map[string]string{"TOKEN": "${GITHUB_TOKEN}"}}}
	p := NewPool(PoolOptions{CredentialSource: &benchSource{}})
	who := capability.Principal{Tenant: "acme", Agent: "drafter", Tier: "T3"}
	p.mu.Lock()
	r := p.routeLocked(who, t, t.ID(), "", 0)
	p.conns[r.key] = &entry{target: t}
	p.conns[t.ID()] = &entry{target: t}
	p.mu.Unlock()
	b.Run("route", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			id := t.ID()
			gen := p.creds.Generation()
			p.mu.Lock()
			r := p.routeLocked(who, t, id, "", gen)
			_ = p.liveLocked(r.key, t)
			p.mu.Unlock()
		}
	})
	b.Run("byTarget", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			id := t.ID()
			p.mu.Lock()
			_ = p.liveLocked(id, t)
			p.mu.Unlock()
		}
	})
}
