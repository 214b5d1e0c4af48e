package mcpclient_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []mcpclient.ServerDecl
	}{
		{
			name: "stdio and http, sorted by id",
			in: `{"mcpServers": {
				"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": "/data/memory.json"}},
				"github": {"url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}
			}}`,
			want: []mcpclient.ServerDecl{
				{ID: "github", Transport: capability.TransportHTTP, URL: "https://api.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"}},
				{ID: "memory", Transport: capability.TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}, Env: map[string]string{"MEMORY_FILE_PATH": "/data/memory.json"}},
			},
		},
		{
			name: "optional type agrees",
			in:   `{"mcpServers": {"a": {"type": "stdio", "command": "srv"}, "b": {"type": "streamable-http", "url": "http://127.0.0.1:8080/mcp"}}}`,
			want: []mcpclient.ServerDecl{
				{ID: "a", Transport: capability.TransportStdio, Command: "srv"},
				{ID: "b", Transport: capability.TransportHTTP, URL: "http://127.0.0.1:8080/mcp"},
			},
		},
		{
			name: "no servers",
			in:   `{"mcpServers": {}}`,
			want: []mcpclient.ServerDecl{},
		},
		{
			name: "escaped dollar brace",
			in:   `{"mcpServers": {"a": {"command": "srv", "env": {"PATTERN": "$${HOME} and $5"}}}}`,
			want: []mcpclient.ServerDecl{{ID: "a", Transport: capability.TransportStdio, Command: "srv", Env: map[string]string{"PATTERN": "$${HOME} and $5"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := mcpclient.ParseConfig([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Servers, tc.want) {
				t.Errorf("servers\n got %#v\nwant %#v", redactedAll(cfg.Servers), redactedAll(tc.want))
			}
			for _, d := range tc.want {
				if got, ok := cfg.Server(d.ID); !ok || got.ID != d.ID {
					t.Errorf("Server(%q) = %v, %v", d.ID, got.ID, ok)
				}
			}
			if _, ok := cfg.Server("absent"); ok {
				t.Error("Server(absent) found")
			}
		})
	}
}

func redactedAll(ds []mcpclient.ServerDecl) []capability.RedactedServer {
	out := make([]capability.RedactedServer, len(ds))
	for i, d := range ds {
		out[i] = d.Redacted()
	}
	return out
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	tooManyArgs := `["` + strings.Repeat(`a","`, mcpclient.MaxArgs) + `a"]`
	var manyServers strings.Builder
	for i := range mcpclient.MaxServers + 1 {
		if i > 0 {
			manyServers.WriteString(",")
		}
		fmt.Fprintf(&manyServers, `"s%d":{"command":"x"}`, i)
	}
	tests := []struct {
		name, in, want string
	}{
		{"too large", `{"mcpServers":{}}` + strings.Repeat(" ", mcpclient.MaxConfigBytes), "invalid mcp.json: mcp.json is 65553 bytes; the limit is 65536"},
		{"not JSON", `{"mcpServers":`, "invalid mcp.json: mcp.json: not valid JSON: unexpected end of input"},
		{"not an object", `[]`, "invalid mcp.json: mcp.json: the document must be a JSON object"},
		{"trailing data", `{"mcpServers":{}} {}`, "invalid mcp.json: mcp.json: trailing data after the JSON object"},
		{"invalid UTF-8", "{\"mcpServers\":{\"a\":{\"command\":\"\xff\"}}}", "invalid mcp.json: mcp.json: not valid UTF-8"},
		{"unknown top-level field", `{"mcpServers":{},"servers":{}}`, `invalid mcp.json: mcp.json: unknown field "servers"; the only top-level field is "mcpServers"`},
		{"case variant of top-level field", `{"McpServers":{}}`, `invalid mcp.json: mcp.json: unknown field "McpServers"; the only top-level field is "mcpServers"`},
		{"missing mcpServers", `{}`, `invalid mcp.json: mcp.json: missing field "mcpServers"`},
		{"duplicate key", `{"mcpServers":{},"mcpServers":{}}`, `invalid mcp.json: mcp.json: duplicate key "mcpServers"`},
		{"mcpServers not an object", `{"mcpServers":[]}`, `invalid mcp.json: mcpServers: mcpServers must be a JSON object`},
		{"bad server id", `{"mcpServers":{"my server":{"command":"x"}}}`, `invalid mcp.json: mcpServers: server id "my server": use letters, digits, '-' and '_', starting with a letter or digit`},
		{"empty server id", `{"mcpServers":{"":{"command":"x"}}}`, `invalid mcp.json: mcpServers: empty server id; use letters, digits, '-' and '_'`},
		{"long server id", `{"mcpServers":{"` + strings.Repeat("a", 65) + `":{"command":"x"}}}`, `invalid mcp.json: mcpServers: server id "` + strings.Repeat("a", 64) + `"… (65 bytes) is 65 bytes; the limit is 64`},
		{"ids differ in case", `{"mcpServers":{"GitHub":{"command":"x"},"github":{"command":"y"}}}`, `invalid mcp.json: mcpServers: server ids "GitHub" and "github" differ only in case; rename one`},
		{"too many servers", `{"mcpServers":{` + manyServers.String() + `}}`, `invalid mcp.json: mcpServers: 33 servers; the limit is 32`},
		{"unknown server field", `{"mcpServers":{"a":{"command":"x","cwd":"/"}}}`, `invalid mcp.json: mcpServers.a: unknown field "cwd"; a server has "command", "args", "env" (stdio) or "url", "headers" (streamable HTTP), and an optional "type"`},
		{"case variant of server field", `{"mcpServers":{"a":{"Command":"x"}}}`, `invalid mcp.json: mcpServers.a: unknown field "Command"; a server has "command", "args", "env" (stdio) or "url", "headers" (streamable HTTP), and an optional "type"`},
		{"both command and url", `{"mcpServers":{"a":{"command":"x","url":"http://h/"}}}`, `invalid mcp.json: mcpServers.a: both command and url are set; declare exactly one`},
		{"neither command nor url", `{"mcpServers":{"a":{"args":[]}}}`, `invalid mcp.json: mcpServers.a: neither command nor url is set; declare exactly one`},
		{"empty command", `{"mcpServers":{"a":{"command":""}}}`, `invalid mcp.json: mcpServers.a: command is empty`},
		{"command not a string", `{"mcpServers":{"a":{"command":["x"]}}}`, `invalid mcp.json: mcpServers.a: command must be a string, not an array`},
		{"NUL in command", `{"mcpServers":{"a":{"command":"x\u0000y"}}}`, `invalid mcp.json: mcpServers.a: command contains a NUL byte`},
		{"args not strings", `{"mcpServers":{"a":{"command":"x","args":[1]}}}`, `invalid mcp.json: mcpServers.a: args[0] must be a string, not a number`},
		{"too many args", `{"mcpServers":{"a":{"command":"x","args":` + tooManyArgs + `}}}`, `invalid mcp.json: mcpServers.a: args has 65 entries; the limit is 64`},
		{"credential in args", `{"mcpServers":{"a":{"command":"x","args":["--token","${TOKEN}"]}}}`, `invalid mcp.json: mcpServers.a: args[1] references a credential; arguments are visible to every local user, so pass credentials in env`},
		{"bad env name", `{"mcpServers":{"a":{"command":"x","env":{"1X":"v"}}}}`, `invalid mcp.json: mcpServers.a: env: name "1X" must be a letter or '_' followed by letters, digits and '_'`},
		{"env value not a string", `{"mcpServers":{"a":{"command":"x","env":{"X":true}}}}`, `invalid mcp.json: mcpServers.a: env.X must be a string, not a boolean`},
		{"unterminated reference", `{"mcpServers":{"a":{"command":"x","env":{"X":"${TOKEN"}}}}`, `invalid mcp.json: mcpServers.a: env.X: unterminated ${ (write $${ for a literal ${)`},
		{"bad reference name", `{"mcpServers":{"a":{"command":"x","env":{"X":"${A-B}"}}}}`, `invalid mcp.json: mcpServers.a: env.X: ${A-B} is not a credential reference; a name is a letter or '_' followed by letters, digits and '_' (write $${ for a literal ${)`},
		{"headers on a command", `{"mcpServers":{"a":{"command":"x","headers":{}}}}`, `invalid mcp.json: mcpServers.a: headers apply to url servers; a command server takes env`},
		{"env on a url", `{"mcpServers":{"a":{"url":"http://h/","env":{}}}}`, `invalid mcp.json: mcpServers.a: args and env apply to command servers; a url server takes headers`},
		{"url scheme", `{"mcpServers":{"a":{"url":"file:///etc/passwd"}}}`, `invalid mcp.json: mcpServers.a: url must use http or https, not "file"`},
		{"url user info", `{"mcpServers":{"a":{"url":"https://user:pw@h/"}}}`, `invalid mcp.json: mcpServers.a: url contains user info; put credentials in headers as ${NAME} references`},
		{"credential in url", `{"mcpServers":{"a":{"url":"https://h/${TOKEN}"}}}`, `invalid mcp.json: mcpServers.a: url may not reference credentials; put them in headers`},
		{"managed header", `{"mcpServers":{"a":{"url":"https://h/","headers":{"Mcp-Session-Id":"x"}}}}`, `invalid mcp.json: mcpServers.a: headers.Mcp-Session-Id is set by the MCP transport and may not be declared`},
		{"header line break", `{"mcpServers":{"a":{"url":"https://h/","headers":{"X-A":"a\r\nX-B: b"}}}}`, `invalid mcp.json: mcpServers.a: headers.X-A contains a line break`},
		{"header twice", `{"mcpServers":{"a":{"url":"https://h/","headers":{"X-A":"1","x-a":"2"}}}}`, `invalid mcp.json: mcpServers.a: headers.x-a is declared twice (header names are case-insensitive)`},
		{"bad header name", `{"mcpServers":{"a":{"url":"https://h/","headers":{"X A":"1"}}}}`, "invalid mcp.json: mcpServers.a: headers: name \"X A\" must be an HTTP token (letters, digits and !#$%&'*+.^_`|~-)"},
		{"type disagrees", `{"mcpServers":{"a":{"type":"http","command":"x"}}}`, `invalid mcp.json: mcpServers.a: type is "http" but command is set; use url`},
		{"sse type", `{"mcpServers":{"a":{"type":"sse","url":"http://h/"}}}`, `invalid mcp.json: mcpServers.a: type "sse" (the deprecated HTTP+SSE transport) is not supported; use a streamable HTTP url`},
		{"unknown type", `{"mcpServers":{"a":{"type":"ws","url":"http://h/"}}}`, `invalid mcp.json: mcpServers.a: type "ws" is not one of "stdio", "http", "streamable-http"`},
		{"server not an object", `{"mcpServers":{"a":"npx server"}}`, `invalid mcp.json: mcpServers.a: a server declaration must be a JSON object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := mcpclient.ParseConfig([]byte(tc.in))
			if err == nil {
				t.Fatalf("ParseConfig succeeded: %v", cfg.Servers)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %s\nwant %s", err, tc.want)
			}
			if !errors.Is(err, mcpclient.ErrInvalidConfig) {
				t.Error("error does not wrap ErrInvalidConfig")
			}
		})
	}
}

func TestRedaction(t *testing.T) {
	t.Parallel()
	cfg, err := mcpclient.ParseConfig([]byte(`{"mcpServers": {
		"gh": {"url": "https://api.example.com/mcp?api_key=LITERAL-KEY&v=1", "headers": {"Authorization": "Bearer ${GH_TOKEN}", "X-Static": "LITERAL-SECRET"}},
		"local": {"command": "srv", "args": ["--verbose"], "env": {"TOKEN": "${LOCAL_TOKEN}", "PASSWORD": "hunter2-LITERAL", "MIXED": "pre-${A}-${B}"}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	gh, _ := cfg.Server("gh")
	local, _ := cfg.Server("local")

	wantGH := capability.RedactedServer{
		ID: "gh", Transport: capability.TransportHTTP,
		URL:         "https://api.example.com/mcp?api_key=[redacted]&v=[redacted]",
		Headers:     map[string]string{"Authorization": "[redacted]${GH_TOKEN}", "X-Static": "[redacted]"},
		Credentials: []string{"GH_TOKEN"},
	}
	if got := gh.Redacted(); !reflect.DeepEqual(got, wantGH) {
		t.Errorf("gh.Redacted()\n got %+v\nwant %+v", got, wantGH)
	}
	wantLocal := capability.RedactedServer{
		ID: "local", Transport: capability.TransportStdio, Command: "srv", Args: []string{"--verbose"},
		Env:         map[string]string{"TOKEN": "${LOCAL_TOKEN}", "PASSWORD": "[redacted]", "MIXED": "[redacted]${A}[redacted]${B}"},
		Credentials: []string{"A", "B", "LOCAL_TOKEN"},
	}
	if got := local.Redacted(); !reflect.DeepEqual(got, wantLocal) {
		t.Errorf("local.Redacted()\n got %+v\nwant %+v", got, wantLocal)
	}

	var logged strings.Builder
	logger := slog.New(slog.NewJSONHandler(&logged, nil))
	logger.Info("declared", "server", gh, "other", local)
	marshalled, _ := json.Marshal(cfg.Servers)
	for what, text := range map[string]string{
		"%v":   fmt.Sprintf("%v %v", gh, local),
		"%+v":  fmt.Sprintf("%+v %+v", gh, local),
		"%#v":  fmt.Sprintf("%#v %#v", gh, local),
		"%s":   fmt.Sprintf("%s %s", gh, local),
		"json": string(marshalled),
		"slog": logged.String(),
	} {
		for _, secret := range []string{"LITERAL-KEY", "LITERAL-SECRET", "hunter2"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s output contains %q: %s", what, secret, text)
			}
		}
	}
	const wantFormat = `ServerDecl{"id":"local","transport":"stdio","command":"srv","args":["--verbose"],"env":{"MIXED":"[redacted]${A}[redacted]${B}","PASSWORD":"[redacted]","TOKEN":"${LOCAL_TOKEN}"},"credentials":["A","B","LOCAL_TOKEN"]}`
	if got := fmt.Sprint(local); got != wantFormat {
		t.Errorf("fmt.Sprint\n got %s\nwant %s", got, wantFormat)
	}
}
