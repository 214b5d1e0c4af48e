package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testserver"
	"github.com/skillgate/skillgate/mcpclient"
)

// TestIntrospectPublishedSkills introspects a server that publishes two
// skills through the MCP Skills extension: every page is followed and
// every listed file read, as the server sent it.
func TestIntrospectPublishedSkills(t *testing.T) {
	t.Parallel()
	r, err := mcpclient.Introspect(context.Background(), testDecl(t, "docs", testserver.ModeSkills, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.SkillsDeclared() {
		t.Fatal("the Skills extension was not seen")
	}
	ps := r.Skills
	if ps.Error != "" || string(ps.Settings) != "{}" {
		t.Fatalf("error %q, settings %s", ps.Error, ps.Settings)
	}
	var got []string
	for _, e := range ps.Entries {
		if e.Error != "" {
			t.Errorf("entry error: %s", e.Error)
		}
		for _, f := range e.Files {
			got = append(got, f.URI+" "+string(f.Content[:min(len(f.Content), 12)]))
		}
	}
	want := []string{
		"skill://git-workflow/SKILL.md ---\nname: gi",
		"skill://git-workflow/references/branching.md # Branching\n",
		"skill://acme/refunds/SKILL.md ---\nname: re",
		"skill://acme/refunds/examples/email.md Dear custome",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("files:\n%q\nwant\n%q", got, want)
	}
	if len(r.Capabilities) != 1 || r.Capabilities[0].CapabilityID != "lookup" {
		t.Errorf("tools: %+v", r.Capabilities)
	}
}

// TestPublishedEntryBounds checks the shapes of entries that are refused
// before any file is read.
func TestPublishedEntryBounds(t *testing.T) {
	t.Parallel()
	file := func(uri string, size int64) map[string]any {
		return map[string]any{"uri": uri, "digest": "sha256:" + strings.Repeat("0", 64), "size": size}
	}
	many := []any{file("skill://a/SKILL.md", 1)}
	for i := range mcpclient.MaxSkillFiles {
		many = append(many, file(fmt.Sprintf("skill://a/f%03d.md", i), 1))
	}
	for _, tc := range []struct {
		name  string
		entry any
		want  string
	}{
		{"not SKILL.md", map[string]any{"uri": "skill://a/README.md", "resources": []any{}}, `the entry's uri "skill://a/README.md" does not name a SKILL.md`},
		{"outside the skill", map[string]any{"uri": "skill://a/SKILL.md", "resources": []any{file("skill://a/SKILL.md", 1), file("skill://b/x.md", 1)}},
			`skill "skill://a/SKILL.md" lists "skill://b/x.md", which is not a file of the skill`},
		{"twice", map[string]any{"uri": "skill://a/SKILL.md", "resources": []any{file("skill://a/SKILL.md", 1), file("skill://a/SKILL.md", 1)}},
			`skill "skill://a/SKILL.md" lists "skill://a/SKILL.md" twice`},
		{"no SKILL.md", map[string]any{"uri": "skill://a/SKILL.md", "resources": []any{file("skill://a/x.md", 1)}},
			`skill "skill://a/SKILL.md" does not list its SKILL.md among its resources`},
		{"too large", map[string]any{"uri": "skill://a/SKILL.md", "resources": []any{file("skill://a/SKILL.md", mcpclient.MaxSkillBytes+1)}},
			`skill "skill://a/SKILL.md": its files total more than the extension's limit of 16777216 bytes (16 MiB)`},
		{"too many", map[string]any{"uri": "skill://a/SKILL.md", "resources": many},
			`skill "skill://a/SKILL.md" lists 513 files, over the extension's limit of 512`},
		{"sizes that overflow", map[string]any{"uri": "skill://a/SKILL.md", "resources": []any{file("skill://a/SKILL.md", math.MaxInt64), file("skill://a/b", math.MaxInt64)}},
			`skill "skill://a/SKILL.md": its files total more than the extension's limit of 16777216 bytes (16 MiB)`},
		{"negative size", map[string]any{"uri": "skill://a/SKILL.md", "resources": []any{file("skill://a/SKILL.md", -1)}},
			`skill "skill://a/SKILL.md": file "skill://a/SKILL.md" has a negative size`},
		{"no resources", map[string]any{"uri": "skill://a/SKILL.md"}, `skill "skill://a/SKILL.md": resources must be an array of files or "dynamic"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			entry, _ := json.Marshal(tc.entry)
			got := mcpclient.EntryFilesForTest(entry)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
