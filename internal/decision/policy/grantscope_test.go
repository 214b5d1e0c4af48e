package policy_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestScopeOldGrants: grants stored before capability ids named their
// skill are bound to the one installed skill that offers what they cover,
// kept with the same meaning when they span servers, and revoked when that
// is ambiguous or nothing installed offers it, each with an audit record
// saying what happened, when an engine first loads its grants. Loading
// them again changes nothing more.
func TestScopeOldGrants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "skillgate.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Write what an older skillgate left behind, behind the store's back.
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	manifest := func(caps ...string) string {
		var b strings.Builder
		b.WriteString(`{"skillId":"x","capabilities":[`)
		for i, c := range caps {
			ext, tool, _ := strings.Cut(c, "/")
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"extensionId":%q,"capabilityId":%q}`, ext, tool)
		}
		b.WriteString("]}")
		return b.String()
	}
	installs := []struct{ key, state, manifest string }{
		{"alpha", "enabled", manifest("fs/read_file", "fs/write_file")},
		{"beta", "disabled", manifest("fs/write_file")},
		{"gamma", "removed", manifest("web/fetch")},
		{"delta", "installed", manifest("web/fetch")},
	}
	for i, in := range installs {
		if _, err := raw.ExecContext(ctx, `INSERT INTO installs (key, name, category, description, label, digest, tier, invokable_by, dir, source, state, reason, manifest, created_at, updated_at)
			VALUES (?, ?, '', '', '', ?, 2, '[]', '', '', ?, '', ?, 1, 1)`, in.key, in.key, fmt.Sprintf("sha256:%d", i), in.state, in.manifest); err != nil {
			t.Fatal(err)
		}
	}
	grants := []struct {
		id, capability string
		revoked        int64
	}{
		{"g_1", "fs/read_file", 0},
		{"g_2", "fs/write_file", 0},
		{"g_3", "*/read_file", 0},
		{"g_4", "mail/send", 0},
		{"g_5", "*", 0},
		{"g_6", "web/*", 0},
		{"g_7", "fs/write_file", 5},
		{"g_8", "beta:fs/write_file", 0},
	}
	for i, g := range grants {
		if _, err := raw.ExecContext(ctx, `INSERT INTO grants (id, principal, capability, level, created_at, revoked_at) VALUES (?, 'acme/a', ?, 'destructive', ?, ?)`,
			g.id, g.capability, i+1, g.revoked); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	for range 2 {
		db, err = sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := policy.New(&policy.Options{Store: db}).Reload(ctx); err != nil {
			t.Fatal(err)
		}
		gs, err := db.Grants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range gs {
			got = append(got, g.ID+" "+g.Capability)
		}
		if want := "g_1 alpha:fs/read_file, g_3 *:*/read_file, g_5 *, g_6 delta:web/*, g_8 beta:fs/write_file"; strings.Join(got, ", ") != want {
			t.Fatalf("grants in force:\n got %s\nwant %s", strings.Join(got, ", "), want)
		}
		rs, err := audit.NewLog(db).Query(ctx, audit.Filter{Action: "grant.scope"})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, r := range rs {
			got = append(got, fmt.Sprintf("%s %s %s | %s", r.Actor, r.Subject, r.Data, strings.Join(r.Reasons, "; ")))
		}
		want := []string{
			`system alpha:fs/read_file {"from":"fs/read_file","grant":"g_1","principal":"acme/a","to":"alpha:fs/read_file"} | capability ids now name their skill; fs/read_file is offered only by skill alpha, so the grant is bound to it`,
			`system fs/write_file {"from":"fs/write_file","grant":"g_2","principal":"acme/a","revoked":true} | capability ids now name their skill; fs/write_file is offered by 2 skills (alpha:fs/write_file, beta:fs/write_file), so the grant was revoked rather than extended to all of them; grant it again for the one meant`,
			`system *:*/read_file {"from":"*/read_file","grant":"g_3","principal":"acme/a","to":"*:*/read_file"} | capability ids now name their skill; */read_file spans servers, so it now reads *:*/read_file and covers exactly what it covered before`,
			`system mail/send {"from":"mail/send","grant":"g_4","principal":"acme/a","revoked":true} | capability ids now name their skill; no installed skill offers mail/send, so the grant was revoked rather than left to cover a skill installed later; grant it again as skill:mail/send`,
			`system delta:web/* {"from":"web/*","grant":"g_6","principal":"acme/a","to":"delta:web/*"} | capability ids now name their skill; web/* is offered only by skill delta, so the grant is bound to it`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("audit:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if _, err := audit.Verify(ctx, audit.NewLog(db), audit.Head{}); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}
