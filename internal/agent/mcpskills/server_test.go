package mcpskills_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/agent/mcpskills"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/model/skillsext"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/store"
)

var examples = filepath.Join("..", "..", "..", "examples", "skills")

func principal(tier skill.AgentTier) capability.Principal {
	return capability.Principal{Tenant: "acme", Agent: "a", Tier: tier}
}

func newServer(t *testing.T, view mcpskills.View) *mcpskills.Server {
	t.Helper()
	s, err := mcpskills.NewServer(mcpskills.Options{View: view})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type listPage struct {
	ResultType string            `json:"resultType"`
	Skills     []skillsext.Entry `json:"skills"`
	NextCursor string            `json:"nextCursor"`
	TTLMs      int               `json:"ttlMs"`
	CacheScope string            `json:"cacheScope"`
}

// walk pages through skills/list and returns every entry.
func walk(t *testing.T, s *mcpskills.Server, p capability.Principal) []skillsext.Entry {
	t.Helper()
	var all []skillsext.Entry
	cursor := ""
	for {
		params, _ := json.Marshal(map[string]any{"cursor": cursor})
		if cursor == "" {
			params = nil
		}
		res, err := s.Handle(context.Background(), p, skillsext.MethodList, params)
		if err != nil {
			t.Fatalf("skills/list: %v", err)
		}
		var page listPage
		if err := json.Unmarshal(res, &page); err != nil {
			t.Fatalf("skills/list result %s: %v", res, err)
		}
		if page.ResultType != "complete" || page.CacheScope != "private" || page.TTLMs != 60000 {
			t.Fatalf("skills/list result fields: %s", res)
		}
		all = append(all, page.Skills...)
		if page.NextCursor == "" {
			return all
		}
		cursor = page.NextCursor
	}
}

func uris(es []skillsext.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.URI)
	}
	return out
}

// verifyAll reads every file of every entry and checks it against the
// entry, as a host does.
func verifyAll(t *testing.T, s *mcpskills.Server, p capability.Principal, es []skillsext.Entry) int {
	t.Helper()
	n := 0
	for _, e := range es {
		for _, r := range e.Resources {
			res, err := s.Read(context.Background(), p, r.URI)
			if err != nil {
				t.Fatalf("resources/read %s: %v", r.URI, err)
			}
			c := res.Contents[0]
			content := []byte(c.Text)
			if c.Blob != nil {
				content = c.Blob
			}
			if err := e.VerifyRead(r.URI, content); err != nil {
				t.Errorf("%v", err)
			}
			if r.URI == e.URI {
				if err := e.VerifyFrontmatter(content); err != nil {
					t.Errorf("%v", err)
				}
			}
			n++
		}
		if err := skillsext.CheckLimits(e.Resources); err != nil {
			t.Errorf("%s: %v", e.URI, err)
		}
	}
	return n
}

