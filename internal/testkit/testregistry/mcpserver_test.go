package testregistry_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/testregistry"
)

// edgeConversation exercises what conversation does not: a version the
// servers do not speak, ping, notifications, errors.
var edgeConversation = []string{
	`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}}`,
	``,
	`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`,
	`{"jsonrpc":"2.0","id":3,"method":"resources/list"}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{"text":"x"}}}`,
	`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":7}}}`,
	`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{}}}`,
	`not json`,
	`[1]`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\u2028ü\n"}}}`,
}

func edgeAnswers(name string) []string {
	return []string{
		`{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"` + name + `","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: resources/list"}}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Unknown tool: nope"}}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"text must be a string"}}`,
		`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"name must be a string"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\u2028ü\\n\"}]}}",
	}
}

// TestMCPServerJS runs the Node.js server's source directly.
func TestMCPServerJS(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	src := testregistry.MCPServerJS("echo-mcp")
	if !strings.HasPrefix(src, "#!/usr/bin/env node\n") {
		t.Fatalf("source starts %q", src[:30])
	}
	file := filepath.Join(dir, "index.js")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	converse(t, env, conversation, answers("echo-mcp"), node, file)
	converse(t, env, edgeConversation, edgeAnswers("echo-mcp"), node, file)

	many := filepath.Join(dir, "many.js")
	if err := os.WriteFile(many, []byte(testregistry.MCPServerJS(`we"ird`, "a", "b")), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := func(name string) string { return strings.Replace(echoTool, `"echo"`, `"`+name+`"`, 1) }
	converse(t, env, []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b","arguments":{"text":"bee"}}}`,
	}, []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"we\"ird","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[` + tool("a") + `,` + tool("b") + `]}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"bee"}]}}`,
	}, node, many)
}

// TestMCPServerPy runs the Python server's source directly.
func TestMCPServerPy(t *testing.T) {
	python := testregistry.Python(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "echo_mcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"echo_mcp/__init__.py": "", "echo_mcp/server.py": testregistry.MCPServerPy()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := cleanEnv(t)
	argv := []string{python, "-I", "-c", "import sys; sys.path.insert(0, " + pyString(dir) + "); from echo_mcp.server import main; sys.exit(main())"}
	converse(t, env, conversation, answers("echo-mcp"), argv...)
	converse(t, env, edgeConversation, edgeAnswers("echo-mcp"), argv...)
	// As a script too (python -m).
	converse(t, append(env, "PYTHONPATH="+dir), conversation, answers("echo-mcp"), python, "-m", "echo_mcp.server")
}
