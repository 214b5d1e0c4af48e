package testregistry

import (
	"encoding/json"
	"strings"
)

// ProtocolVersions are the MCP protocol versions the servers of
// [MCPServerJS] and [MCPServerPy] speak, newest first: initialize echoes
// the client's when it is one of them and answers the first otherwise.
var ProtocolVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

// EchoDescription is the description of every tool of [MCPServerJS] and
// [MCPServerPy].
const EchoDescription = "Echo the text back."

// MCPServerJS returns the source of a tiny MCP server in plain Node.js
// (CommonJS, no dependencies, "#!/usr/bin/env node" first) that serves
// newline-delimited JSON-RPC on stdin and stdout under serverInfo
// {name, "1.0.0"}. It offers one tool per name in tools ("echo" when
// none), each described [EchoDescription], taking {"text": string},
// annotated read-only and closed-world, and answering
// [{"type":"text","text":<text>}]. It answers initialize (with one of
// [ProtocolVersions] and capabilities {tools:{}}), ping and tools/list,
// ignores notifications, and answers errors: -32601 to any other request,
// -32602 to a call of an unknown tool or without a string text, -32700
// (id null) to a line that is not JSON and -32600 (id null) to JSON that
// is not an object. Its replies are JSON.stringify's, byte for byte those
// of [MCPServerPy]. It exits 0 at the end of stdin.
//
// Put it in an [NPMPackage] as Files["index.js"] with Bin
// {"echo-mcp": "index.js"}; in a package of Type "module", name the file
// index.cjs instead.
func MCPServerJS(name string, tools ...string) string {
	return strings.NewReplacer(
		"@NAME@", jsonText(name),
		"@TOOLS@", jsonText(toolNames(tools)),
		"@VERSIONS@", jsonText(ProtocolVersions),
		"@DESCRIPTION@", jsonText(EchoDescription),
	).Replace(mcpServerJS)
}

// MCPServerPy returns the source of a tiny MCP server in pure Python 3
// (the standard library only), a module whose main() serves
// newline-delimited JSON-RPC on stdin and stdout and returns 0 at the end
// of stdin: [MCPServerJS]("echo-mcp", "echo") in Python, with the same
// replies byte for byte. Put it at Files["echo_mcp/server.py"] of a
// [Wheel] with ConsoleScripts {"echo-mcp": "echo_mcp.server:main"}. It
// flushes stdout after each reply.
func MCPServerPy() string {
	return strings.NewReplacer(
		"@NAME@", jsonText("echo-mcp"),
		"@TOOLS@", jsonText([]string{"echo"}),
		"@VERSIONS@", jsonText(ProtocolVersions),
		"@DESCRIPTION@", jsonText(EchoDescription),
	).Replace(mcpServerPy)
}

// toolNames is tools, or ["echo"] when empty.
func toolNames(tools []string) []string {
	if len(tools) == 0 {
		return []string{"echo"}
	}
	return tools
}

// jsonText is v as JSON, which is also a JavaScript and a Python literal
// for the strings and lists of strings used here (Go escapes U+2028 and
// U+2029, which older JavaScript rejects in strings; Python reads \uXXXX
// escapes in string literals too).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