// TestTierVisibility checks that skills/list gives each tier exactly its
// pool of the catalog, that skills/get answers for each of those, and that
// a hidden skill is refused exactly as an absent one, for skills/get,
// resources/read and resources/directory/read.
func TestTierVisibility(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, session.LocalSource{}, nil)
	s := newServer(t, env.Manager)
	ctx := context.Background()
	snap, err := env.Registry.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[skill.AgentTier][]string{}
	for _, tier := range []skill.AgentTier{skill.T1, skill.T4} {
		snap.Skills(tier, "", func(b registry.Brief) bool {
			want[tier] = append(want[tier], "skill://"+b.Key+"/SKILL.md")
			return true
		})
		got := uris(walk(t, s, principal(tier)))
		if !slices.Equal(got, want[tier]) {
			t.Errorf("%s: skills/list = %v, want %v", tier, got, want[tier])
		}
	}
	if len(want[skill.T1]) != 4 || len(want[skill.T4]) >= len(want[skill.T1]) {
		t.Fatalf("fixture: T1 sees %v, T4 %v; the test needs T4 to see fewer", want[skill.T1], want[skill.T4])
	}
	n := verifyAll(t, s, principal(skill.T1), walk(t, s, principal(skill.T1)))
	if n != 7 {
		t.Errorf("verified %d files, want 7", n)
	}
	hidden := ""
	for _, u := range want[skill.T1] {
		if !slices.Contains(want[skill.T4], u) {
			hidden = u
		}
	}
	absent := "skill://escrituras/donacion/SKILL.md"
	t4 := principal(skill.T4)
	for _, tc := range []struct {
		method, uri, msg string
	}{
		{skillsext.MethodGet, hidden, "No skill is served at " + hidden},
		{skillsext.MethodGet, absent, "No skill is served at " + absent},
		{skillsext.MethodReadDir, strings.TrimSuffix(hidden, "/SKILL.md"), "No directory is served at " + strings.TrimSuffix(hidden, "/SKILL.md")},
		{skillsext.MethodReadDir, strings.TrimSuffix(absent, "/SKILL.md"), "No directory is served at " + strings.TrimSuffix(absent, "/SKILL.md")},
	} {
		params, _ := json.Marshal(map[string]string{"uri": tc.uri})
		_, err := s.Handle(ctx, t4, tc.method, params)
		checkRPCError(t, tc.method+" "+tc.uri, err, jsonrpc.CodeInvalidParams, tc.msg)
	}
	for _, u := range []string{hidden, absent} {
		_, err := s.Read(ctx, t4, u)
		checkRPCError(t, "resources/read "+u, err, jsonrpc.CodeInvalidParams, "No skill file is served at "+u)
	}
	// The visible ones answer.
	for _, u := range want[skill.T4] {
		params, _ := json.Marshal(map[string]string{"uri": u})
		if _, err := s.Handle(ctx, t4, skillsext.MethodGet, params); err != nil {
			t.Errorf("skills/get %s: %v", u, err)
		}
	}
}

func checkRPCError(t *testing.T, what string, err error, code int64, msg string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		t.Errorf("%s: error %v, want a JSON-RPC error %d %q", what, err, code, msg)
		return
	}
	if je.Code != code || je.Message != msg {
		t.Errorf("%s: error %d %q, want %d %q", what, je.Code, je.Message, code, msg)
	}
}

