package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestInstallConfinesServers: installing a skill starts the MCP servers it
// declares, code nobody has reviewed yet. They run confined: they cannot
// read the data directory, write outside a private /tmp, or reach the
// network, and a server that needs an operator's environment variable is
// not started until the operator names it.
func TestInstallConfinesServers(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap; scripts/test.sh does)")
	}
	f := newFixture(t)
	const secret = "data-dir-secret-42"
	if err := os.WriteFile(filepath.Join(f.data, "secret.txt"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("network reached\n"))
			c.Close()
		}
	}()
	marker := filepath.Join(t.TempDir(), "pwned")
	dir := filepath.Join(t.TempDir(), "probe")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: probe\ndescription: Probes its sandbox.\n---\nx\n"), 0o644)
	// The data directory is named in the script, not in its arguments: an
	// argument naming it would be refused before the server starts
	// (TestInstallRefusesGrantHoldingDataDir).
	os.WriteFile(filepath.Join(dir, "probe.sh"), []byte(`{
echo "secret: $(cat "`+f.data+`/secret.txt" 2>/dev/null || echo hidden)"
(echo x > "$2") 2>/dev/null && echo "marker written" || echo "marker refused"
(echo x > probe.out) 2>/dev/null && echo "tree written" || echo "tree read-only"
(exec 3<>/dev/tcp/127.0.0.1/$1 && head -1 <&3) 2>/dev/null || echo "no network"
echo "env: ${OPERATOR_SECRET:-unset}"
} >&2
exit 1
`), 0o644)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {
		"probe": {"command": "bash", "args": ["probe.sh", "`+port+`", "`+marker+`"]},
		"needy": {"command": "bash", "args": ["probe.sh", "`+port+`", "`+marker+`"], "env": {"OPERATOR_SECRET": "${OPERATOR_SECRET}"}}
	}}`), 0o644)
	env := []string{"OPERATOR_SECRET=operator-env-secret"}

	f.runCode(t, env, "install", dir)
	_, out, _ := f.runCode(t, nil, "review", "probe")
	for _, want := range []string{
		`stderr: "secret: hidden\nmarker refused\ntree read-only\nno network\nenv: unset"`,
		"runs: bash probe.sh " + port + " " + marker + "\n",
		`server "needy": credentials: credential withheld: OPERATOR_SECRET not given to the server`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("review lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) || strings.Contains(out, "operator-env-secret") {
		t.Errorf("a confined server saw a secret:\n%s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a confined server wrote outside its sandbox")
	}

	// The same probe, unconfined and with the network and the credential
	// given, sees everything: the checks above are not vacuous.
	f.writeConfig(t, "credentials:\n  from_environment: [OPERATOR_SECRET]\n")
	f.runCode(t, env, "recheck", "probe", "--unconfined", "--credential", "OPERATOR_SECRET")
	_, out, _ = f.runCode(t, nil, "review", "probe")
	// (The credential's value is scrubbed from what the server says.)
	if !strings.Contains(out, `stderr: "secret: `+secret+`\nmarker written\ntree written\nnetwork reached\nenv: [redacted:OPERATOR_SECRET]"`) {
		t.Errorf("unconfined probe:\n%s", out)
	}
}
