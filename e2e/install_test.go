package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
)

var (
	testServerOnce sync.Once
	testServerBin  string
	testServerErr  error
)

// testServer builds the project's own test MCP server once.
func testServer(t *testing.T) string {
	t.Helper()
	testServerOnce.Do(func() {
		testServerBin, testServerErr = testserver.Build("..", filepath.Dir(bin))
	})
	if testServerErr != nil {
		t.Fatal(testServerErr)
	}
	return testServerBin
}

// importable writes a skill declaring the test server in mode normal.
func importable(t *testing.T, name, frontmatter string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	md := "---\nname: " + name + "\ndescription: Notes through the test server.\n" + frontmatter + "---\nTake notes.\n"
	cfg := `{"mcpServers": {"notes": {"command": "` + testServer(t) + `", "env": {"SKILLGATE_TESTSERVER": "normal"}}}}`
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runCode runs the binary and returns its exit code, stdout and stderr.
func (f *fixture) runCode(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--data", f.data}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = -int(ws.Signal())
		}
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestInstallCLIAndREST drives the install flow through the CLI and the
// REST API of `skillgate serve`, and checks that both give the same bytes
// for the same state.
func TestInstallCLIAndREST(t *testing.T) {
	f := newFixture(t)
	src := importable(t, "notes", "allowed-tools: notes/echo notes/bare\n")

	// An install that ends blocked exits 1 after printing its review.
	code, out, stderr := f.runCode(t, nil, "install", src)
	if code != 1 || !strings.HasPrefix(out, "notes  blocked  ") {
		t.Fatalf("install: %d %s\n%s", code, stderr, out)
	}
	code, out, _ = f.runCode(t, nil, "pending", "--json")
	var pend []struct{ Key, State string }
	if json.Unmarshal([]byte(out), &pend); code != 0 || len(pend) != 1 || pend[0].State != "blocked" {
		t.Fatalf("pending: %d %s", code, out)
	}
	// Errors say what to do next, with documented exit codes.
	code, _, stderr = f.runCode(t, nil, "approve", "notes")
	if code != 1 || !strings.Contains(stderr, "1 capability lacks risk metadata (notes/bare); run skillgate complete notes CAPABILITY") {
		t.Errorf("approve blocked: %d %s", code, stderr)
	}
	code, _, stderr = f.runCode(t, nil, "complete", "notes", "notes/bare", "--risk", "read", "--why", "too short")
	if code != 2 || !strings.Contains(stderr, "--why must explain the decision in at least 15 characters") {
		t.Errorf("short why: %d %s", code, stderr)
	}
	if code, _, stderr = f.runCode(t, nil, "complete", "notes", "notes/bare", "--risk", "read", "--side-effects", "none", "--egress", "none",
		"--why", "bare only answers ok; we read its source"); code != 0 {
		t.Fatalf("complete: %s", stderr)
	}

	// The REST API, for a T0 operator.
	var tok struct {
		Secret string `json:"secret"`
	}
	json.Unmarshal([]byte(f.run(t, "token", "add", "--agent", "ana", "--tier", "T0", "--tenant", "acme", "--json")), &tok)
	var agent struct {
		Secret string `json:"secret"`
	}
	json.Unmarshal([]byte(f.run(t, "token", "add", "--agent", "bot", "--tier", "T3", "--tenant", "acme", "--json")), &agent)
	srv := f.serve(t)
	call := func(method, path, token, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := call("GET", "/v1/installs/pending", agent.Secret, ""); st != http.StatusForbidden {
		t.Errorf("T3 token: %d %s", st, body)
	}
	same := func(what, cliOut, restBody string) {
		t.Helper()
		if cliOut != restBody {
			t.Errorf("%s: CLI and REST differ\nCLI:  %s\nREST: %s", what, cliOut, restBody)
		}
	}
	_, cliReview, _ := f.runCode(t, nil, "review", "notes", "--json")
	st, restReview := call("GET", "/v1/installs/review?name="+url.QueryEscape("notes"), tok.Secret, "")
	if st != 200 {
		t.Fatalf("review: %d %s", st, restReview)
	}
	same("review", cliReview, restReview)
	_, cliPending, _ := f.runCode(t, nil, "pending", "--json")
	_, restPending := call("GET", "/v1/installs/pending", tok.Secret, "")
	same("pending", cliPending, restPending)

	// Approve over REST; the CLI review then shows the same state.
	st, approved := call("POST", "/v1/installs/approve", tok.Secret, `{"name":"notes"}`)
	if st != 200 || !strings.Contains(approved, `"state": "installed"`) || !strings.Contains(approved, `"by": "operator:acme/ana@T0"`) {
		t.Fatalf("approve: %d %s", st, approved)
	}
	_, cliReview, _ = f.runCode(t, nil, "review", "notes", "--json")
	same("review after approval", cliReview, approved)
	if st, body := call("POST", "/v1/installs/approve", tok.Secret, `{"name":"notes"}`); st != http.StatusConflict || !strings.Contains(body, "already approved") {
		t.Errorf("approve twice: %d %s", st, body)
	}
	if st, body := call("POST", "/v1/installs/reject", tok.Secret, `{"name":"nope","why":"a reason long enough"}`); st != http.StatusNotFound {
		t.Errorf("unknown: %d %s", st, body)
	}
	if st, body := call("POST", "/v1/installs/enable", tok.Secret, `{"name":"notes","extra":1}`); st != http.StatusBadRequest {
		t.Errorf("unknown field: %d %s", st, body)
	}
	// Enable from the CLI, disable over REST.
	code, out, stderr = f.runCode(t, nil, "enable", "notes", "--json")
	if code != 0 || !strings.Contains(out, `"state": "enabled"`) {
		t.Fatalf("enable: %d %s %s", code, out, stderr)
	}
	if st, body := call("POST", "/v1/installs/disable", tok.Secret, `{"name":"notes"}`); st != 200 || !strings.Contains(body, `"state": "disabled"`) {
		t.Errorf("disable: %d %s", st, body)
	}
	code, out, _ = f.runCode(t, nil, "pending", "--all", "--json")
	_, restAll := call("GET", "/v1/installs", tok.Secret, "")
	same("list", out, restAll)

	// Nothing in the audit log holds a secret, and every step is there.
	code, audit, stderr := f.runCode(t, nil, "audit", "--json")
	if code == 0 {
		for _, a := range []string{"install.pending_install", "install.blocked", "install.complete", "install.installed", "install.enabled", "install.disabled"} {
			if !strings.Contains(audit, a) {
				t.Errorf("audit lacks %s", a)
			}
		}
	} else {
		t.Logf("audit command: %d %s", code, stderr)
	}
}

// TestInstallCredentialsNeverLeak: a ${NAME} credential reaches the server
// and never appears in artefacts or output.
func TestInstallCredentialsNeverLeak(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "secretive")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: secretive\ndescription: Uses a token.\nallowed-tools: notes/echo\n---\nx\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {"notes": {"command": "`+testServer(t)+`", "env": {"SKILLGATE_TESTSERVER": "normal", "API_TOKEN": "${NOTES_TOKEN}", "LITERAL": "hunter2-literal"}}}}`), 0o644)
	const secret = "s3cr3t-value-0123456789"
	env := []string{"NOTES_TOKEN=" + secret}
	// The operator lets skillgate's environment answer NOTES_TOKEN.
	f.writeConfig(t, "credentials:\n  from_environment: [NOTES_TOKEN]\n")
	// Set in the environment but not named: withheld, the server not started.
	f.runCode(t, env, "install", dir)
	code, out, _ := f.runCode(t, nil, "review", "secretive")
	const withheld = "  error (credentials): mcpclient: server \"notes\": credentials: credential withheld: NOTES_TOKEN not given to the server: a skill not approved yet gets only the credentials an operator names; if you trust it with them, run: skillgate recheck secretive --credential NOTES_TOKEN\n"
	if !strings.Contains(out, withheld) || !strings.Contains(out, "  credentials: NOTES_TOKEN\n") {
		t.Errorf("withheld credential not reported:\n%s", out)
	}
	// Named and set: the server gets it.
	code, out, stderr := f.runCode(t, env, "recheck", "secretive", "--credential", "NOTES_TOKEN", "--json")
	if code != 0 || !strings.Contains(out, `"state": "awaiting_approval"`) {
		t.Fatalf("recheck with credential: %d %s %s", code, out, stderr)
	}
	f.runCode(t, nil, "remove", "secretive")
	// Named but not set: missing.
	f.runCode(t, nil, "install", dir, "--credential", "NOTES_TOKEN")
	if _, out, _ = f.runCode(t, nil, "review", "secretive", "--json"); !strings.Contains(out, "credential not set: NOTES_TOKEN given to the server but not set") {
		t.Errorf("missing credential not reported: %s", out)
	}
	f.runCode(t, nil, "remove", "secretive")
	code, out, stderr = f.runCode(t, env, "install", dir, "--credential", "NOTES_TOKEN", "--json")
	if code != 0 || !strings.Contains(out, `"state": "awaiting_approval"`) {
		t.Fatalf("install with credential: %d %s %s", code, out, stderr)
	}
	filepath.WalkDir(filepath.Join(f.data), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the credential", p)
		}
		// The skill's own mcp.json holds what its author wrote; no artefact
		// may repeat a literal value.
		if strings.HasSuffix(p, ".json") && !strings.Contains(p, "/skill/") && bytes.Contains(b, []byte("hunter2-literal")) {
			t.Errorf("%s holds the literal env value", p)
		}
		return nil
	})
	if strings.Contains(out+stderr, secret) {
		t.Error("output holds the credential")
	}
}

// TestInstallCrashCLI kills the real binary with SIGKILL at points of the
// flow; the next command repairs, and the flow resumes.
func TestInstallCrashCLI(t *testing.T) {
	for _, point := range []string{"copy-before-rename", "install-after-row", "analyze-after-introspect", "approve-after-commit", "mirror-manifest.json"} {
		t.Run(point, func(t *testing.T) {
			f := emptyFixture(t)
			src := importable(t, "crashy", "allowed-tools: notes/echo\n")
			env := []string{"SKILLGATE_TEST_CRASHPOINT=" + point}
			code, _, _ := f.runCode(t, env, "install", src)
			if code == -9 {
				goto resume
			}
			if code != 0 {
				t.Fatalf("install: %d", code)
			}
			if code, _, _ = f.runCode(t, env, "approve", "crashy"); code != -9 {
				t.Fatalf("approve did not crash at %s: %d", point, code)
			}
		resume:
			code, out, stderr := f.runCode(t, nil, "pending", "--all", "--json")
			if code != 0 {
				t.Fatalf("pending after crash: %s", stderr)
			}
			var ps []struct {
				State string   `json:"state"`
				Next  []string `json:"next"`
			}
			json.Unmarshal([]byte(out), &ps)
			state := ""
			if len(ps) == 1 {
				state = ps[0].State
			}
			switch state {
			case "", "pending_install", "analyzing":
				if state != "" && !strings.Contains(ps[0].Next[0], "skillgate recheck crashy") {
					t.Errorf("interrupted install not reported: %s", out)
				}
				if code, _, stderr := f.runCode(t, nil, "install", src); code != 0 {
					t.Fatalf("resume install: %s", stderr)
				}
				fallthrough
			case "awaiting_approval":
				if code, _, stderr := f.runCode(t, nil, "approve", "crashy"); code != 0 {
					t.Fatalf("resume approve: %s", stderr)
				}
			case "installed":
			default:
				t.Fatalf("state %s after crash at %s", state, point)
			}
			if code, _, stderr := f.runCode(t, nil, "enable", "crashy"); code != 0 {
				t.Fatalf("enable: %s", stderr)
			}
			ents, _ := os.ReadDir(filepath.Join(f.data, "imported"))
			if len(ents) != 2 { // .lock and one version
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("managed storage: %v", names)
			}
		})
	}
}

// TestRecheckDriftExits1: after approval, a recheck that finds a tool
// changed since its pin (a rug pull) blocks the capability, prints the
// review and exits 1, as drift does.
func TestRecheckDriftExits1(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "adder")
	os.MkdirAll(dir, 0o755)
	state := filepath.Join(t.TempDir(), "starts")
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: adder\ndescription: Adds numbers through the test server.\nallowed-tools: calc/add\n---\nAdd.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {"calc": {"command": "`+testServer(t)+`", "env": {"SKILLGATE_TESTSERVER": "rug-pull", "SKILLGATE_TESTSERVER_STATE": "`+state+`"}}}}`), 0o644)
	if code, out, stderr := f.runCode(t, nil, "install", "--unconfined", dir); code != 0 {
		t.Fatalf("install: %d\n%s\n%s", code, out, stderr)
	}
	for _, step := range [][]string{{"approve", "adder"}, {"enable", "adder"}} {
		if code, out, stderr := f.runCode(t, nil, step...); code != 0 {
			t.Fatalf("%s: %d\n%s\n%s", step[0], code, out, stderr)
		}
	}
	code, out, stderr := f.runCode(t, nil, "recheck", "--unconfined", "adder")
	if code != 1 || stderr != "" || !strings.Contains(out, "blocked since approval: calc/add: drift: definition changed (description)") {
		t.Errorf("recheck after a rug pull: %d\n%s\n%s", code, out, stderr)
	}
}
