package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// rawStdio runs a connection of p over in-memory pipes with hand-written
// JSON-RPC lines; do sends a request and returns its response line.
type rawStdio struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
}

func newRawStdio(t *testing.T, e *env, p capability.Principal) *rawStdio {
	t.Helper()
	return newRawStdioOf(t, e.gw, p)
}

// newRawStdioOf is newRawStdio on gateway gw.
func newRawStdioOf(t *testing.T, gw *mcpserver.Gateway, p capability.Principal) *rawStdio {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	conn, err := gw.Connect(ctx, p, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	outR, outW := io.Pipe()
	go func() {
		_ = conn.Server().Run(ctx, conn.StdioTransport(inR, outW))
		outW.Close()
	}()
	r := &rawStdio{t: t, in: inW, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID == nil && m.Method != "" {
				continue // a notification
			}
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	return r
}

func (r *rawStdio) do(line string) string {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
	select {
	case l := <-r.lines:
		return l
	case <-time.After(10 * time.Second):
		r.t.Fatalf("no response to %s", line)
	}
	return ""
}

// TestSkillsExtensionStdio drives the extension over stdio as a client
// does: the capabilities declare it (with directoryRead) and resources;
// skills/list, skills/get and resources/directory/read are answered by
// skillgate (the SDK would refuse them) with the request's id; skill files
// are read through the SDK's resources/read; a T4 agent is refused what a
// T1 agent sees, exactly as for what does not exist.
func TestSkillsExtensionStdio(t *testing.T) {
	e := newEnv(t, storages[0])
	for _, tc := range []struct {
		tier  skill.AgentTier
		skill string // listed skills, in order
	}{
		{skill.T1, "skill://contratos/arrendamiento/SKILL.md skill://escrituras/compraventa/SKILL.md skill://escrituras/hipoteca/SKILL.md skill://pdf-forms/SKILL.md"},
		{skill.T4, "skill://contratos/arrendamiento/SKILL.md"},
	} {
		t.Run(string(tc.tier), func(t *testing.T) {
			c := newRawStdio(t, e, principal("ext", tc.tier))
			// Before the handshake the SDK answers, and refuses.
			if got := c.do(`{"jsonrpc":"2.0","id":0,"method":"skills/list"}`); !strings.Contains(got, `"error"`) {
				t.Fatalf("skills/list before initialize: %s", got)
			}
			init := c.do(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
			var ir struct {
				Result struct {
					Capabilities struct {
						Resources  json.RawMessage            `json:"resources"`
						Extensions map[string]json.RawMessage `json:"extensions"`
					} `json:"capabilities"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(init), &ir); err != nil || ir.Result.Capabilities.Resources == nil ||
				string(ir.Result.Capabilities.Extensions["io.modelcontextprotocol/skills"]) != `{"directoryRead":true}` {
				t.Fatalf("initialize: %s", init)
			}
			c.in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))

			got := c.do(`{"jsonrpc":"2.0","id":"list-1","method":"skills/list","params":{}}`)
			var lr struct {
				ID     string `json:"id"`
				Result struct {
					Skills []struct {
						URI       string `json:"uri"`
						Resources []struct {
							URI string `json:"uri"`
						} `json:"resources"`
					} `json:"skills"`
					CacheScope string `json:"cacheScope"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(got), &lr); err != nil || lr.ID != "list-1" || lr.Result.CacheScope != "private" {
				t.Fatalf("skills/list: %s", got)
			}
			var listed []string
			for _, s := range lr.Result.Skills {
				listed = append(listed, s.URI)
				g := c.do(`{"jsonrpc":"2.0","id":7,"method":"skills/get","params":{"uri":"` + s.URI + `"}}`)
				if !strings.HasPrefix(g, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","skill":{"uri":"`+s.URI+`"`) {
					t.Errorf("skills/get %s: %s", s.URI, g)
				}
				for _, r := range s.Resources {
					rr := c.do(`{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"` + r.URI + `"}}`)
					if !strings.Contains(rr, `"result":{`) || !strings.Contains(rr, `"uri":"`+r.URI+`"`) {
						t.Errorf("resources/read %s: %s", r.URI, rr)
					}
				}
			}
			if strings.Join(listed, " ") != tc.skill {
				t.Errorf("skills/list = %v, want %s", listed, tc.skill)
			}
			if tc.tier == skill.T4 {
				// Hidden (exists for T1) and absent read the same.
				for _, u := range []string{"skill://escrituras/hipoteca/SKILL.md", "skill://escrituras/nada/SKILL.md"} {
					want := `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"No skill is served at ` + u + `"}}`
					if g := c.do(`{"jsonrpc":"2.0","id":9,"method":"skills/get","params":{"uri":"` + u + `"}}`); g != want {
						t.Errorf("skills/get %s = %s, want %s", u, g, want)
					}
					rr := c.do(`{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"` + u + `"}}`)
					if !strings.Contains(rr, `"code":-32602`) || !strings.Contains(rr, "No skill file is served at "+u) {
						t.Errorf("resources/read %s = %s", u, rr)
					}
				}
			}
			want := `{"jsonrpc":"2.0","id":11,"error":{"code":-32602,"message":"invalid cursor: it is not one that skills/list returned; omit it to start from the first page"}}`
			if g := c.do(`{"jsonrpc":"2.0","id":11,"method":"skills/list","params":{"cursor":"!"}}`); g != want {
				t.Errorf("bad cursor = %s, want %s", g, want)
			}
			// Another method still goes to the SDK.
			if g := c.do(`{"jsonrpc":"2.0","id":12,"method":"tools/list"}`); !strings.Contains(g, `"skill_list"`) {
				t.Errorf("tools/list: %.200s", g)
			}
		})
	}
}
