package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requireSandbox skips where the run-time sandbox cannot run.
func requireSandbox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap; scripts/test.sh does)")
	}
}

// hostileSkill writes an imported skill whose server is the test server in
// its hostile mode.
func hostileSkill(t *testing.T, name string) string {
	t.Helper()
	return writeImport(t, name, "---\nProbes the sandbox it runs in.\n",
		map[string]any{"probe": map[string]any{"command": testServer(t), "args": []string{"hostile"}}})
}

// loopbackListener answers every connection with a line, on the host's
// loopback.
func loopbackListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("host reached\n"))
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// TestRuntimeSandboxHostileServer is issue 17's acceptance of the run-time
// sandbox: an imported skill's server, installed, approved and enabled,
// tries to read the operator's SSH key and /etc/shadow, write outside its
// state directory, reach a loopback port with no egress declared, resolve
// a host name, fork 10,000 processes, allocate 4 GiB, write a 2 GiB file
// and outlive skillgate's SIGKILL. Every attempt fails and the server says
// so; it can write its own state directory; another skill keeps answering,
// in the same connection and in another agent's.
func TestRuntimeSandboxHostileServer(t *testing.T) {
	requireSandbox(t)
	f := emptyFixture(t)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	idRSA := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.WriteFile(idRSA, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "pwned")
	addr := loopbackListener(t)

	for _, name := range []string{"hostile", "bystander"} {
		src := hostileSkill(t, name)
		f.run(t, "install", src)
		f.run(t, "approve", name)
		f.run(t, "enable", name)
	}
	os.MkdirAll(filepath.Join(f.data, "policies"), 0o755)
	if err := os.WriteFile(filepath.Join(f.data, "policies", "all.cedar"), []byte("@id(\"all\")\npermit (principal, action == Action::\"invoke\", resource);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := installedTree(t, f, "hostile")

	// The agent's skillgate, started here so that the test can SIGKILL it.
	env := append(os.Environ(), "HOME="+home)
	gw := exec.Command(bin, "--data", f.data, "mcp", "--agent", "drafter", "--tier", "T3", "--tenant", "acme")
	gw.Env = env
	gw.Stderr = &testWriter{t: t, prefix: "skillgate mcp: "}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: gw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := map[string]string{} // tool → the name agents call it by, for skill hostile
	var bystanderEcho string
	for _, n := range toolNames(t, cs) {
		switch {
		case strings.HasPrefix(n, "bystander__"):
			if n == "bystander__echo" {
				bystanderEcho = n
			}
		case strings.HasPrefix(n, "hostile__"):
			names[strings.TrimPrefix(n, "hostile__")] = n
		default:
			if _, ok := names[n]; !ok {
				names[n] = n
			}
		}
	}
	if bystanderEcho == "" || names["linger"] == "" {
		t.Fatalf("tools: %v", toolNames(t, cs))
	}
	call := caller(cs)

	// What agents read names no host path of skillgate's: the data
	// directory (and the installs under it) reads as "[host path]".
	agentSees := strings.NewReplacer(filepath.Join(f.data, "imported"), "[host path]", f.data, "[host path]").Replace
	marker := "sg-linger-" + rand.Text()
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": idRSA}, "read " + idRSA + ": no such file or directory"},
		{"read_file", map[string]any{"path": "/etc/shadow"}, "read /etc/shadow: permission denied"},
		{"read_file", map[string]any{"path": filepath.Join(f.data, "skillgate.db")}, "read " + agentSees(filepath.Join(f.data, "skillgate.db")) + ": no such file or directory"},
		{"write_file", map[string]any{"path": outside}, "write " + outside + ": no such file or directory"},
		{"write_file", map[string]any{"path": filepath.Join(tree, "SKILL.md")}, "write " + agentSees(filepath.Join(tree, "SKILL.md")) + ": read-only file system"},
		{"write_file", map[string]any{"path": "/usr/pwned"}, "write /usr/pwned: read-only file system"},
		{"connect", map[string]any{"address": addr}, "connect " + addr + ": permission denied"},
		{"resolve", map[string]any{"address": "example.com"}, "resolve example.com: lookup failed"},
		{"fork", map[string]any{"count": 10000}, "resource temporarily unavailable"},
		{"alloc", map[string]any{"count": int64(4 << 30)}, "allocate 4294967296 bytes: cannot allocate memory"},
		{"write_big", map[string]any{"path": "/tmp/big", "count": int64(2 << 30)}, "wrote 268435456 of 2147483648 bytes: no space left on device"},
		{"write_file", map[string]any{"path": "in-tree.txt"}, "write in-tree.txt: read-only file system"},
		{"linger", map[string]any{"marker": marker}, "lingering"},
	}
	for _, tc := range tests {
		got, isErr := call(t, names[tc.tool], tc.args)
		t.Logf("%s: %s", tc.tool, got)
		if isErr || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: got (error=%v) %q, want %q", tc.tool, tc.args, isErr, got, tc.want)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the hostile server wrote outside its state directory")
	}

	// It may write its state directory, DATA/sandbox/<skill>/<version>,
	// where a file is bounded too.
	matches, _ := filepath.Glob(filepath.Join(f.data, "sandbox", "hostile", "*"))
	if len(matches) != 1 {
		t.Fatalf("state directories of hostile: %v", matches)
	}
	big := filepath.Join(matches[0], "big")
	if got, _ := call(t, names["write_big"], map[string]any{"path": big, "count": int64(2 << 30)}); got != "wrote 1073741824 of 2147483648 bytes: file too large" {
		t.Errorf("write_big in the state directory: %q", got)
	}
	stateNote := filepath.Join(matches[0], "note.txt")
	if got, isErr := call(t, names["write_file"], map[string]any{"path": stateNote}); isErr || got != "wrote "+agentSees(stateNote) {
		t.Fatalf("write in the state directory: %q", got)
	}
	if st, err := os.Stat(matches[0]); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("state directory: %v %v", st.Mode(), err)
	}
	if b, err := os.ReadFile(stateNote); err != nil || string(b) != "written by a hostile server\n" {
		t.Fatalf("state note: %q %v", b, err)
	}

	// skillgate keeps serving: the other skill answers, here and to
	// another agent.
	if got, isErr := call(t, bystanderEcho, map[string]any{"path": "still here"}); isErr || got != "echo: still here" {
		t.Fatalf("bystander after the attacks: (error=%v) %q", isErr, got)
	}
	other := caller(f.agent(t, "T3", "reviewer"))
	if got, isErr := other(t, bystanderEcho, map[string]any{"path": "another agent"}); isErr || got != "echo: another agent" {
		t.Fatalf("bystander for another agent: (error=%v) %q", isErr, got)
	}

	// The lingering process dies with skillgate, even by SIGKILL.
	if len(processesWith(marker)) == 0 {
		t.Fatal("the lingering process is not running")
	}
	if err := gw.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(processesWith(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes %v outlived skillgate's SIGKILL by 20s", processesWith(marker))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRuntimeSandboxControl runs the hostile server unconfined, as
// skillgate ran every server before the sandbox: the attempts that the
// sandbox stops succeed here, so its test is not vacuous.
func TestRuntimeSandboxControl(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	idRSA := filepath.Join(home, ".ssh", "id_rsa")
	os.WriteFile(idRSA, []byte("fake key\n"), 0o600)
	outside := filepath.Join(t.TempDir(), "pwned")
	addr := loopbackListener(t)
	cmd := exec.Command(testServer(t), "hostile")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "control", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := caller(cs)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": idRSA}, "read " + idRSA + ": 9 bytes"},
		{"write_file", map[string]any{"path": outside}, "wrote " + outside},
		{"connect", map[string]any{"address": addr}, "connected to " + addr + ": host reached"},
		{"fork", map[string]any{"count": 20}, "started 20 of 20 processes"},
	} {
		if got, isErr := call(t, tc.tool, tc.args); isErr || got != tc.want {
			t.Errorf("%s: got (error=%v) %q, want %q", tc.tool, isErr, got, tc.want)
		}
	}
}

// installedTree returns the directory of an installed skill in managed
// storage (DATA/imported/<digest>/skill).
func installedTree(t *testing.T, f *fixture, name string) string {
	t.Helper()
	trees, _ := filepath.Glob(filepath.Join(f.data, "imported", "*", "skill"))
	for _, tree := range trees {
		if b, err := os.ReadFile(filepath.Join(tree, "SKILL.md")); err == nil && strings.Contains(string(b), "\nname: "+name+"\n") {
			return tree
		}
	}
	t.Fatalf("no installed tree of %s among %v", name, trees)
	return ""
}

// processesWith lists the pids whose command line holds marker.
func processesWith(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRuntimeSandboxWithoutBwrap: where bubblewrap is missing, an imported
// skill's server is not started unconfined: its calls fail, saying how to
// install bubblewrap, and the failure is audited.
func TestRuntimeSandboxWithoutBwrap(t *testing.T) {
	f := emptyFixture(t)
	src := hostileSkill(t, "probe")
	f.run(t, "install", src)
	f.run(t, "approve", "probe")
	f.run(t, "enable", "probe")
	os.MkdirAll(filepath.Join(f.data, "policies"), 0o755)
	os.WriteFile(filepath.Join(f.data, "policies", "all.cedar"), []byte("@id(\"all\")\npermit (principal, action == Action::\"invoke\", resource);\n"), 0o644)

	gw := exec.Command(bin, "--data", f.data, "mcp", "--agent", "drafter", "--tier", "T3", "--tenant", "acme")
	gw.Env = append(os.Environ(), "PATH="+t.TempDir()) // no bwrap on it
	gw.Stderr = &testWriter{t: t, prefix: "skillgate mcp: "}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: gw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, isErr := caller(cs)(t, "echo", map[string]any{"path": "x"})
	const why = `mcpclient: server "probe": start: server did not start: sandbox unavailable: bwrap not found; the servers of probe run only confined (install bubblewrap: apt-get install bubblewrap)`
	if want := "skillgate: echo was allowed but never reached its server: " + why; !isErr || got != want {
		t.Fatalf("call without bwrap: (error=%v) %q, want %q", isErr, got, want)
	}
	cs.Close()
	out := f.run(t, "audit", "query", "--action", "capability.invoke", "--json")
	var rec struct {
		Subject string
		Data    struct{ UpstreamError string }
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &rec); err != nil || rec.Subject != "probe:probe/echo" || rec.Data.UpstreamError != why {
		t.Fatalf("the failure is not audited as such (%v):\n%s", err, out)
	}
}
