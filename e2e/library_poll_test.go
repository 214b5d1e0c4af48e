package e2e

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestTenantLibraryPolled is issue 32's item 11: with
// tenant_libraries.poll_interval set, a skill uploaded to
// {tenant}/skills/… reaches that tenant's agents over HTTP without a scan,
// a SIGHUP or POST /v1/scan, within the interval plus one rescan; a
// deletion leaves the same way, and another tenant never sees it. It logs
// the time from the upload to the skill in skill_list.
func TestTenantLibraryPolled(t *testing.T) {
	const interval = time.Second
	f, st, tokens := tenantLibraries(t, "tenant_libraries:\n  store: s3\n  poll_interval: 1s\n")
	srv := f.serve(t)
	agent := func(tenant string) gatewayCall { return srv.bearerAgent(t, tokens[tenant], nil) }
	acme, globex := agent("acme"), agent("globex")
	// until polls acme's skill_list until ok holds for it, and returns how
	// long that took; the bound is the interval, a rescan and slack for
	// two shared cores.
	until := func(what string, ok func(string) bool) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			got, _ := acme("skill_list", map[string]any{"query": "acme"})
			if ok(got) {
				return time.Since(start)
			}
			if time.Since(start) > interval+10*time.Second {
				t.Fatalf("%s: not in acme's skill_list %s after it: %q", what, time.Since(start), got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if got, _ := acme("skill_list", map[string]any{"query": "acme"}); !strings.Contains(got, "uno: Acme one.") {
		t.Fatalf("acme before the upload: %q", got)
	}
	putObject(t, st, "acme/skills/dos/SKILL.md", "---\nname: dos\ndescription: Acme two.\n---\nTwo.\n")
	up := until("the upload", func(s string) bool { return strings.Contains(s, "dos: Acme two.") })
	if got, isErr := acme("load_skill", map[string]any{"skill": "dos"}); isErr || !strings.Contains(got, "Two.") {
		t.Fatalf("acme load_skill dos: %q", got)
	}
	if got, _ := globex("load_skill", map[string]any{"skill": "dos"}); got != "Error: Skill 'dos' not found. Call skill_list to see the skills you can load." {
		t.Fatalf("globex load_skill dos: %q", got)
	}
	if err := st.Delete(context.Background(), "acme/skills/uno/SKILL.md"); err != nil {
		t.Fatal(err)
	}
	gone := until("the deletion", func(s string) bool { return !strings.Contains(s, "uno: Acme one.") })
	t.Logf("poll_interval %s: upload visible in skill_list after %s, deletion after %s", interval, up.Round(time.Millisecond), gone.Round(time.Millisecond))
}
