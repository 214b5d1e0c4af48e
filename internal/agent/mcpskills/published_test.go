package mcpskills_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/agent/mcpskills"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/model/skillsext"
)

// fakePublished serves one relayed skill to T1–T3, with a file the
// "server" sends wrong.
type fakePublished struct {
	reads []string // path|file asked of the relay
}

var _ skillsext.Published = (*fakePublished)(nil)

const (
	pubPath = "mcp~docs-helper/docs/git-workflow"
	pubMD   = "---\nname: git-workflow\ndescription: Git conventions.\n---\nRead references/branching.md.\n"
	pubRef  = "# Branching\n"
)

func (f *fakePublished) PublishedSkills(_ context.Context, p capability.Principal) []skillsext.PublishedSkill {
	if p.Tier == skill.T4 {
		return nil
	}
	root := "skill://" + pubPath
	return []skillsext.PublishedSkill{{Path: pubPath, Origin: skillsext.Origin{Install: "docs-helper", Server: "docs", URI: "skill://git-workflow/SKILL.md"}, Entry: skillsext.Entry{
		URI: root + "/SKILL.md", Frontmatter: json.RawMessage(`{"name":"git-workflow","description":"Git conventions."}`),
		Resources: []skillsext.Resource{
			{URI: root + "/SKILL.md", Digest: skill.FileDigest([]byte(pubMD)), Size: int64(len(pubMD))},
			{URI: root + "/references/branching.md", Digest: skill.FileDigest([]byte(pubRef)), Size: int64(len(pubRef))},
			{URI: root + "/references/tampered.md", Digest: skill.FileDigest([]byte("x")), Size: 1},
		}}}}
}

func (f *fakePublished) ReadPublished(_ context.Context, p capability.Principal, path, file string) ([]byte, error) {
	f.reads = append(f.reads, path+"|"+file)
	switch file {
	case "SKILL.md":
		return []byte(pubMD), nil
	case "references/branching.md":
		return []byte(pubRef), nil
	case "references/tampered.md":
		return nil, fmt.Errorf("%w: skill://git-workflow/references/tampered.md is 2 bytes, the entry lists 1", skillsext.ErrVerify)
	}
	return nil, fmt.Errorf("%w: %s", skillsext.ErrNotServed, file)
}

// TestPublishedServed: relayed skills follow the registry's in
// skills/list, answer skills/get, resources/read (through the relay) and
// resources/directory/read (from the approved entry), only for the
// principals that may see them, with the same refusals as for anything
// else; a file the approved entry does not list is refused as the relay
// refuses it, and a verification failure reaches the agent as an error
// without bytes.
func TestPublishedServed(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, session.LocalSource{}, nil)
	fake := &fakePublished{}
	s, err := mcpskills.NewServer(mcpskills.Options{View: env.Manager, Published: fake})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t1, t4 := principal(skill.T1), principal(skill.T4)
	got := uris(walk(t, s, t1))
	if len(got) != 5 || got[4] != "skill://"+pubPath+"/SKILL.md" || slices.Contains(uris(walk(t, s, t4)), got[4]) {
		t.Fatalf("skills/list T1 %v, T4 %v", got, uris(walk(t, s, t4)))
	}
	md := "skill://" + pubPath + "/SKILL.md"
	res, err := s.Handle(ctx, t1, skillsext.MethodGet, json.RawMessage(fmt.Sprintf(`{"uri":%q}`, md)))
	if err != nil || !strings.Contains(string(res), `"uri":"skill://mcp~docs-helper/docs/git-workflow/references/branching.md"`) {
		t.Errorf("skills/get: %s %v", res, err)
	}
	rr, err := s.Read(ctx, t1, md)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(rr.Contents[0].Meta); string(b) != `{"io.skillgate/origin":{"install":"docs-helper","server":"docs","uri":"skill://git-workflow/SKILL.md"}}` {
		t.Errorf("_meta of a relayed read: %s", b)
	}
	for _, tc := range []struct {
		who        capability.Principal
		method     string
		uri        string
		want       string // result substring, or "" when an error is wanted
		code       int64
		msg        string
		relayCalls int
	}{
		{t1, "read", md, pubMD, 0, "", 1},
		{t1, "read", "skill://" + pubPath + "/references/branching.md", pubRef, 0, "", 1},
		{t1, "read", "skill://" + pubPath + "/references/extra.md", "", jsonrpc.CodeInvalidParams,
			"No skill file is served at skill://" + pubPath + "/references/extra.md: the approved entry of " + md + " does not list it", 1},
		{t1, "read", "skill://" + pubPath + "/references/tampered.md", "", jsonrpc.CodeInternalError,
			"skill://" + pubPath + "/references/tampered.md failed verification against its approved entry, and its skill is blocked until an operator re-approves it: skill://git-workflow/references/tampered.md is 2 bytes, the entry lists 1", 1},
		{t4, "read", md, "", jsonrpc.CodeInvalidParams, "No skill file is served at " + md, 0},
		{t4, skillsext.MethodGet, md, "", jsonrpc.CodeInvalidParams, "No skill is served at " + md, 0},
		{t1, skillsext.MethodGet, "skill://mcp~docs-helper/docs/nope/SKILL.md", "", jsonrpc.CodeInvalidParams, "No skill is served at skill://mcp~docs-helper/docs/nope/SKILL.md", 0},
		{t1, skillsext.MethodReadDir, "skill://" + pubPath + "/references", `"name":"branching.md"`, 0, "", 0},
		{t1, skillsext.MethodReadDir, "skill://" + pubPath, `"uri":"skill://mcp~docs-helper/docs/git-workflow/references","name":"references","mimeType":"inode/directory"`, 0, "", 0},
		{t1, skillsext.MethodReadDir, md, "", jsonrpc.CodeInvalidParams, md + " is not a directory resource", 0},
		{t4, skillsext.MethodReadDir, "skill://" + pubPath, "", jsonrpc.CodeInvalidParams, "No directory is served at skill://" + pubPath, 0},
	} {
		t.Run(tc.method+" "+tc.uri+" "+string(tc.who.Tier), func(t *testing.T) {
			before := len(fake.reads)
			var out string
			var err error
			if tc.method == "read" {
				res, rerr := s.Read(ctx, tc.who, tc.uri)
				if rerr == nil {
					out = res.Contents[0].Text
				}
				err = rerr
			} else {
				res, herr := s.Handle(ctx, tc.who, tc.method, json.RawMessage(fmt.Sprintf(`{"uri":%q}`, tc.uri)))
				out, err = string(res), herr
			}
			if tc.want != "" {
				if err != nil || !strings.Contains(out, tc.want) {
					t.Errorf("got %q %v, want %q", out, err, tc.want)
				}
			} else {
				checkRPCError(t, tc.uri, err, tc.code, tc.msg)
			}
			if n := len(fake.reads) - before; n != tc.relayCalls {
				t.Errorf("%d reads relayed, want %d", n, tc.relayCalls)
			}
		})
	}
}