const mcpServerJS = `#!/usr/bin/env node
'use strict';
// A tiny MCP server on stdio (newline-delimited JSON-RPC), written by
// skillgate's internal/testkit/testregistry.
const readline = require('readline');

const NAME = @NAME@;
const TOOLS = @TOOLS@;
const VERSIONS = @VERSIONS@;
const DESCRIPTION = @DESCRIPTION@;

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + '\n');
}

function fail(id, code, message) {
  send({jsonrpc: '2.0', id: id, error: {code: code, message: message}});
}

function tool(name) {
  return {
    name: name,
    description: DESCRIPTION,
    inputSchema: {type: 'object', properties: {text: {type: 'string'}}, required: ['text']},
    annotations: {readOnlyHint: true, openWorldHint: false},
  };
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function handle(line) {
  if (line.trim() === '') {
    return;
  }
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    fail(null, -32700, 'Parse error');
    return;
  }
  if (!isObject(msg)) {
    fail(null, -32600, 'Invalid Request');
    return;
  }
  if (typeof msg.method !== 'string' || !('id' in msg)) {
    return; // a response or a notification: nothing to answer
  }
  const id = msg.id;
  const params = isObject(msg.params) ? msg.params : {};
  switch (msg.method) {
    case 'initialize': {
      const asked = params.protocolVersion;
      send({jsonrpc: '2.0', id: id, result: {
        protocolVersion: VERSIONS.includes(asked) ? asked : VERSIONS[0],
        capabilities: {tools: {}},
        serverInfo: {name: NAME, version: '1.0.0'},
      }});
      return;
    }
    case 'ping':
      send({jsonrpc: '2.0', id: id, result: {}});
      return;
    case 'tools/list':
      send({jsonrpc: '2.0', id: id, result: {tools: TOOLS.map(tool)}});
      return;
    case 'tools/call': {
      if (typeof params.name !== 'string') {
        fail(id, -32602, 'name must be a string');
        return;
      }
      if (!TOOLS.includes(params.name)) {
        fail(id, -32602, 'Unknown tool: ' + params.name);
        return;
      }
      const args = isObject(params.arguments) ? params.arguments : {};
      if (typeof args.text !== 'string') {
        fail(id, -32602, 'text must be a string');
        return;
      }
      send({jsonrpc: '2.0', id: id, result: {content: [{type: 'text', text: args.text}]}});
      return;
    }
    default:
      fail(id, -32601, 'Method not found: ' + msg.method);
  }
}

const rl = readline.createInterface({input: process.stdin, crlfDelay: Infinity, terminal: false});
rl.on('line', handle);
// At the end of stdin nothing is left to wait for, and node exits.
`

const mcpServerPy = `"""A tiny MCP server on stdio (newline-delimited JSON-RPC), written by
skillgate's internal/testkit/testregistry."""

import json
import sys

NAME = @NAME@
TOOLS = @TOOLS@
VERSIONS = @VERSIONS@
DESCRIPTION = @DESCRIPTION@


def send(msg):
    data = json.dumps(msg, separators=(",", ":"), ensure_ascii=False) + "\n"
    sys.stdout.buffer.write(data.encode("utf-8"))
    sys.stdout.buffer.flush()


def fail(id, code, message):
    send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


def tool(name):
    return {
        "name": name,
        "description": DESCRIPTION,
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    }


def handle(line):
    if not line.strip():
        return
    try:
        msg = json.loads(line)
    except ValueError:
        fail(None, -32700, "Parse error")
        return
    if not isinstance(msg, dict):
        fail(None, -32600, "Invalid Request")
        return
    method = msg.get("method")
    if not isinstance(method, str) or "id" not in msg:
        return  # a response or a notification: nothing to answer
    id = msg["id"]
    params = msg.get("params")
    if not isinstance(params, dict):
        params = {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": asked if isinstance(asked, str) and asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": NAME, "version": "1.0.0"},
        }})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": id, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": [tool(t) for t in TOOLS]}})
    elif method == "tools/call":
        name = params.get("name")
        if not isinstance(name, str):
            fail(id, -32602, "name must be a string")
            return
        if name not in TOOLS:
            fail(id, -32602, "Unknown tool: " + name)
            return
        args = params.get("arguments")
        if not isinstance(args, dict):
            args = {}
        text = args.get("text")
        if not isinstance(text, str):
            fail(id, -32602, "text must be a string")
            return
        send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        fail(id, -32601, "Method not found: " + method)


def main():
    try:
        while True:
            line = sys.stdin.buffer.readline()
            if not line:
                return 0
            handle(line.decode("utf-8", errors="replace"))
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
`
