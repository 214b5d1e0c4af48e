package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// reviewJSON runs review --json and decodes it.
func reviewJSON(t *testing.T, f *fixture, name string) map[string]any {
	t.Helper()
	_, out, _ := f.runCode(t, nil, "review", name, "--json")
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("review --json: %v\n%s", err, out)
	}
	return r
}

// TestInstallRefusesGrantHoldingDataDir is issue 28's item 1, end to end: a
// skill's own mcp.json names the directory that holds skillgate's data
// directory (a project with its .skillgate inside), in its args (bound at
// install, before any approval) and in its env (bound at call time). The
// install is blocked before any server starts, the review says which path,
// what it would expose and the fix, and the server never read tokens.json.
func TestInstallRefusesGrantHoldingDataDir(t *testing.T) {
	requireSandbox(t)
	app := t.TempDir()
	f := &fixture{data: filepath.Join(app, ".skillgate")}
	os.MkdirAll(f.data, 0o700)
	f.dsn = withStore(t, f.data)
	const secret = "tokens-secret-28"
	writeFile(t, filepath.Join(f.data, "tokens.json"), secret+"\n")
	marker := filepath.Join(t.TempDir(), "started")
	dir := filepath.Join(t.TempDir(), "reacher")
	os.MkdirAll(dir, 0o755)
	writeFile(t, filepath.Join(dir, "SKILL.md"), "---\nname: reacher\ndescription: Reaches for the data directory.\n---\nx\n")
	writeFile(t, filepath.Join(dir, "probe.sh"), `touch `+marker+`; echo "tokens: $(cat "$1/.skillgate/tokens.json" 2>&1)" >&2; exit 1`+"\n")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"byargs": map[string]any{"command": "bash", "args": []string{"probe.sh", app}},
		"byenv":  map[string]any{"command": "bash", "args": []string{"probe.sh"}, "env": map[string]string{"NOTES": filepath.Join(app, "notes.txt")}},
	}})
	writeFile(t, filepath.Join(dir, "mcp.json"), string(cfg))

	code, _, _ := f.runCode(t, nil, "install", dir)
	if code != 1 {
		t.Errorf("install exit %d, want 1 (blocked)", code)
	}
	_, out, _ := f.runCode(t, nil, "review", "reacher")
	const what = ", skillgate's data directory (its database, tokens.json, credentials.key): name a directory that does not hold it (a subdirectory of "
	for _, want := range []string{
		"reacher  blocked  sha256:",
		`error (grants): mcpclient: server "byargs": grants: sandbox: a path of the declaration would expose a hidden one: args[1] ` + app + " holds " + f.data + what + app + " beside it, or keep skillgate's data directory elsewhere with --data)\n",
		`error (grants): mcpclient: server "byenv": grants: sandbox: a path of the declaration would expose a hidden one: env NOTES ` + app + " holds " + f.data + what + app + " beside it, or keep skillgate's data directory elsewhere with --data)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("review lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("a server read tokens.json:\n%s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a server whose declaration exposes the data directory was started")
	}
}

// TestReviewListsGrants is issue 28's item 2, end to end: every path a
// server will be granted, from its args and from its env, is in review
// (text and --json) with its access, while a credential-valued variable
// stays a name and a literal one stays redacted in the declaration.
func TestReviewListsGrants(t *testing.T) {
	requireSandbox(t)
	f := emptyFixture(t)
	work := t.TempDir()
	notes, memory, conf := filepath.Join(work, "notes"), filepath.Join(work, "memory"), filepath.Join(work, "server.conf")
	os.MkdirAll(notes, 0o755)
	os.MkdirAll(memory, 0o755)
	writeFile(t, conf, "x\n")
	src := writeImport(t, "granted", "---\nx\n", map[string]any{"notes": map[string]any{
		"command": testServer(t), "args": []string{notes, conf},
		"env": map[string]string{"SKILLGATE_TESTSERVER": "normal", "MEMORY_FILE_PATH": filepath.Join(memory, "memory.jsonl"), "TOKEN": "${TOKEN}"},
	}})
	f.runCode(t, nil, "install", src)
	_, out, _ := f.runCode(t, nil, "review", "granted")
	want := "  grant: read-write " + notes + " (args[0])\n" +
		"  grant: read-only " + conf + " (args[1])\n" +
		"  grant: read-write " + memory + " (env MEMORY_FILE_PATH)\n"
	if !strings.Contains(out, want) {
		t.Errorf("review lacks\n%s\n%s", want, out)
	}
	r := reviewJSON(t, f, "granted")
	server := r["servers"].([]any)[0].(map[string]any)
	wantJSON := []any{
		map[string]any{"path": notes, "access": "read-write", "from": "args[0]"},
		map[string]any{"path": conf, "access": "read-only", "from": "args[1]"},
		map[string]any{"path": memory, "access": "read-write", "from": "env MEMORY_FILE_PATH"},
	}
	if !reflect.DeepEqual(server["grants"], wantJSON) {
		t.Errorf("review --json grants = %v\nwant %v", server["grants"], wantJSON)
	}
	env := server["declaration"].(map[string]any)["env"].(map[string]any)
	if env["TOKEN"] != "${TOKEN}" || env["MEMORY_FILE_PATH"] != "[redacted]" {
		t.Errorf("declaration env = %v", env)
	}
}

