package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// meta is the params._meta of a modern request at version v.
func meta(v string) string {
	return `"_meta":{"` + mcpserver.MetaProtocolVersion + `":"` + v + `","` + mcpserver.MetaClientCapabilities + `":{},"` +
		mcpserver.MetaClientInfo + `":{"name":"raw","version":"0"}}`
}

type rpcResponse struct {
	ID     json.RawMessage            `json:"id"`
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decode(t *testing.T, line string) rpcResponse {
	t.Helper()
	var r rpcResponse
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return r
}

// TestModernStdio is a client of 2026-07-28 on a stdio stream with raw
// lines: no initialize; server/discover without a protocol version gets
// -32022 with the supported versions (not "method not found", which would
// make the client take skillgate for an initialize-only server); its very
// first requests (a Skills extension method, a capability call) are served
// without a handshake, the capability call by the raw relay (the field the
// SDK does not know survives) with resultType added; a request at a
// version skillgate does not serve gets -32022.
func TestModernStdio(t *testing.T) {
	e := newEnv(t, storages[0])
	e.scan(t)
	src := &asyncSource{slowDone: make(chan error, 1)}
	gw, err := mcpserver.New(mcpserver.Options{Sessions: e.mgr, Catalog: e.Registry, Capabilities: src})
	if err != nil {
		t.Fatal(err)
	}
	const v = mcpserver.ModernProtocol
	r := newRawStdioOf(t, gw, principal("modern", skill.T1))

	d := decode(t, r.do(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`))
	if d.Error == nil || d.Error.Code != mcpserver.CodeUnsupportedProtocolVersion || !strings.Contains(string(d.Error.Data), `"2026-07-28"`) {
		t.Fatalf("server/discover without a version: %+v", d)
	}

	l := decode(t, r.do(`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{`+meta(v)+`}}`))
	if l.Error != nil || string(l.Result["cacheScope"]) != `"private"` || string(l.Result["ttlMs"]) != "60000" {
		t.Fatalf("first request skills/list: %+v", l)
	}

	line := r.do(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},` + meta(v) + `}}`)
	want := `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete",` + rawResult[1:] + `}`
	if line != want {
		t.Errorf("relayed modern call =\n%s\nwant\n%s", line, want)
	}
	if got := src.calls(); len(got) != 1 || got[0] != `echo {"a":1}` {
		t.Errorf("source calls %q", got)
	}

	bad := decode(t, r.do(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{},`+meta("2099-01-01")+`}}`))
	if bad.Error == nil || bad.Error.Code != mcpserver.CodeUnsupportedProtocolVersion {
		t.Errorf("unsupported version: %+v", bad)
	}

	badSkills := decode(t, r.do(`{"jsonrpc":"2.0","id":7,"method":"skills/list","params":{`+meta("2099-01-01")+`}}`))
	if badSkills.Error == nil || badSkills.Error.Code != mcpserver.CodeUnsupportedProtocolVersion {
		t.Errorf("skills/list at an unsupported version: %+v", badSkills.Error)
	}

	disc := decode(t, r.do(`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{`+meta(v)+`}}`))
	var versions []string
	if disc.Error != nil || json.Unmarshal(disc.Result["supportedVersions"], &versions) != nil || versions[0] != v ||
		string(disc.Result["cacheScope"]) != `"private"` {
		t.Errorf("server/discover: %+v", disc)
	}
	ls := decode(t, r.do(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ls","arguments":{"path":"/"},`+meta(v)+`}}`))
	if ls.Error != nil || !strings.Contains(string(ls.Result["content"]), "/workspace/") {
		t.Errorf("ls: %+v", ls)
	}
}

// TestLegacyStdioNegotiation: an initialize at a version skillgate serves
// gets that version, one it does not, the newest of the initialize
// generation; a relayed call's result then goes out exactly as sent.
func TestLegacyStdioNegotiation(t *testing.T) {
	e := newEnv(t, storages[0])
	e.scan(t)
	src := &asyncSource{slowDone: make(chan error, 1)}
	gw, err := mcpserver.New(mcpserver.Options{Sessions: e.mgr, Catalog: e.Registry, Capabilities: src})
	if err != nil {
		t.Fatal(err)
	}
	for asked, want := range map[string]string{"2025-06-18": "2025-06-18", "2025-11-25": "2025-11-25", "2024-01-01": "2025-11-25"} {
		r := newRawStdioOf(t, gw, principal("legacy", skill.T1))
		init := decode(t, r.do(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+asked+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`))
		if init.Error != nil || string(init.Result["protocolVersion"]) != `"`+want+`"` {
			t.Fatalf("initialize at %s: %+v, want %s", asked, init, want)
		}
		if _, err := r.in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
			t.Fatal(err)
		}
		if line := r.do(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`); line != `{"jsonrpc":"2.0","id":2,"result":`+rawResult+`}` {
			t.Errorf("relayed legacy call at %s = %s", want, line)
		}
	}
}
