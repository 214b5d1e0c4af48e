package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
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

// TestPublishedSkillsOverHTTP: the extension's methods and the file reads
// go over streamable HTTP too, in the SDK's session, with the declared
// headers, answered as JSON or as an event stream; a connection relays
// reads and entries.
func TestPublishedSkillsOverHTTP(t *testing.T) {
	t.Parallel()
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			t.Parallel()
			h := testserver.SkillsHandler()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer "+httpToken {
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				if r.Method == http.MethodPost && !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
					http.Error(w, "bad accept", http.StatusBadRequest)
					return
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				if !sse || rec.Code != http.StatusOK {
					w.WriteHeader(rec.Code)
					w.Write(rec.Body.Bytes())
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\nevent: message\ndata: %s\n\n", rec.Body.Bytes())
			}))
			t.Cleanup(ts.Close)
			ctx := context.Background()
			r, err := mcpclient.Introspect(ctx, httpDecl(ts.URL+"/mcp"), httpOptions(mcpclient.Limits{}))
			if err != nil {
				t.Fatal(err)
			}
			if r.Skills == nil || r.Skills.Error != "" || len(r.Skills.Entries) != 2 || len(r.Skills.Entries[1].Files) != 2 {
				t.Fatalf("skills: %+v", r.Skills)
			}
			if got := string(r.Skills.Entries[1].Files[1].Content); got != testserver.RefundsEmail {
				t.Errorf("email.md: %q", got)
			}
			c, err := mcpclient.Dial(ctx, httpDecl(ts.URL+"/mcp"), &mcpclient.ConnOptions{Options: *httpOptions(mcpclient.Limits{})})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			b, err := c.ReadResource(ctx, "skill://git-workflow/SKILL.md")
			if err != nil || string(b) != testserver.GitWorkflowSkill {
				t.Errorf("ReadResource: %q %v", b, err)
			}
			e, err := c.GetSkill(ctx, "skill://acme/refunds/SKILL.md")
			if err != nil || !strings.Contains(string(e), `"uri":"skill://acme/refunds/examples/email.md"`) {
				t.Errorf("GetSkill: %s %v", e, err)
			}
			_, err = c.GetSkill(ctx, "skill://nope/SKILL.md")
			if !errors.Is(err, mcpclient.ErrServerError) || !strings.Contains(err.Error(), `code -32602: "No skill is served at skill://nope/SKILL.md"`) {
				t.Errorf("GetSkill of an unknown skill: %v", err)
			}
		})
	}
}
