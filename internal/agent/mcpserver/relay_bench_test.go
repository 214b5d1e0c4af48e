package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// fixedResult is a capability source whose one tool answers result at once.
type fixedResult struct{ result json.RawMessage }

func (fixedResult) Tools(context.Context, capability.Principal) ([]*mcp.Tool, error) {
	return []*mcp.Tool{{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (s fixedResult) Call(_ context.Context, _ capability.Caller, _ string, _ json.RawMessage, done func(json.RawMessage)) {
	done(s.result)
}

// BenchmarkStdioRelay is the round trip of a capability call through a
// stdio connection's raw relay (in-process pipes, a source that answers at
// once): what skillgate's own handling of the line costs, for a client of
// the initialize generation (after its handshake) and one of 2026-07-28
// (every request with its _meta, no handshake; the result gets resultType),
// with a 40-byte and a 62 KB result.
func BenchmarkStdioRelay(b *testing.B) {
	e := newEnv(b, storages[0])
	big := `{"content":[{"type":"text","text":"` + strings.Repeat("La parte vendedora transmite la finca libre de cargas. ", 1130) + `"}]}`
	for _, size := range []struct {
		name   string
		result string
	}{{"40B", `{"content":[{"type":"text","text":"ok"}]}`}, {"62KB", big}} {
		for _, v := range []string{"2025-06-18", mcpserver.ModernProtocol} {
			b.Run(size.name+"/"+v, func(b *testing.B) {
				gw, err := mcpserver.New(mcpserver.Options{Sessions: e.mgr, Catalog: e.Registry, Capabilities: fixedResult{json.RawMessage(size.result)}})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				conn, err := gw.Connect(ctx, principal("bench", skill.T1), "", nil)
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				go func() { _ = conn.Server().Run(ctx, conn.StdioTransport(inR, outW)); outW.Close() }()
				defer inW.Close()
				out := bufio.NewReaderSize(outR, 1<<20)
				roundTrip := func(line string) string {
					if _, err := io.WriteString(inW, line+"\n"); err != nil {
						b.Fatal(err)
					}
					for {
						l, err := out.ReadString('\n')
						if err != nil {
							b.Fatal(err)
						}
						if !strings.Contains(l, `"method"`) {
							return l
						}
					}
				}
				extra := ""
				if v >= mcpserver.ModernProtocol {
					extra = `,` + meta(v)
				} else {
					roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
					if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
						b.Fatal(err)
					}
				}
				// The first call may reach the SDK before its session is
				// ready: it is left out.
				roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{}` + extra + `}}`)
				id := 1
				b.SetBytes(int64(len(size.result)))
				for b.Loop() {
					id++
					l := roundTrip(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"read","arguments":{"path":"/notes/a.md"}` + extra + `}}`)
					if len(l) < len(size.result) {
						b.Fatalf("short answer %.200s", l)
					}
				}
			})
		}
	}
}