// TestPublishedPrefixReserved: a scanned skill whose identity starts with
// mcp~ is not served through the extension, so that it can never pass
// for (or shadow) a relayed skill.
func TestPublishedPrefixReserved(t *testing.T) {
	root := t.TempDir()
	mcpservertest.CopyTree(t, examples, root)
	dir := filepath.Join(root, "mcp~docs-helper", "docs", "git-workflow")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(pubMD), 0o644); err != nil {
		t.Fatal(err)
	}
	env := mcpservertest.NewEnv(t, root, session.LocalSource{}, nil)
	s := newServer(t, env.Manager)
	p := principal(skill.T1)
	snap, err := env.Registry.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Lookup(p.Tier, pubPath); !ok {
		t.Fatalf("fixture: %s was not scanned", pubPath)
	}
	for _, u := range uris(walk(t, s, p)) {
		if strings.HasPrefix(u, "skill://mcp~") {
			t.Errorf("listed %s", u)
		}
	}
	uri := "skill://" + pubPath + "/SKILL.md"
	_, err = s.Handle(context.Background(), p, skillsext.MethodGet, json.RawMessage(fmt.Sprintf(`{"uri":%q}`, uri)))
	checkRPCError(t, "skills/get", err, jsonrpc.CodeInvalidParams, "No skill is served at "+uri)
}

// manyPublished serves n relayed skills.
type manyPublished int

func (n manyPublished) PublishedSkills(context.Context, capability.Principal) []skillsext.PublishedSkill {
	out := make([]skillsext.PublishedSkill, int(n))
	for i := range out {
		path := fmt.Sprintf("mcp~m/s/skill-%03d", i)
		out[i] = skillsext.PublishedSkill{Path: path, Entry: skillsext.Entry{URI: "skill://" + path + "/SKILL.md",
			Frontmatter: json.RawMessage(fmt.Sprintf(`{"name":"skill-%03d","description":"d"}`, i)), Dynamic: true}}
	}
	return out
}

func (manyPublished) ReadPublished(context.Context, capability.Principal, string, string) ([]byte, error) {
	return nil, skillsext.ErrNotServed
}

// TestPublishedPaging: relayed skills page after the registry's, 100 at a
// time, each listed once.
func TestPublishedPaging(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, session.LocalSource{}, nil)
	s, err := mcpskills.NewServer(mcpskills.Options{View: env.Manager, Published: manyPublished(250)})
	if err != nil {
		t.Fatal(err)
	}
	got := uris(walk(t, s, principal(skill.T1)))
	seen := map[string]bool{}
	relayed := 0
	for _, u := range got {
		if seen[u] {
			t.Errorf("%s listed twice", u)
		}
		seen[u] = true
		if strings.HasPrefix(u, "skill://mcp~") {
			relayed++
		}
	}
	if relayed != 250 || len(got) != 254 || got[253] != "skill://mcp~m/s/skill-249/SKILL.md" {
		t.Errorf("listed %d (%d relayed), last %s", len(got), relayed, got[len(got)-1])
	}
}
