package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/syncbuf"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
)

// credentialRun runs the binary with stdin and extra environment, and
// keeps everything it printed in seen.
func (f *fixture) credentialRun(t *testing.T, seen *syncbuf.Buffer, stdin string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--data", f.data}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	seen.Write(out.Bytes())
	seen.Write(errb.Bytes())
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Logf("skillgate %v: exit %d: %s", args, code, errb.String())
	}
	return code, out.String()
}

// serveVerbose starts `skillgate -v serve`, its stderr (logs included)
// kept in seen.
func (f *fixture) serveVerbose(t *testing.T, seen *syncbuf.Buffer) string {
	t.Helper()
	return startServe(t, []string{"-v", "--data", f.data, "serve", "--addr", "127.0.0.1:0"},
		func(line string) { seen.Write([]byte(line + "\n")) }).url
}

// TestTwoTenantsOwnCredentials is issue 14's per-user credentials
// acceptance over `skillgate serve`: one imported skill whose server takes
// ${GITHUB_TOKEN}, two tenants with their own token in the credential
// store, and one agent of a tenant with a token of its own. Each tenant's
// (and that agent's) calls reach a server process of its own, started with
// its own token; a third tenant without one is told which credential
// is missing; a token rotated while serving reaches a new process. No
// secret appears in any file of the data directory, in any output of the
// CLI, in the server's logs, in the audit log or in review.
func TestTwoTenantsOwnCredentials(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "") // not from skillgate's own environment
	const (
		installToken = "install-tok-7d2a61"
		acmeToken    = "acme-SECRET-ghp-91b3f0"
		globexToken  = "globex-SECRET-ghp-c47e28"
		acmeRotated  = "acme-SECRET-rotated-5a0d13"
		acmeReviewer = "acme-reviewer-SECRET-e60b42"
	)
	secrets := []string{installToken, acmeToken, globexToken, acmeRotated, acmeReviewer}
	f := emptyFixture(t)
	// install's --credential GITHUB_TOKEN reads the operator's environment,
	// which the configuration allows for that name only.
	f.writeConfig(t, "credentials:\n  from_environment: [GITHUB_TOKEN]\n")
	var seen syncbuf.Buffer

	// The tools file travels in the skill, read from its directory.
	const tools = "tools.json"
	src := writeImport(t, "github", "---\nCreate issues with `create_issue`.\n", map[string]any{
		"gh": map[string]any{"command": testServer(t), "env": map[string]string{
			testserver.EnvMode: testserver.ModeRecorder, testserver.EnvToolsFile: tools, testserver.EnvName: "github",
			testserver.EnvReportEnv: "GITHUB_TOKEN", "GITHUB_TOKEN": "${GITHUB_TOKEN}",
		}},
	})
	if err := os.WriteFile(filepath.Join(src, tools), []byte(`{"tools":[{"name":"create_issue","description":"Create an issue.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]},"annotations":{"readOnlyHint":false,"destructiveHint":false}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for tenant, tok := range map[string]string{"acme": acmeToken, "globex": globexToken} {
		if code, out := f.credentialRun(t, &seen, tok+"\n", nil, "credential", "set", "GITHUB_TOKEN", "--tenant", tenant); code != 0 || out != "set GITHUB_TOKEN for tenant "+tenant+"\n" {
			t.Fatalf("credential set %s: %d %q", tenant, code, out)
		}
	}
	// install introspects with the operator's environment; recheck, after
	// approval, with globex's credentials (--tenant), none in the
	// environment.
	installEnv := []string{"GITHUB_TOKEN=" + installToken}
	// install exits 1: the tool lacks side-effect and egress metadata,
	// which complete gives.
	f.credentialRun(t, &seen, "", installEnv, "install", src, "--credential", "GITHUB_TOKEN")
	for _, args := range [][]string{
		{"complete", "github", "gh/create_issue", "--risk", "write", "--side-effects", "internal", "--egress", "none", "--why", "a recording stand-in for the provider"},
	} {
		if code, _ := f.credentialRun(t, &seen, "", installEnv, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, seen.String())
		}
	}
	for _, args := range [][]string{{"approve", "github"}, {"enable", "github"}, {"recheck", "github", "--tenant", "globex"}} {
		if code, _ := f.credentialRun(t, &seen, "", nil, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, seen.String())
		}
	}
	os.MkdirAll(filepath.Join(f.data, "policies"), 0o755)
	if err := os.WriteFile(filepath.Join(f.data, "policies", "all.cedar"), []byte(`@id("all")
permit (principal, action == Action::"invoke", resource);
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := f.credentialRun(t, &seen, "", nil, "credential", "ls"); code != 0 || out != "NAME          TENANT  AGENT\nGITHUB_TOKEN  acme    *\nGITHUB_TOKEN  globex  *\n" {
		t.Fatalf("credential ls: %d %q", code, out)
	}
	// acme's reviewer has a token of its own, which comes before acme's.
	if code, _ := f.credentialRun(t, &seen, acmeReviewer, nil, "credential", "set", "GITHUB_TOKEN", "--tenant", "acme", "--agent", "reviewer"); code != 0 {
		t.Fatal("credential set --agent")
	}
	secretOf := map[string]string{}
	for _, who := range []string{"acme", "globex", "initech", "acme/reviewer"} {
		tenant, agent, ok := strings.Cut(who, "/")
		if !ok {
			agent = "drafter"
		}
		_, out := f.credentialRun(t, &seen, "", nil, "token", "add", "--agent", agent, "--tier", "T3", "--tenant", tenant, "--json")
		var tok struct {
			Secret string `json:"secret"`
		}
		if err := json.Unmarshal([]byte(out), &tok); err != nil {
			t.Fatal(err)
		}
		secretOf[who] = tok.Secret
	}
	url := f.serveVerbose(t, &seen)
	connect := func(tenant string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: tenant, Version: "v0"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearer{secretOf[tenant], http.DefaultTransport}},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	agents := map[string]*mcp.ClientSession{"acme": connect("acme"), "globex": connect("globex"), "initech": connect("initech"),
		"acme/reviewer": connect("acme/reviewer")}
	if names := toolNames(t, agents["acme"]); !slices.Contains(names, "create_issue") {
		t.Fatalf("create_issue not listed: %v", names)
	}
	call := func(tenant string) (testserver.Recording, string, bool) {
		t.Helper()
		text, isErr := caller(agents[tenant])(t, "create_issue", map[string]any{"title": "Bug from " + tenant})
		var rec testserver.Recording
		if !isErr {
			if err := json.Unmarshal([]byte(text), &rec); err != nil {
				t.Fatalf("%s: %q: %v", tenant, text, err)
			}
		}
		return rec, text, isErr
	}
	acme, acmeText, _ := call("acme")
	globex, globexText, _ := call("globex")
	if acme.Env["GITHUB_TOKEN"] != acmeToken || globex.Env["GITHUB_TOKEN"] != globexToken {
		t.Fatalf("tokens seen by the servers: acme %q, globex %q (%s; %s)", acme.Env["GITHUB_TOKEN"], globex.Env["GITHUB_TOKEN"], acmeText, globexText)
	}
	if acme.Process == globex.Process || acme.Process == "" {
		t.Fatalf("acme and globex reached the same server process %s", acme.Process)
	}
	if reviewer, _, _ := call("acme/reviewer"); reviewer.Env["GITHUB_TOKEN"] != acmeReviewer || reviewer.Process == acme.Process || reviewer.Process == globex.Process {
		t.Errorf("acme/reviewer: token %q on process %s (acme's %s, globex's %s)", reviewer.Env["GITHUB_TOKEN"], reviewer.Process, acme.Process, globex.Process)
	}
	if again, _, _ := call("acme"); again.Process != acme.Process {
		t.Errorf("acme's second call reached another process (%s, was %s)", again.Process, acme.Process)
	}
	// A tenant without the credential is told which one and how to set it.
	if _, text, isErr := call("initech"); !isErr || !strings.Contains(text, "needs GITHUB_TOKEN, which is not set for tenant initech (agent drafter); set it with: skillgate credential set GITHUB_TOKEN --tenant initech") {
		t.Errorf("initech without a token: %v %q", isErr, text)
	}

	// acme rotates its token while the server runs: its next call reaches
	// a new process with the new token; globex keeps its process.
	if code, _ := f.credentialRun(t, &seen, acmeRotated, nil, "credential", "set", "GITHUB_TOKEN", "--tenant", "acme"); code != 0 {
		t.Fatal("credential set (rotation)")
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		rec, _, _ := call("acme")
		if rec.Env["GITHUB_TOKEN"] == acmeRotated {
			if rec.Process == acme.Process {
				t.Error("the rotated token reached the old process")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotated token did not reach acme's server: still %q", rec.Env["GITHUB_TOKEN"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	if rec, _, _ := call("globex"); rec.Process != globex.Process || rec.Env["GITHUB_TOKEN"] != globexToken {
		t.Errorf("globex after acme's rotation: process %s token %q", rec.Process, rec.Env["GITHUB_TOKEN"])
	}

	// What an operator sees: none of it holds a secret.
	for _, args := range [][]string{{"review", "github"}, {"show", "github"}, {"audit", "query", "--json"}, {"audit", "verify"},
		{"credential", "ls", "--json"}, {"pending"}, {"ls"}} {
		f.credentialRun(t, &seen, "", nil, args...)
	}
	code, audit := f.credentialRun(t, &seen, "", nil, "audit", "query", "--json")
	if code != 0 || !strings.Contains(audit, "create_issue") {
		t.Errorf("audit query: %d %q", code, audit)
	}
	for _, s := range secrets {
		if strings.Contains(seen.String(), s) {
			t.Errorf("an output holds the secret %q", s)
		}
	}
	for _, a := range agents {
		a.Close()
	}
	// Every file of the data directory, the encrypted store included.
	n := 0
	err := filepath.WalkDir(f.data, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the secret %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Errorf("only %d files under the data directory", n)
	}
	if !t.Failed() {
		return
	}
	t.Logf("outputs:\n%s", seen.String())
}

// TestEnvironmentCredentialsOnlyListed is issue 28's item 9 end to end,
// with the real binary and bubblewrap: skillgate runs with PGPASSWORD in
// its environment, and an imported skill's server asks for
// ${PGPASSWORD}. Until the operator lists the name in
// credentials.from_environment, nothing resolves it: `install
// --credential PGPASSWORD` is blocked naming it and the fix, and the
// confined server never sees the value. Listed, the install introspects
// and a call reaches the run-time sandbox with the value; unlisted again,
// the call is refused naming the credential.
func TestEnvironmentCredentialsOnlyListed(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap; scripts/test.sh does)")
	}
	const secret = "pg-SECRET-4f1c9e"
	env := []string{"PGPASSWORD=" + secret}
	f := emptyFixture(t)
	var seen syncbuf.Buffer
	skill := func(name string) string {
		src := writeImport(t, name, "---\nQuery the database with `create_issue`.\n", map[string]any{
			"db": map[string]any{"command": testServer(t), "env": map[string]string{
				testserver.EnvMode: testserver.ModeRecorder, testserver.EnvToolsFile: "tools.json", testserver.EnvName: "db",
				testserver.EnvReportEnv: "PGPASSWORD", "PGPASSWORD": "${PGPASSWORD}",
			}},
		})
		if err := os.WriteFile(filepath.Join(src, "tools.json"), []byte(createIssueTools), 0o644); err != nil {
			t.Fatal(err)
		}
		return src
	}

	// Not listed: the environment does not answer, whatever it holds.
	code, out := f.credentialRun(t, &seen, "", env, "install", skill("unlisted"), "--credential", "PGPASSWORD")
	if code != 1 || !strings.Contains(out, "PGPASSWORD") {
		t.Fatalf("install with an unlisted variable: exit %d (want 1, blocked)\n%s", code, seen.String())
	}
	if want := "credentials.from_environment"; !strings.Contains(seen.String(), want) {
		t.Errorf("the refusal does not say how to allow the variable (%s):\n%s", want, seen.String())
	}

	// Listed: install, approve, enable; the call reaches the confined
	// server with the value.
	f.writeConfig(t, "credentials:\n  from_environment: [PGPASSWORD]\n")
	if code, _ := f.credentialRun(t, &seen, "", env, "install", skill("listed"), "--credential", "PGPASSWORD"); code != 0 {
		t.Fatalf("install with a listed variable: exit %d\n%s", code, seen.String())
	}
	for _, args := range [][]string{{"approve", "listed"}, {"enable", "listed"}} {
		if code, _ := f.credentialRun(t, &seen, "", env, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, seen.String())
		}
	}
	os.MkdirAll(filepath.Join(f.data, "policies"), 0o755)
	if err := os.WriteFile(filepath.Join(f.data, "policies", "all.cedar"), []byte("@id(\"all\")\npermit (principal, action == Action::\"invoke\", resource);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, isErr := caller(f.agentEnv(t, env...))(t, "create_issue", map[string]any{"title": "x"})
	if isErr || !strings.Contains(got, `"env":{"PGPASSWORD":"`+secret+`"}`) {
		t.Fatalf("call with the variable listed: (error=%v) %s", isErr, got)
	}

	// Unlisted again: the call is refused, naming the credential.
	f.writeConfig(t, "")
	got, isErr = caller(f.agentEnv(t, env...))(t, "create_issue", map[string]any{"title": "x"})
	if !isErr || !strings.Contains(got, "PGPASSWORD") || strings.Contains(got, secret) {
		t.Fatalf("call with the variable no longer listed: (error=%v) %s", isErr, got)
	}
	if strings.Contains(seen.String(), secret) {
		t.Errorf("the secret was printed:\n%s", seen.String())
	}
}
