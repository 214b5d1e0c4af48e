package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/s3"
)

// bucketEnv returns the SKILLGATE_S3_* variables naming a fresh prefix of
// the test bucket, and a store over that prefix; it skips without one.
func bucketEnv(t *testing.T) ([]string, blob.Store) {
	t.Helper()
	endpoint := os.Getenv("SKILLGATE_TEST_S3_ENDPOINT")
	if endpoint == "" {
		t.Skip("SKILLGATE_TEST_S3_ENDPOINT is unset; run `eval \"$(scripts/setup-s3.sh)\"` to test against a real S3 server")
	}
	prefix := "e2e-" + strings.ToLower(rand.Text()) + "/"
	cfg := s3.Config{
		Endpoint: endpoint, Region: os.Getenv("SKILLGATE_TEST_S3_REGION"), Bucket: os.Getenv("SKILLGATE_TEST_S3_BUCKET"),
		AccessKey: os.Getenv("SKILLGATE_TEST_S3_ACCESS_KEY"), SecretKey: os.Getenv("SKILLGATE_TEST_S3_SECRET_KEY"), Prefix: prefix,
	}
	st, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		all, _ := st.List(ctx, "", 0)
		for _, in := range all {
			_ = st.Delete(ctx, in.Key)
		}
	})
	return []string{"SKILLGATE_S3_ENDPOINT=" + cfg.Endpoint, "SKILLGATE_S3_REGION=" + cfg.Region, "SKILLGATE_S3_BUCKET=" + cfg.Bucket,
		"SKILLGATE_S3_PREFIX=" + prefix, "SKILLGATE_S3_ACCESS_KEY=" + cfg.AccessKey, "SKILLGATE_S3_SECRET_KEY=" + cfg.SecretKey}, st
}

// tenantAgent connects an agent of tenant over stdio, with skills served
// from the bucket.
func (f *fixture) tenantAgent(t *testing.T, env []string, tenant string) gatewayCall {
	t.Helper()
	cmd := exec.Command(bin, "--data", f.data, "mcp", "--agent", "drafter", "--tier", "T3", "--tenant", tenant, "--skills-store", "s3")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = &testWriter{t: t, prefix: "skillgate mcp (" + tenant + "): "}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c := caller(cs)
	return func(tool string, args map[string]any) (string, bool) { return c(t, tool, args) }
}

type gatewayCall func(tool string, args map[string]any) (string, bool)

