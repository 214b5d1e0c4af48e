package testregistry_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// conversation is what a client writes to an echo server: initialize,
// the initialized notification, tools/list and a call of echo.
var conversation = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"héllo \"world\""}}}`,
}

// echoTool is the tools/list entry of a tool of the echo servers.
const echoTool = `{"name":"echo","description":"Echo the text back.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`

// answers is what an echo server named name answers conversation with.
func answers(name string) []string {
	return []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"` + name + `","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[` + echoTool + `]}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"héllo \"world\""}]}}`,
	}
}

// converse runs argv with env, writes lines to its stdin and closes it,
// and checks that the server answers want, line for line, and exits 0.
func converse(t *testing.T, env []string, lines, want []string, argv ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\nstderr: %s", argv, err, stderr.String())
	}
	got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%v answered %d lines, want %d:\n%s\nstderr: %s", argv, len(got), len(want), stdout.String(), stderr.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("answer %d:\n got %s\nwant %s", i+1, got[i], want[i])
		}
	}
}

// cleanEnv is an environment of PATH and a private HOME only, so that no
// user configuration (~/.npmrc, pip.conf) reaches a client.
func cleanEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
}

// run runs argv with env (at most limit) and returns its combined output
// and error.
func run(t *testing.T, env []string, limit time.Duration, argv ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}
