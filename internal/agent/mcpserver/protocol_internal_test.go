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

// BenchmarkRelayRead is what the relay reads of a tools/call line before
// it decides (parseWire and, for a modern request, requestEra) and what it
// adds to the result of a modern one (withResultType), for a line of the
// initialize generation and one of 2026-07-28.
func BenchmarkRelayRead(b *testing.B) {
	supported := SupportedVersions()
	const legacy = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"read_graph","arguments":{"path":"/notes/a.md"}}}`
	const modern = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"read_graph","arguments":{"path":"/notes/a.md"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.0"}}}}`
	result := []byte(`{"content":[{"type":"text","text":"{\"entities\":[],\"relations\":[]}"}]}`)
	for _, bc := range []struct{ name, line string }{{"2025-06-18", legacy}, {"2026-07-28", modern}} {
		b.Run(bc.name, func(b *testing.B) {
			line := []byte(bc.line)
			for b.Loop() {
				req, ok := parseWire(line)
				if !ok {
					b.Fatal("parse")
				}
				if requestEra(req.Params.Meta, supported) == eraModern {
					h, body := withResultType(result)
					if len(h)+len(body) == 0 {
						b.Fatal("result")
					}
				}
			}
		})
	}
}