// tenantLibraries sets up two tenants' libraries in a fresh prefix of the
// test bucket: the bucket's variables set for the test, config written
// (its tenant_libraries section), acme's skill uno uploaded and scanned,
// and a T3 drafter's token for each of acme and globex. It returns the
// fixture, the bucket and the tokens' secrets by tenant.
func tenantLibraries(t *testing.T, config string) (*fixture, blob.Store, map[string]string) {
	t.Helper()
	env, st := bucketEnv(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	f := newFixture(t)
	f.writeConfig(t, config)
	putObject(t, st, "acme/skills/uno/SKILL.md", "---\nname: uno\ndescription: Acme one.\n---\nOne.\n")
	f.run(t, "scan", "--root", f.root)
	tokens := map[string]string{}
	for _, tenant := range []string{"acme", "globex"} {
		tokens[tenant] = f.tokenSecret(t, "drafter", "T3", tenant)
	}
	return f, st, tokens
}

// bearerAgent connects an agent with the token secret to srv
// (connectBearer) and returns its calls.
func (srv *server) bearerAgent(t *testing.T, secret string, opts *mcp.ClientOptions) gatewayCall {
	t.Helper()
	c := caller(srv.connectBearer(t, secret, opts))
	return func(tool string, args map[string]any) (string, bool) { return c(t, tool, args) }
}

func putObject(t *testing.T, st blob.Store, key, body string) {
	t.Helper()
	if err := st.Put(context.Background(), key, strings.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
}

// TestTenantLibraryOverMCP uploads two tenants' libraries to the bucket
// and walks them through the binary: each tenant's agents see and load
// their own skills only, another tenant's skill is "not found" exactly as
// a skill that does not exist, a bad upload is rejected with its
// diagnostics, and a change and a deletion reach agents at the next scan.
func TestTenantLibraryOverMCP(t *testing.T) {
	env, st := bucketEnv(t)
	f := newFixture(t)
	f.writeConfig(t, "tenant_libraries:\n  store: s3\n")
	putObject(t, st, "acme/skills/escrituras/secreto/SKILL.md", "---\nname: secreto\ndescription: Acme's own deed template.\n---\nUse the acme clause.\n")
	putObject(t, st, "acme/skills/escrituras/secreto/clausula.md", "Cláusula acme.\n")
	putObject(t, st, "acme/skills/roto/SKILL.md", "---\nname: roto\n---\nNo description.\n")
	putObject(t, st, "globex/skills/contratos/arriendo/SKILL.md", "---\nname: arriendo\ndescription: Globex leases.\n---\nLease.\n")

	scan := func() map[string]any {
		t.Helper()
		code, out, errOut := f.runCode(t, env, "scan", "--root", f.root, "--json")
		if code != 0 {
			t.Fatalf("scan: exit %d: %s", code, errOut)
		}
		var rep map[string]any
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := scan()
	rej, _ := json.Marshal(rep["rejections"])
	if !strings.Contains(string(rej), filepath.Join(f.data, "libraries", "acme", "roto")) || !strings.Contains(string(rej), "description") {
		t.Fatalf("the bad upload is not rejected with its diagnostics: %s", rej)
	}
	libs, _ := json.Marshal(rep["libraries"])
	for _, want := range []string{`"tenant":"acme"`, `"tenant":"globex"`} {
		if !strings.Contains(string(libs), want) {
			t.Fatalf("libraries report lacks %s: %s", want, libs)
		}
	}

	for _, tc := range []struct {
		tenant string
		shown  bool
	}{{"acme", true}, {"globex", false}, {"", false}} {
		args := []string{"disclose", "--tier", "T3"}
		if tc.tenant != "" {
			args = append(args, "--tenant", tc.tenant)
		}
		code, out, errOut := f.runCode(t, env, args...)
		if code != 0 || strings.Contains(out, "<location>\nescrituras/secreto\n</location>") != tc.shown {
			t.Fatalf("disclose for %q: exit %d, secreto shown %v, want %v\n%s", tc.tenant, code, !tc.shown, tc.shown, out+errOut)
		}
	}
	acme := f.tenantAgent(t, env, "acme")
	globex := f.tenantAgent(t, env, "globex")
	list, _ := acme("skill_list", map[string]any{"query": "secreto"})
	if !strings.Contains(list, "escrituras/secreto: Acme's own deed template.") {
		t.Fatalf("acme's skill_list: %q", list)
	}
	if got, isErr := acme("load_skill", map[string]any{"skill": "escrituras/secreto"}); isErr || !strings.Contains(got, "Use the acme clause.") {
		t.Fatalf("acme load_skill: %q", got)
	}
	if got, _ := acme("read_file", map[string]any{"file_path": "/skills/secreto/clausula.md"}); got != "     1\tCláusula acme." {
		t.Fatalf("acme read_file: %q", got)
	}
	for _, q := range []string{"secreto", "roto", "arriendo"} {
		if got, _ := acme("skill_list", map[string]any{"query": q}); q != "secreto" && got != "No skills match." {
			t.Fatalf("acme sees %s: %q", q, got)
		}
	}
	if got, _ := globex("skill_list", map[string]any{"query": "secreto"}); got != "No skills match." {
		t.Fatalf("globex sees acme's skill: %q", got)
	}
	hidden, _ := globex("load_skill", map[string]any{"skill": "escrituras/secreto"})
	missing, _ := globex("load_skill", map[string]any{"skill": "escrituras/nonexistent"})
	if want := "Error: Skill 'escrituras/secreto' not found. Call skill_list to see the skills you can load."; hidden != want ||
		strings.Replace(missing, "nonexistent", "secreto", 1) != want {
		t.Fatalf("globex load_skill of acme's skill = %q, of a missing one = %q", hidden, missing)
	}
	if got, _ := globex("load_skill", map[string]any{"skill": "secreto"}); got != "Error: Skill 'secreto' not found. Call skill_list to see the skills you can load." {
		t.Fatalf("globex load_skill by bare name: %q", got)
	}

	// A change and a deletion, picked up by the next scan.
	putObject(t, st, "acme/skills/escrituras/secreto/SKILL.md", "---\nname: secreto\ndescription: Acme's deed template, second edition.\n---\nUse the new clause.\n")
	if err := st.Delete(context.Background(), "globex/skills/contratos/arriendo/SKILL.md"); err != nil {
		t.Fatal(err)
	}
	scan()
	acme2 := f.tenantAgent(t, env, "acme")
	if got, _ := acme2("skill_list", map[string]any{"query": "secreto"}); !strings.Contains(got, "second edition") {
		t.Fatalf("the change did not reach acme: %q", got)
	}
	if got, _ := acme2("load_skill", map[string]any{"skill": "escrituras/secreto"}); !strings.Contains(got, "Use the new clause.") {
		t.Fatalf("acme loads the old version: %q", got)
	}
	globex2 := f.tenantAgent(t, env, "globex")
	if got, _ := globex2("skill_list", map[string]any{"query": "arriendo"}); got != "No skills match." {
		t.Fatalf("the deletion did not reach globex: %q", got)
	}
}

// TestMirrorAndReplica mirrors the scanned roots with the CLI, twice
// (the second uploads nothing), then serves a skill to an agent of a
// replica that has the registry but not the roots' directory.
func TestMirrorAndReplica(t *testing.T) {
	env, st := bucketEnv(t)
	f := newFixture(t)
	mirrorRun := func() map[string]any {
		t.Helper()
		code, out, errOut := f.runCode(t, env, "scan", "--root", f.root, "--mirror-s3", "--json")
		if code != 0 {
			t.Fatalf("scan --mirror-s3: exit %d: %s", code, errOut)
		}
		var rep struct {
			Valid  int            `json:"valid"`
			Mirror map[string]any `json:"mirror"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		rep.Mirror["valid"] = float64(rep.Valid)
		return rep.Mirror
	}
	first := mirrorRun()
	n := first["valid"]
	if first["skills"] != n || first["uploaded"] != n || first["unchanged"] != 0.0 || first["removed"] != 0.0 {
		t.Fatalf("first mirroring: %v", first)
	}
	second := mirrorRun()
	if second["skills"] != n || second["uploaded"] != 0.0 || second["unchanged"] != n || second["removed"] != 0.0 {
		t.Fatalf("second mirroring: %v", second)
	}
	if objs, _ := st.List(context.Background(), "_mirror/trees/", 0); len(objs) == 0 {
		t.Fatal("nothing in the bucket")
	}

	// The replica: the same registry (the same PostgreSQL database, or a
	// copy of the SQLite file), no skill directories.
	replica := &fixture{data: t.TempDir(), root: f.root, tickets: f.tickets, dsn: f.dsn}
	if f.dsn != "" {
		replica.writeConfig(t, "")
	} else {
		b, err := os.ReadFile(filepath.Join(f.data, "skillgate.db"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(replica.data, "skillgate.db"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(f.root); err != nil {
		t.Fatal(err)
	}
	agent := replica.tenantAgent(t, env, "acme")
	if got, isErr := agent("load_skill", map[string]any{"skill": "escrituras/compraventa"}); isErr || !strings.Contains(got, "Loaded escrituras/compraventa at /skills/compraventa") {
		t.Fatalf("load_skill on the replica: %q", got)
	}
	if got, isErr := agent("ls", map[string]any{"path": "/skills/compraventa"}); isErr || !strings.Contains(got, "/skills/compraventa/SKILL.md") {
		t.Fatalf("ls on the replica: %q", got)
	}
}

// TestTenantLibraryServeRescan runs `skillgate serve` over two tenants'
// libraries: an upload after the start reaches the uploading tenant's
// connected agent at the next rescan (SIGHUP), with tools/list_changed,
// and stays invisible to the other tenant's.
func TestTenantLibraryServeRescan(t *testing.T) {
	f, st, tokens := tenantLibraries(t, "tenant_libraries:\n  store: s3\n")
	srv := f.serve(t)
	changed := make(chan struct{}, 8)
	agent := func(tenant string, onChange func()) gatewayCall {
		return srv.bearerAgent(t, tokens[tenant], &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { onChange() },
		})
	}
	acme := agent("acme", func() { changed <- struct{}{} })
	globex := agent("globex", func() {})
	if got, _ := acme("skill_list", map[string]any{"query": "acme"}); !strings.Contains(got, "uno: Acme one.") {
		t.Fatalf("acme before the upload: %q", got)
	}

	putObject(t, st, "acme/skills/dos/SKILL.md", "---\nname: dos\ndescription: Acme two.\n---\nTwo.\n")
	if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(15 * time.Second):
		t.Fatal("no tools/list_changed for acme after the rescan")
	}
	if got, _ := acme("skill_list", map[string]any{"query": "acme"}); !strings.Contains(got, "dos: Acme two.") || !strings.Contains(got, "uno: Acme one.") {
		t.Fatalf("acme after the upload: %q", got)
	}
	if got, isErr := acme("load_skill", map[string]any{"skill": "dos"}); isErr || !strings.Contains(got, "Two.") {
		t.Fatalf("acme load_skill dos: %q", got)
	}
	for _, q := range []string{"uno", "dos"} {
		if got, _ := globex("load_skill", map[string]any{"skill": q}); got != "Error: Skill '"+q+"' not found. Call skill_list to see the skills you can load." {
			t.Fatalf("globex load_skill %s: %q", q, got)
		}
	}
}

// TestImportRestoredFromBucket installs and approves a skill with the S3
// skills store selected, loses the managed directory, and finds the next
// command restoring it from the bucket.
func TestImportRestoredFromBucket(t *testing.T) {
	env, st := bucketEnv(t)
	env = append(env, "SKILLGATE_SKILLS_STORE=s3")
	f := newFixture(t)
	src := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: notes\ndescription: Takes notes.\n---\nTake notes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := f.runCode(t, env, "install", src); code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := f.runCode(t, env, "approve", "notes"); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	objs, err := st.List(context.Background(), "_global/imports/notes/", 0)
	if err != nil || len(objs) != 5 { // the marker, SKILL.md and three artefacts
		t.Fatalf("bucket: %+v, %v", objs, err)
	}
	dirs, _ := filepath.Glob(filepath.Join(f.data, "imported", "sha256-*", "skill", "SKILL.md"))
	if len(dirs) != 1 {
		t.Fatalf("managed tree: %q", dirs)
	}
	before, _ := os.ReadFile(dirs[0])
	if err := os.RemoveAll(filepath.Join(f.data, "imported")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := f.runCode(t, env, "review", "notes", "--json")
	if code != 0 || !strings.Contains(out, `"state": "installed"`) {
		t.Fatalf("review after the loss: exit %d\n%s%s", code, out, errOut)
	}
	after, err := os.ReadFile(dirs[0])
	if err != nil || string(after) != string(before) {
		t.Fatalf("restored SKILL.md: %q, %v", after, err)
	}
}
