package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// connectVersion is connect with the Go SDK client asking for protocol
// version v, and, when sessionID is set, the Skillgate-Session header on
// every request.
func (f *fixture) connectVersion(t *testing.T, secret, sessionID, v string) *mcp.ClientSession {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + secret}}
	if sessionID != "" {
		h.Set(server.SessionHeader, sessionID)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   f.url + "/mcp",
		HTTPClient: &http.Client{Transport: headers{h, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatalf("connect at %s: %v", v, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func sdkCaller(cs *mcp.ClientSession) mcpservertest.CallFunc {
	return func(t testing.TB, tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var b strings.Builder
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
}

// TestBothGenerationsHTTP: clients of 2026-07-28 (stateless, their
// skillgate session in the Skillgate-Session header), 2025-11-25 and
// 2025-06-18 (initialize) on the same /mcp each get the version they ask
// for and complete the seed walk.
func TestBothGenerationsHTTP(t *testing.T) {
	f := newFixture(t)
	secret := f.token(t, "drafter", skill.T3)
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(v, func(t *testing.T) {
			sid := ""
			if v >= mcpserver.ModernProtocol {
				sid = "walk-" + strings.ReplaceAll(v, "-", "")
			}
			cs := f.connectVersion(t, secret, sid, v)
			if got := cs.InitializeResult().ProtocolVersion; got != v {
				t.Fatalf("negotiated %s, want %s", got, v)
			}
			mcpservertest.Run(t, mcpservertest.Walk(t, examples, true), sdkCaller(cs))
		})
	}
	if n := f.env.Gateway.StatelessConnections(); n != 1 {
		t.Errorf("%d connections serve modern sessions, want 1 (walk-20260728)", n)
	}
	// A modern client that names no session shares its principal's
	// sessionless connection: it reads and lists, and is told to name a
	// session to load a skill.
	cs := f.connectVersion(t, secret, "", mcpserver.ModernProtocol)
	if got, isErr := sdkCaller(cs)(t, "load_skill", map[string]any{"skill": "escrituras/compraventa"}); !isErr || got != mcpserver.SessionlessError {
		t.Errorf("load_skill without a session: %s", got)
	}
	if got, isErr := sdkCaller(cs)(t, "skill_list", map[string]any{}); isErr || !strings.Contains(got, "escrituras/compraventa") {
		t.Errorf("skill_list without a session: %s", got)
	}
}

// reply is the status and headers of a response whose body was read.
type reply struct {
	StatusCode int
	Header     http.Header
}

// rawPost POSTs one JSON-RPC request as a modern client would (or, with
// version "", as a legacy one) and returns the response's status and
// headers, its JSON-RPC message (from JSON or an event stream) decoded
// into out.
func (f *fixture) rawPost(t *testing.T, secret, sessionID, version, method, name, body string, out any) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	}
	if sessionID != "" {
		req.Header.Set(server.SessionHeader, sessionID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		var data []byte
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(d)
			}
		}
		b = data
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %d %s: %v", method, resp.StatusCode, b, err)
		}
	}
	return reply{resp.StatusCode, resp.Header}
}

// modernMeta is the params._meta of a raw modern request.
func modernMeta(v string) string {
	return `"_meta":{"` + mcpserver.MetaProtocolVersion + `":"` + v + `","` + mcpserver.MetaClientCapabilities + `":{},"` +
		mcpserver.MetaClientInfo + `":{"name":"raw","version":"0"}}`
}

type rawResponse struct {
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (r rawResponse) text(t *testing.T) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d %s", r.Error.Code, r.Error.Message)
	}
	var content []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(r.Result["content"], &content)
	var b strings.Builder
	for _, c := range content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestModernRawHTTP is a stateless client with plain POSTs: server/discover