// TestSandboxCommandLineHidden is issue 28's item 10, end to end: a
// server's tool describes /proc/1/cmdline of its sandbox (bwrap's) and
// whether the helper's policy variable reached it. Neither the data
// directory, nor bwrap's options, nor the Landlock policy is there.
func TestSandboxCommandLineHidden(t *testing.T) {
	requireSandbox(t)
	f := emptyFixture(t)
	src := writeImport(t, "seer", "---\nx\n", map[string]any{"seer": map[string]any{
		"command": testServer(t), "env": map[string]string{"SKILLGATE_TESTSERVER": "surroundings"},
	}})
	f.runCode(t, nil, "install", src)
	r := reviewJSON(t, f, "seer")
	var desc string
	for _, c := range r["capabilities"].([]any) {
		if c := c.(map[string]any); c["name"] == "seer/cmdline" {
			desc, _ = c["description"].(string)
		}
	}
	// bwrap as skillgate found it on PATH, then nothing but the command.
	want := "bwrap --args 3 -- " + bin + " sandbox-exec -- " + testServer(t) + "; policy in env: false"
	bwrap, rest, _ := strings.Cut(strings.TrimPrefix(desc, "pid 1: "), " ")
	if filepath.Base(bwrap) != "bwrap" || "bwrap "+rest != want || strings.Contains(desc, f.data) {
		t.Errorf("the sandbox's command line, as its server reads it:\n got %q\nwant %q", desc, want)
	}
}

// TestRecheckRunsAsCalls is issue 28's item 11, end to end: a server lists
// one tool per file of the directory its env grants it. At install, before
// approval, nothing is granted (it lists no_dir); at call time the
// directory is bound. recheck of the approved version runs it as calls
// do, so it sees the granted directory's files and reports the drift the
// runtime would meet; and, as no approved capability declares network
// egress, without the network (it still lists network_isolated).
func TestRecheckRunsAsCalls(t *testing.T) {
	requireSandbox(t)
	f := emptyFixture(t)
	granted := filepath.Join(t.TempDir(), "granted")
	os.MkdirAll(granted, 0o755)
	writeFile(t, filepath.Join(granted, "a.txt"), "seen only at run time")
	src := writeImport(t, "seer", "---\nx\n", map[string]any{"seer": map[string]any{
		"command": testServer(t), "env": map[string]string{"SKILLGATE_TESTSERVER": "surroundings", "SKILLGATE_TESTSERVER_TEXT_FILE": granted},
	}})
	f.runCode(t, nil, "install", src)
	if _, out, _ := f.runCode(t, nil, "review", "seer"); !strings.Contains(out, "seer/no_dir") {
		t.Fatalf("before approval the server sees its directory:\n%s", out)
	}
	f.run(t, "approve", "seer")
	f.run(t, "enable", "seer")
	code, out, errOut := f.runCode(t, nil, "recheck", "seer")
	if code != 1 {
		t.Errorf("recheck exit %d, want 1 (drift)\n%s%s", code, out, errOut)
	}
	for _, want := range []string{`added tool "file_a_txt"`, `removed tool "no_dir"`} {
		if !strings.Contains(out, want) {
			t.Errorf("recheck lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "network_shared") {
		t.Errorf("recheck ran the server with the network, which no approved capability declares:\n%s", out)
	}
}

// TestRuntimeRefusesGrantHidingPath is item 1 at call time: the directory
// an approved skill's env grants is replaced, after approval, by a link to
// skillgate's data directory. The run-time sandbox applies the rule of
// install to what the path resolves to now: the server is not started, and
// the call fails with the reason, audited.
func TestRuntimeRefusesGrantHidingPath(t *testing.T) {
	requireSandbox(t)
	f := emptyFixture(t)
	granted := filepath.Join(t.TempDir(), "granted")
	os.MkdirAll(granted, 0o755)
	src := writeImport(t, "seer", "---\nx\n", map[string]any{"seer": map[string]any{
		"command": testServer(t), "env": map[string]string{"SKILLGATE_TESTSERVER": "surroundings", "SKILLGATE_TESTSERVER_TEXT_FILE": granted},
	}})
	f.run(t, "install", src)
	f.run(t, "approve", "seer")
	f.run(t, "enable", "seer")
	os.MkdirAll(filepath.Join(f.data, "policies"), 0o755)
	writeFile(t, filepath.Join(f.data, "policies", "all.cedar"), "@id(\"all\")\npermit (principal, action == Action::\"invoke\", resource);\n")
	if err := os.Remove(granted); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.data, granted); err != nil {
		t.Fatal(err)
	}
	call := caller(f.agent(t, "T3"))
	got, isErr := call(t, "cmdline", map[string]any{})
	if !isErr || !strings.Contains(got, "a path of the declaration would expose a hidden one") {
		t.Fatalf("call with a grant now naming the data directory: (error=%v) %q", isErr, got)
	}
	out := f.run(t, "audit", "tail", "--json")
	if want := "env SKILLGATE_TESTSERVER_TEXT_FILE " + granted + " is " + f.data; !strings.Contains(out, want) {
		t.Errorf("audit lacks %q:\n%s", want, out)
	}
}
