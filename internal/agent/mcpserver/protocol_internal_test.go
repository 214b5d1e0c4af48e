package mcpserver

import "testing"

func TestWithResultType(t *testing.T) {
	for in, want := range map[string]string{
		`{"content":[]}`:                         `{"resultType":"complete","content":[]}`,
		` { "content":[]} `:                      `{"resultType":"complete","content":[]}`,
		`{}`:                                     `{"resultType":"complete"}`,
		`{ }`:                                    `{"resultType":"complete"}`,
		`{"resultType":"complete","content":[]}`: `{"resultType":"complete","content":[]}`,
		`{"content":[{"text":"\"resultType\""}]}`: `{"resultType":"complete","content":[{"text":"\"resultType\""}]}`,
		`[]`: `[]`,
	} {
		head, body := withResultType([]byte(in))
		if got := string(head) + string(body); got != want {
			t.Errorf("withResultType(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestRequestEra(t *testing.T) {
	supported := SupportedVersions()
	for meta, want := range map[string]era{
		``: eraLegacy,
		`{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`:                                                                          eraLegacy,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`:                          eraModern,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`:                                                                          eraRefused,
		`{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`:                          eraRefused,
		`{"progressToken":1, "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":{}}}`: eraModern,
	} {
		if got := requestEra([]byte(meta), supported); got != want {
			t.Errorf("requestEra(%s) = %d, want %d", meta, got, want)
		}
	}
}
