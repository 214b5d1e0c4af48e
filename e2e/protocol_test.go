package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
)

// The protocol versions agents speak to skillgate: 2026-07-28 without a
// handshake, and two of the initialize generation.
var generations = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

const modern = "2026-07-28"

// protocolFixture is newFixture with an installed, enabled skill whose
// MCP server (the project's test server) offers echo, and a policy that
// permits every call: the seed walk's registry plus a capability to call.
func protocolFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	src := importable(t, "notes", "allowed-tools: notes/echo\n")
	if code, out, errs := f.runCode(t, nil, "install", src); code != 0 {
		t.Fatalf("install: %d %s %s", code, out, errs)
	}
	f.run(t, "approve", "notes")
	f.run(t, "enable", "notes")
	if err := os.MkdirAll(filepath.Join(f.data, "policies"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.data, "policies", "all.cedar"), []byte("@id(\"all\")\npermit (principal, action == Action::\"invoke\", resource);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// capabilityCall calls the notes skill's echo capability through call and
// checks that the upstream server's answer comes back.
func capabilityCall(t *testing.T, names []string, call mcpservertest.CallFunc) {
	t.Helper()
	i := slices.IndexFunc(names, func(n string) bool { return n == "echo" || strings.HasSuffix(n, "__echo") })
	if i < 0 {
		t.Fatalf("no echo capability among %v", names)
	}
	if got, isErr := call(t, names[i], map[string]any{"text": "hola"}); isErr || !strings.Contains(got, "hola") {
		t.Errorf("capability %s: %q (isError %v)", names[i], got, isErr)
	}
}

// TestProtocolGenerationsWalk: the Go SDK client asking for 2026-07-28,
// 2025-11-25 and 2025-06-18 gets that version from `skillgate mcp` and from
// `skillgate serve` (a 2026-07-28 client over HTTP names its session in
// the Skillgate-Session header) and completes the seed walk and a
// capability call.
func TestProtocolGenerationsWalk(t *testing.T) {
	f := protocolFixture(t)
	secret := f.tokenSecret(t, "drafter", "T3", "acme")
	srv := f.serve(t)
	for _, v := range generations {
		for _, transport := range []string{"mcp", "serve"} {
			t.Run(transport+"/"+v, func(t *testing.T) {
				var tr mcp.Transport
				if transport == "mcp" {
					cmd := exec.Command(bin, "--data", f.data, "mcp", "--agent", "drafter", "--tier", "T3", "--tenant", "acme", "--mount", "/ticket="+f.tickets)
					cmd.Stderr = &testWriter{t: t, prefix: "skillgate mcp: "}
					tr = &mcp.CommandTransport{Command: cmd}
				} else {
					h := http.Header{"Authorization": {"Bearer " + secret}}
					if v >= modern {
						h.Set("Skillgate-Session", "walk-"+strings.ReplaceAll(v, "-", ""))
					}
					tr = &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", HTTPClient: &http.Client{Transport: headerTransport{h}}}
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: v})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				if got := cs.InitializeResult().ProtocolVersion; got != v {
					t.Fatalf("negotiated %s, want %s", got, v)
				}
				mcpservertest.Run(t, mcpservertest.Walk(t, examples, true), caller(cs))
				capabilityCall(t, toolNames(t, cs), caller(cs))
			})
		}
	}
}

// headerTransport sets fixed headers on every request.
type headerTransport struct{ h http.Header }

func (ht headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range ht.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// rawMeta is the params._meta of a 2026-07-28 request.
const rawMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw-e2e","version":"0"}}`

// rawResult is a JSON-RPC response as a raw client reads it.
type rawResult struct {
	Result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError           bool                    `json:"isError"`
		Tools             []struct{ Name string } `json:"tools"`
		SupportedVersions []string                `json:"supportedVersions"`
		ResultType        string                  `json:"resultType"`
		CacheScope        string                  `json:"cacheScope"`
	} `json:"result"`
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r rawResult) text() string {
	var b strings.Builder
	for _, c := range r.Result.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// rawWalk is the raw stateless client's part of the acceptance: discover,
// tools/list with private cache hints, the seed walk and a capability call,
// every request a JSON-RPC line or POST of its own carrying its _meta.
func rawWalk(t *testing.T, do func(t testing.TB, method, name, params string) rawResult) {
	t.Helper()
	if d := do(t, "server/discover", "", `{`+rawMeta+`}`); d.Error != nil || len(d.Result.SupportedVersions) == 0 || d.Result.SupportedVersions[0] != modern {
		t.Fatalf("server/discover: %+v", d)
	}
	list := do(t, "tools/list", "", `{`+rawMeta+`}`)
	if list.Error != nil || list.Result.ResultType != "complete" || list.Result.CacheScope != "private" {
		t.Fatalf("tools/list: %+v", list)
	}
	var names []string
	for _, tl := range list.Result.Tools {
		names = append(names, tl.Name)
	}
	call := func(t testing.TB, tool string, args map[string]any) (string, bool) {
		t.Helper()
		a, _ := json.Marshal(args)
		r := do(t, "tools/call", tool, fmt.Sprintf(`{"name":%q,"arguments":%s,%s}`, tool, a, rawMeta))
		if r.Error != nil {
			t.Fatalf("%s: error %d %s", tool, r.Error.Code, r.Error.Message)
		}
		return r.text(), r.Result.IsError
	}
	mcpservertest.Run(t, mcpservertest.Walk(t, examples, true), call)
	capabilityCall(t, names, call)
}

// TestRawStatelessClient: a client that writes JSON-RPC by hand at
// 2026-07-28 (no initialize, every request with its _meta) completes the
// walk and a capability call on `skillgate mcp` (JSON lines on stdin) and
// on `skillgate serve` (plain POSTs naming the session in
// Skillgate-Session).
func TestRawStatelessClient(t *testing.T) {
	f := protocolFixture(t)
	secret := f.tokenSecret(t, "drafter", "T3", "acme")
	srv := f.serve(t)
	var ids atomic.Int64

	t.Run("mcp", func(t *testing.T) {
		cmd := exec.Command(bin, "--data", f.data, "mcp", "--agent", "drafter", "--tier", "T3", "--tenant", "acme", "--mount", "/ticket="+f.tickets)
		cmd.Stderr = &testWriter{t: t, prefix: "skillgate mcp: "}
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { in.Close(); cmd.Wait() }()
		lines := bufio.NewScanner(out)
		lines.Buffer(nil, 1<<20)
		rawWalk(t, func(t testing.TB, method, _, params string) rawResult {
			t.Helper()
			id := ids.Add(1)
			if _, err := fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
				t.Fatal(err)
			}
			for lines.Scan() {
				var r struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(lines.Bytes(), &r) != nil || string(r.ID) != fmt.Sprint(id) {
					continue // a notification
				}
				var res rawResult
				if err := json.Unmarshal(lines.Bytes(), &res); err != nil {
					t.Fatal(err)
				}
				return res
			}
			t.Fatalf("%s: no answer (%v)", method, lines.Err())
			return rawResult{}
		})
	})

	t.Run("serve", func(t *testing.T) {
		rawWalk(t, func(t testing.TB, method, name, params string) rawResult {
			t.Helper()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, ids.Add(1), method, params)
			req, _ := http.NewRequest(http.MethodPost, srv.url+"/mcp", strings.NewReader(body))
			for k, v := range map[string]string{"Authorization": "Bearer " + secret, "Content-Type": "application/json",
				"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": modern, "Mcp-Method": method, "Skillgate-Session": "raw-e2e"} {
				req.Header.Set(k, v)
			}
			if name != "" {
				req.Header.Set("Mcp-Name", name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				for _, l := range bytes.Split(b, []byte("\n")) {
					if d, ok := bytes.CutPrefix(l, []byte("data: ")); ok && bytes.Contains(d, []byte(`"id"`)) {
						b = d
					}
				}
			}
			var res rawResult
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatalf("%s: %d %s: %v", method, resp.StatusCode, b, err)
			}
			return res
		})
	})
}

