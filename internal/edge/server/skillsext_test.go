package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// post sends one JSON-RPC request to /mcp and returns the status, content
// type and body.
func (f *fixture) post(t *testing.T, secret, sessionID, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), strings.TrimSpace(string(b))
}

// TestSkillsExtensionHTTP checks the extension over streamable HTTP: the
// methods the SDK refuses are answered as application/json for the token's
// principal, with or without an MCP session; a session that does not exist
// or is another principal's is refused as the SDK refuses it; a T4 and a
// T1 token see different skills, and the T4 one is refused a hidden skill
// exactly as an absent one; the SDK's own methods still work.
func TestSkillsExtensionHTTP(t *testing.T) {
	f := newFixture(t)
	t1, t4 := f.token(t, "lead", skill.T1), f.token(t, "kid", skill.T4)
	c1, err := f.connect(t, t1, "")
	if err != nil {
		t.Fatal(err)
	}
	sid := c1.cs.ID()
	if ext := c1.cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/skills"]; ext == nil {
		t.Fatalf("capabilities: no skills extension: %+v", c1.cs.InitializeResult().Capabilities)
	}
	list := `{"jsonrpc":"2.0","id":3,"method":"skills/list","params":{}}`
	uris := func(body string) []string {
		var r struct {
			Result struct {
				Skills []struct {
					URI string `json:"uri"`
				} `json:"skills"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		var out []string
		for _, s := range r.Result.Skills {
			out = append(out, s.URI)
		}
		return out
	}
	for _, tc := range []struct {
		name, secret, sid string
		status            int
		body              string // prefix
	}{
		{"T1 in its session", t1, sid, 200, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","skills":[`},
		{"T1 without a session", t1, "", 200, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","skills":[`},
		{"T4 without a session", t4, "", 200, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","skills":[`},
		{"T4 in T1's session", t4, sid, 403, "session user mismatch"},
		{"unknown session", t1, "nope", 404, "session not found"},
		{"no token", "", "", 401, ""},
	} {
		status, ctype, body := f.post(t, tc.secret, tc.sid, list)
		if status != tc.status || !strings.HasPrefix(body, tc.body) {
			t.Errorf("%s: %d %s, want %d %s…", tc.name, status, body, tc.status, tc.body)
		}
		if status == 200 && ctype != "application/json" {
			t.Errorf("%s: Content-Type %q", tc.name, ctype)
		}
	}
	_, _, b1 := f.post(t, t1, sid, list)
	_, _, b4 := f.post(t, t4, "", list)
	if got, want := strings.Join(uris(b1), " "), "skill://contratos/arrendamiento/SKILL.md skill://escrituras/compraventa/SKILL.md skill://escrituras/hipoteca/SKILL.md skill://pdf-forms/SKILL.md"; got != want {
		t.Errorf("T1 sees %s, want %s", got, want)
	}
	if got, want := strings.Join(uris(b4), " "), "skill://contratos/arrendamiento/SKILL.md"; got != want {
		t.Errorf("T4 sees %s, want %s", got, want)
	}
	for _, u := range []string{"skill://escrituras/hipoteca/SKILL.md", "skill://escrituras/nada/SKILL.md"} {
		_, _, got := f.post(t, t4, "", `{"jsonrpc":"2.0","id":"g","method":"skills/get","params":{"uri":"`+u+`"}}`)
		if want := `{"jsonrpc":"2.0","id":"g","error":{"code":-32602,"message":"No skill is served at ` + u + `"}}`; got != want {
			t.Errorf("T4 skills/get %s = %s, want %s", u, got, want)
		}
	}
	// resources/read goes through the SDK in the session.
	if _, _, got := f.post(t, t1, sid, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"skill://escrituras/hipoteca/SKILL.md"}}`); !strings.Contains(got, `"uri":"skill://escrituras/hipoteca/SKILL.md"`) || !strings.Contains(got, "name: hipoteca") {
		t.Errorf("resources/read in the session: %s", got)
	}
	if _, _, got := f.post(t, t1, sid, `{"jsonrpc":"2.0","id":6,"method":"resources/directory/read","params":{"uri":"skill://escrituras/compraventa/resources"}}`); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":6,"result":{"resultType":"complete","resources":[{"uri":"skill://escrituras/compraventa/resources/ejemplo.md"`) {
		t.Errorf("resources/directory/read: %s", got)
	}
	if text, isErr := c1.call(t, "skill_list", nil); isErr || !strings.Contains(text, "escrituras/hipoteca") {
		t.Errorf("skill_list still works: %s", text)
	}
	// A body larger than what is read to recognise the extension's
	// methods reaches the SDK whole, even when it mentions them.
	big := "skills/list " + strings.Repeat("x", 100<<10)
	if text, isErr := c1.call(t, "skill_list", map[string]any{"query": big}); !isErr || !strings.Contains(text, "query must be valid UTF-8 of at most 512 bytes") {
		t.Errorf("skill_list with a 100 KB query: %v %.200s", isErr, text)
	}
	// So does a request whose method is another, mentioning one.
	if text, isErr := c1.call(t, "skill_list", map[string]any{"query": `"skills/list"`}); isErr || !strings.Contains(text, "No skills match.") {
		t.Errorf("skill_list mentioning skills/list: %v %.200s", isErr, text)
	}
}