// TestBadInput checks the answers to malformed requests, message by
// message.
func TestBadInput(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, session.LocalSource{}, nil)
	s := newServer(t, env.Manager)
	p := principal(skill.T1)
	for _, tc := range []struct {
		method, params string
		code           int64
		msg            string
	}{
		{skillsext.MethodList, `{"cursor":"nope"}`, -32602, "invalid cursor: it is not one that skills/list returned; omit it to start from the first page"},
		{skillsext.MethodList, `{"cursor":"azE6cGRmLWZvcm1z"}`, -32602, "invalid cursor: it is not one that skills/list returned; omit it to start from the first page"},
		{skillsext.MethodList, `{"cursor":7}`, -32602, "Invalid params for skills/list: json: cannot unmarshal number into Go struct field .cursor of type string (params is an object: {\"uri\": …, \"cursor\": …})"},
		{skillsext.MethodList, `[1]`, -32602, "Invalid params for skills/list: json: cannot unmarshal array into Go value of type struct { URI string \"json:\\\"uri\\\"\"; Cursor *string \"json:\\\"cursor\\\"\" } (params is an object: {\"uri\": …, \"cursor\": …})"},
		{skillsext.MethodGet, `{}`, -32602, "Invalid params for skills/get: uri is required (the skill's SKILL.md URI, as skills/list lists it)"},
		{skillsext.MethodGet, `{"uri":"skill://escrituras/../escrituras/compraventa/SKILL.md"}`, -32602, `invalid skill URI "skill://escrituras/../escrituras/compraventa/SKILL.md": path segment 2 is ".."; skill URIs name files directly, without relative segments`},
		{skillsext.MethodGet, `{"uri":"skill://escrituras/compra%76enta/SKILL.md"}`, -32602, `invalid skill URI "skill://escrituras/compra%76enta/SKILL.md": percent-encoding; skillgate's skill URIs never need it, write the path as skills/list lists it`},
		{skillsext.MethodGet, `{"uri":"skill://escrituras/compraventa/"}`, -32602, `invalid skill URI "skill://escrituras/compraventa/": a trailing slash; directories are written without one (skill://<skill-path>)`},
		{skillsext.MethodGet, `{"uri":"file:///escrituras/compraventa/SKILL.md"}`, -32602, `invalid skill URI "file:///escrituras/compraventa/SKILL.md": not a skill:// URI (skill files are served as skill://<skill-path>/<file-path>)`},
		{skillsext.MethodGet, `{"uri":"skill://escrituras/compraventa"}`, -32602, "skill://escrituras/compraventa is not a skill's SKILL.md URI (skill://<skill-path>/SKILL.md)"},
		{skillsext.MethodGet, `{"uri":"skill://escrituras/compraventa/resources/ejemplo.md"}`, -32602, "skill://escrituras/compraventa/resources/ejemplo.md is not a skill's SKILL.md URI (skill://<skill-path>/SKILL.md)"},
		// The last segment of the skill path must be the skill's name: a
		// path ending elsewhere names no skill.
		{skillsext.MethodGet, `{"uri":"skill://escrituras/SKILL.md"}`, -32602, "No skill is served at skill://escrituras/SKILL.md"},
		{skillsext.MethodGet, `{"uri":"skill://compraventa/SKILL.md"}`, -32602, "No skill is served at skill://compraventa/SKILL.md"},
		{skillsext.MethodGet, `{"uri":"skill://escrituras/compraventa/resources/SKILL.md"}`, -32602, "No skill is served at skill://escrituras/compraventa/resources/SKILL.md"},
		{skillsext.MethodReadDir, `{"uri":"skill://escrituras/compraventa/SKILL.md"}`, -32602, "skill://escrituras/compraventa/SKILL.md is not a directory resource"},
		{skillsext.MethodReadDir, `{"uri":"skill://escrituras/compraventa/nada"}`, -32602, "No directory is served at skill://escrituras/compraventa/nada"},
		{skillsext.MethodReadDir, `{"uri":"skill://escrituras/compraventa","cursor":"x"}`, -32602, "Invalid cursor: resources/directory/read of a skill directory returns every child in one page and no cursor; omit it"},
		{skillsext.MethodReadDir, `{"uri":"skill://escrituras/compraventa/"}`, -32602, `invalid skill URI "skill://escrituras/compraventa/": a trailing slash; directories are written without one (skill://<skill-path>)`},
		{skillsext.MethodReadDir, `{}`, -32602, "Invalid params for resources/directory/read: uri is required (a skill directory, such as skill://<skill-path>)"},
		{"skills/other", `{}`, -32601, "method not found: skills/other"},
	} {
		_, err := s.Handle(context.Background(), p, tc.method, json.RawMessage(tc.params))
		checkRPCError(t, tc.method+" "+tc.params, err, tc.code, tc.msg)
	}
	for uri, msg := range map[string]string{
		"skill://escrituras/compraventa/../hipoteca/SKILL.md": `invalid skill URI "skill://escrituras/compraventa/../hipoteca/SKILL.md": path segment 3 is ".."; skill URIs name files directly, without relative segments`,
		"skill://escrituras/compraventa/resources/nada.md":    "No skill file is served at skill://escrituras/compraventa/resources/nada.md",
		"skill://escrituras/compraventa/resources":            "No skill file is served at skill://escrituras/compraventa/resources",
	} {
		_, err := s.Read(context.Background(), p, uri)
		checkRPCError(t, "resources/read "+uri, err, -32602, msg)
	}
}

// TestDirectoryRead checks the children of a skill's directory and of a
// subdirectory.
func TestDirectoryRead(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, session.LocalSource{}, nil)
	s := newServer(t, env.Manager)
	for uri, want := range map[string]string{
		"skill://escrituras/compraventa": `{"resultType":"complete","resources":[` +
			`{"uri":"skill://escrituras/compraventa/SKILL.md","name":"SKILL.md","mimeType":"text/markdown","size":519},` +
			`{"uri":"skill://escrituras/compraventa/disclosure_clausulas.md","name":"disclosure_clausulas.md","mimeType":"text/markdown","size":160},` +
			`{"uri":"skill://escrituras/compraventa/resources","name":"resources","mimeType":"inode/directory"}]}`,
		"skill://escrituras/compraventa/resources": `{"resultType":"complete","resources":[` +
			`{"uri":"skill://escrituras/compraventa/resources/ejemplo.md","name":"ejemplo.md","mimeType":"text/markdown","size":87},` +
			`{"uri":"skill://escrituras/compraventa/resources/plantilla.pdf","name":"plantilla.pdf","mimeType":"application/pdf","size":83}]}`,
	} {
		params, _ := json.Marshal(map[string]string{"uri": uri})
		got, err := s.Handle(context.Background(), principal(skill.T1), skillsext.MethodReadDir, params)
		if err != nil || string(got) != want {
			t.Errorf("resources/directory/read %s = %s, %v\nwant %s", uri, got, err, want)
		}
	}
}