// inspectorCaller calls tools through the MCP Inspector CLI, one process
// per call, with base (the target and its options) before the method.
func inspectorCaller(insp string, base ...string) mcpservertest.CallFunc {
	return func(t testing.TB, tool string, args map[string]any) (string, bool) {
		t.Helper()
		cmdArgs := append(append([]string{"--cli"}, base...), "--method", "tools/call", "--tool-name", tool)
		for k, v := range args {
			cmdArgs = append(cmdArgs, "--tool-arg", fmt.Sprintf("%s=%v", k, v))
		}
		cmd := exec.Command(insp, cmdArgs...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var res rawResult
		if jerr := json.Unmarshal(out.Bytes(), &res.Result); jerr != nil {
			t.Fatalf("mcp-inspector %s %v: %v (%v)\nstdout: %s\nstderr: %s", tool, args, jerr, err, out.String(), errb.String())
		}
		if (err != nil) != res.Result.IsError {
			t.Errorf("mcp-inspector %s: exit %v but isError %v", tool, err, res.Result.IsError)
		}
		return res.text(), res.Result.IsError
	}
}

// TestInspectorWalkHTTP replays the seed walk through the MCP Inspector
// CLI against `skillgate serve`, in the initialize generation (its
// default for a URL) and at 2026-07-28 (--protocol-era modern): every step
// is a separate Inspector process, which names the skillgate session in
// the Skillgate-Session header, so the loaded skill persists across them.
// The modern run also calls a capability.
func TestInspectorWalkHTTP(t *testing.T) {
	insp := inspector(t)
	f := protocolFixture(t)
	secret := f.tokenSecret(t, "drafter", "T3", "acme")
	srv := f.serve(t)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			call := inspectorCaller(insp, "--protocol-era", era, "--transport", "http", "--server-url", srv.url+"/mcp",
				"--header", "Authorization: Bearer "+secret, "--header", "Skillgate-Session: inspector-http-"+era)
			mcpservertest.Run(t, mcpservertest.Walk(t, examples, true), call)
			if era == "modern" {
				capabilityCall(t, []string{"echo"}, call)
			}
		})
	}
}

// TestInspectorWalkModernStdio is TestInspectorWalk at 2026-07-28: the
// MCP Inspector CLI with --protocol-era modern speaks to `skillgate mcp`
// without initialize, one process per step, the session kept by
// SKILLGATE_SESSION; then a capability call.
func TestInspectorWalkModernStdio(t *testing.T) {
	insp := inspector(t)
	f := protocolFixture(t)
	call := inspectorCaller(insp, "--protocol-era", "modern",
		"-e", "SKILLGATE_DATA="+f.data, "-e", "SKILLGATE_AGENT=drafter", "-e", "SKILLGATE_TIER=T3",
		"-e", "SKILLGATE_TENANT=acme", "-e", "SKILLGATE_SESSION=inspector-modern", bin, "mcp")
	mcpservertest.Run(t, mcpservertest.Walk(t, examples, false), call)
	capabilityCall(t, []string{"echo"}, call)
}