// lists 2026-07-28; a request with no Skillgate-Session cannot load a skill
// (a tool error says to send the header); with the header it can, and the
// next requests naming the session find the skill, those without it do
// not; another principal's token cannot use the session (403); list
// results carry private cache hints; an unsupported version gets -32022
// with the supported versions.
func TestModernRawHTTP(t *testing.T) {
	f := newFixture(t)
	secret := f.token(t, "drafter", skill.T3)
	const v = mcpserver.ModernProtocol

	var disc rawResponse
	f.rawPost(t, secret, "", v, "server/discover", "", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernMeta(v)+`}}`, &disc)
	var versions []string
	var instructions string
	if disc.Error != nil || json.Unmarshal(disc.Result["supportedVersions"], &versions) != nil || versions[0] != v ||
		json.Unmarshal(disc.Result["instructions"], &instructions) != nil || !strings.Contains(instructions, "without a session") {
		t.Fatalf("server/discover: %+v", disc)
	}

	call := func(sid, tool, args string) (rawResponse, reply) {
		var out rawResponse
		resp := f.rawPost(t, secret, sid, v, "tools/call", tool,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`,`+modernMeta(v)+`}}`, &out)
		return out, resp
	}
	if out, resp := call("", "load_skill", `{"skill":"escrituras/compraventa"}`); out.text(t) != mcpserver.SessionlessError ||
		string(out.Result["isError"]) != "true" || resp.Header.Get(server.SessionHeader) != "" {
		t.Fatalf("load_skill without a session: %s %s", out.Result["isError"], out.text(t))
	}
	const sid = "raw-client-1"
	out, resp := call(sid, "load_skill", `{"skill":"escrituras/compraventa"}`)
	if resp.Header.Get(server.SessionHeader) != sid || !strings.HasPrefix(out.text(t), "Loaded escrituras/compraventa at /skills/compraventa") {
		t.Fatalf("load_skill: session %q, %s", resp.Header.Get(server.SessionHeader), out.text(t))
	}
	if out, _ := call(sid, "ls", `{"path":"/skills"}`); out.text(t) != "['/skills/compraventa/']" {
		t.Errorf("ls /skills in session %s = %s", sid, out.text(t))
	}
	if out, _ := call("", "ls", `{"path":"/"}`); strings.Contains(out.text(t), "/skills/") {
		t.Errorf("a request without the session sees %s", out.text(t))
	}
	other := f.token(t, "intruder", skill.T3)
	if resp := f.rawPost(t, other, sid, v, "tools/call", "ls", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ls","arguments":{"path":"/skills"},`+modernMeta(v)+`}}`, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another principal's request in session %s: %d, want 403", sid, resp.StatusCode)
	}

	var list rawResponse
	f.rawPost(t, secret, sid, v, "tools/list", "", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{`+modernMeta(v)+`}}`, &list)
	if string(list.Result["cacheScope"]) != `"private"` || string(list.Result["ttlMs"]) != "0" || string(list.Result["resultType"]) != `"complete"` {
		t.Errorf("tools/list cache hints: cacheScope %s ttlMs %s resultType %s", list.Result["cacheScope"], list.Result["ttlMs"], list.Result["resultType"])
	}

	var bad rawResponse
	f.rawPost(t, secret, sid, "2099-01-01", "tools/list", "", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{`+modernMeta("2099-01-01")+`}}`, &bad)
	if bad.Error == nil || bad.Error.Code != mcpserver.CodeUnsupportedProtocolVersion || !strings.Contains(string(bad.Error.Data), `"2026-07-28"`) {
		t.Errorf("unsupported version: %+v", bad.Error)
	}
	var badSkills rawResponse
	f.rawPost(t, secret, sid, "2099-01-01", "skills/list", "", `{"jsonrpc":"2.0","id":6,"method":"skills/list","params":{`+modernMeta("2099-01-01")+`}}`, &badSkills)
	if badSkills.Error == nil || badSkills.Error.Code != mcpserver.CodeUnsupportedProtocolVersion {
		t.Errorf("skills/list at an unsupported version: %+v", badSkills.Error)
	}
	var skills rawResponse
	f.rawPost(t, secret, sid, v, "skills/list", "", `{"jsonrpc":"2.0","id":7,"method":"skills/list","params":{`+modernMeta(v)+`}}`, &skills)
	if skills.Error != nil || string(skills.Result["cacheScope"]) != `"private"` || string(skills.Result["ttlMs"]) != "60000" {
		t.Errorf("skills/list: %+v", skills)
	}
}

// TestLegacyNegotiationHTTP: an initialize at a version skillgate does not
// support is answered with the newest legacy version; one it supports, with
// that version.
func TestLegacyNegotiationHTTP(t *testing.T) {
	f := newFixture(t)
	secret := f.token(t, "drafter", skill.T3)
	for asked, want := range map[string]string{"2025-06-18": "2025-06-18", "2024-01-01": "2025-11-25", "2025-11-25": "2025-11-25"} {
		var out rawResponse
		f.rawPost(t, secret, "", "", "initialize", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+asked+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, &out)
		if out.Error != nil || string(out.Result["protocolVersion"]) != `"`+want+`"` {
			t.Errorf("initialize at %s: %+v, want %s", asked, out, want)
		}
	}
}