// TestEntryShape checks one entry byte for byte: the frontmatter typed as
// YAML types it (the version 1.0.0 stays a string, nested metadata kept),
// every file with its digest and size.
func TestEntryShape(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, session.LocalSource{}, nil)
	s := newServer(t, env.Manager)
	got, err := s.Handle(context.Background(), principal(skill.T1), skillsext.MethodGet, json.RawMessage(`{"uri":"skill://escrituras/compraventa/SKILL.md"}`))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(env.Root, "escrituras", "compraventa")
	digest := func(p string) string {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return skill.FileDigest(b)
	}
	want := `{"resultType":"complete","skill":{"uri":"skill://escrituras/compraventa/SKILL.md",` +
		`"frontmatter":{"name":"compraventa","description":"Drafts and reviews a Spanish property sale deed (escritura de compraventa). Use when a notary ticket asks for a sale deed, its clauses, or a check of an existing draft.","license":"MIT","metadata":{"tier":"2","version":"1.0.0"}},` +
		`"resources":[{"uri":"skill://escrituras/compraventa/SKILL.md","digest":"` + digest("SKILL.md") + `","size":519},` +
		`{"uri":"skill://escrituras/compraventa/disclosure_clausulas.md","digest":"` + digest("disclosure_clausulas.md") + `","size":160},` +
		`{"uri":"skill://escrituras/compraventa/resources/ejemplo.md","digest":"` + digest("resources/ejemplo.md") + `","size":87},` +
		`{"uri":"skill://escrituras/compraventa/resources/plantilla.pdf","digest":"` + digest("resources/plantilla.pdf") + `","size":83}]},` +
		`"ttlMs":60000,"cacheScope":"private"}`
	if string(got) != want {
		t.Errorf("skills/get =\n%s\nwant\n%s", got, want)
	}
}

// TestLimits checks that a skill over the extension's limits is left out of
// skills/list and that skills/get names the limit; it stays in the catalog.
func TestLimits(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, session.LocalSource{}, nil)
	big := filepath.Join(env.Root, "big")
	if err := os.MkdirAll(filepath.Join(big, "parts"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(big, "SKILL.md"), []byte("---\nname: big\ndescription: Too many files.\n---\nbody\n"), 0o644)
	for i := range 512 {
		os.WriteFile(filepath.Join(big, "parts", "p"+strconv.Itoa(i)), []byte("x"), 0o644)
	}
	huge := filepath.Join(env.Root, "huge")
	os.MkdirAll(huge, 0o755)
	os.WriteFile(filepath.Join(huge, "SKILL.md"), []byte("---\nname: huge\ndescription: Too many bytes.\n---\nbody\n"), 0o644)
	os.WriteFile(filepath.Join(huge, "blob.bin"), make([]byte, skillsext.MaxTotalBytes), 0o644)
	env.Scan(t)
	s := newServer(t, env.Manager)
	p := principal(skill.T1)
	got := uris(walk(t, s, p))
	if slices.Contains(got, "skill://big/SKILL.md") || slices.Contains(got, "skill://huge/SKILL.md") || len(got) != 4 {
		t.Errorf("skills/list = %v, want the 4 examples only", got)
	}
	_, err := s.Handle(context.Background(), p, skillsext.MethodGet, json.RawMessage(`{"uri":"skill://big/SKILL.md"}`))
	checkRPCError(t, "skills/get big", err, -32602, "The skill at skill://big/SKILL.md is not served through the MCP Skills extension: skill over the extension's limits: it has 513 files, over the limit of 512 files per skill; load it with load_skill instead")
	_, err = s.Handle(context.Background(), p, skillsext.MethodGet, json.RawMessage(`{"uri":"skill://huge/SKILL.md"}`))
	checkRPCError(t, "skills/get huge", err, -32602, "The skill at skill://huge/SKILL.md is not served through the MCP Skills extension: skill over the extension's limits: its files total 16777269 bytes, over the limit of 16777216 bytes (16 MiB) per skill; load it with load_skill instead")
	_, err = s.Read(context.Background(), p, "skill://big/SKILL.md")
	checkRPCError(t, "resources/read big", err, -32602, "Nothing is served at skill://big/SKILL.md: the skill big is not served through the MCP Skills extension: skill over the extension's limits: it has 513 files, over the limit of 512 files per skill; load it with load_skill instead")
	_, err = s.Read(context.Background(), p, "skill://huge/blob.bin")
	checkRPCError(t, "resources/read huge", err, -32602, "Nothing is served at skill://huge/blob.bin: the skill huge is not served through the MCP Skills extension: skill over the extension's limits: its files total 16777269 bytes, over the limit of 16777216 bytes (16 MiB) per skill; load it with load_skill instead")
	_, err = s.Handle(context.Background(), p, skillsext.MethodReadDir, json.RawMessage(`{"uri":"skill://big/parts"}`))
	checkRPCError(t, "resources/directory/read big", err, -32602, "Nothing is served at skill://big/parts: the skill big is not served through the MCP Skills extension: skill over the extension's limits: it has 513 files, over the limit of 512 files per skill; load it with load_skill instead")
}

// legacyView hands out versions as skillgate recorded them before per-file
// digests: file lists of paths and sizes only.
type legacyView struct{ *session.Manager }

var digestField = regexp.MustCompile(`,"digest":"sha256:[0-9a-f]{64}"`)

func (l legacyView) SkillFiles(ctx context.Context, tenant string, e registry.Brief) (store.Version, blob.Store, string, error) {
	v, st, prefix, err := l.Manager.SkillFiles(ctx, tenant, e)
	v.Files = json.RawMessage(digestField.ReplaceAll(v.Files, nil))
	return v, st, prefix, err
}

// TestLegacyVersions checks that versions recorded without per-file
// digests are served with the digests of their bytes, computed on first use
// and accepted only when they make the recorded tree digest, and that a
// file changed on disk since the scan is never served.
func TestLegacyVersions(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, session.LocalSource{}, nil)
	v, _, _, err := legacyView{env.Manager}.SkillFiles(context.Background(), "acme", registry.Brief{Key: "pdf-forms", Dir: filepath.Join(env.Root, "pdf-forms")})
	if err != nil || strings.Contains(string(v.Files), "digest") {
		t.Fatalf("legacy view: %s %v", v.Files, err)
	}
	legacy := newServer(t, legacyView{env.Manager})
	current := newServer(t, env.Manager)
	p := principal(skill.T1)
	a, b := walk(t, legacy, p), walk(t, current, p)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("legacy entries differ from recorded ones:\n%s\n%s", ja, jb)
	}
	verifyAll(t, legacy, p, a)

	// A file changed since the scan: the recorded digest is not served for
	// other bytes, and a legacy version cannot be hashed into a lie.
	f := filepath.Join(env.Root, "escrituras", "compraventa", "resources", "ejemplo.md")
	orig, _ := os.ReadFile(f)
	os.WriteFile(f, []byte(strings.ToUpper(string(orig))), 0o644)
	_, err = current.Read(context.Background(), p, "skill://escrituras/compraventa/resources/ejemplo.md")
	checkRPCError(t, "read changed file", err, -32603, "skill file escrituras/compraventa/resources/ejemplo.md changed on disk since the last scan (its digest no longer matches the one recorded); run `skillgate scan`, then skills/get again")
	fresh := newServer(t, legacyView{env.Manager})
	_, err = fresh.Handle(context.Background(), p, skillsext.MethodGet, json.RawMessage(`{"uri":"skill://escrituras/compraventa/SKILL.md"}`))
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32603 || !strings.HasPrefix(je.Message, "skill escrituras/compraventa: its files changed on disk since the last scan (tree digest sha256:") {
		t.Errorf("legacy skills/get of a changed skill: %v", err)
	}
}
