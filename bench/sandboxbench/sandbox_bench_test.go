// Package sandboxbench measures what the run-time sandbox costs an
// upstream MCP server: its start (bwrap, the helper's limits and Landlock
// ruleset, then the server's own start and the MCP handshake) and each
// call once it runs (nothing is expected: the sandbox sits on no path a
// message takes). Run it with bench/sandbox.sh.
package sandboxbench

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

func TestMain(m *testing.M) {
	// The test binary is also the helper inside the sandbox and the
	// benchmark's own server.
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		err := sandbox.Exec(os.Args[2:], os.Environ())
		os.Stderr.WriteString("sandbox-exec: " + err.Error() + "\n")
		os.Exit(126)
	}
	if os.Getenv(testserver.EnvMode) != "" {
		os.Exit(testserver.Main())
	}
	os.Exit(m.Run())
}

// setup returns the confinement an imported skill's server gets, with the
// test binary as helper, or skips where bwrap is missing.
func setup(b *testing.B) (*sandbox.Bubblewrap, string) {
	b.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bwrap is not installed (apt-get install bubblewrap)")
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	data := b.TempDir()
	tree := filepath.Join(data, "imported", "d", "skill")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		b.Fatal(err)
	}
	r := &sandbox.Runtime{StateRoot: filepath.Join(data, "sandbox"), Hide: []string{data}, Helper: []string{self, sandbox.HelperCommand}}
	sb, err := r.Confiner(sandbox.Server{Skill: "bench/server", Version: "sha256:1", Dir: tree})
	if err != nil {
		b.Fatal(err)
	}
	return sb, tree
}

// server is one upstream the benchmark starts, with a cheap tool to call.
type server struct {
	name, tool, args string
	decl             string // mcp.json's server object
}

// servers returns the benchmark's own go-sdk server and, when
// scripts/setup-npm.sh installed it, npm server-memory.
func servers(b *testing.B) []server {
	self, _ := os.Executable()
	q, _ := json.Marshal(self)
	out := []server{{name: "go", tool: "echo", args: `{"text":"hi"}`,
		decl: `{"command": ` + string(q) + `, "env": {"` + testserver.EnvMode + `": "` + testserver.ModeNormal + `"}}`}}
	if dir := os.Getenv("SKILLGATE_TEST_NPM_DIR"); dir != "" {
		entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
		node, err := exec.LookPath("node")
		if _, serr := os.Stat(entry); err == nil && serr == nil {
			qn, _ := json.Marshal(node)
			qe, _ := json.Marshal(entry)
			mem, _ := json.Marshal(filepath.Join(b.TempDir(), "memory.jsonl"))
			out = append(out, server{name: "node", tool: "read_graph", args: `{}`,
				decl: `{"command": ` + string(qn) + `, "args": [` + string(qe) + `], "env": {"MEMORY_FILE_PATH": ` + string(mem) + `}}`})
		}
	}
	return out
}

func parse(b *testing.B, s server) mcpclient.ServerDecl {
	b.Helper()
	cfg, err := mcpclient.ParseConfig([]byte(`{"mcpServers": {"s": ` + s.decl + `}}`))
	if err != nil {
		b.Fatal(err)
	}
	return cfg.Servers[0]
}

// p50 returns the median of d in milliseconds.
func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// BenchmarkStart starts each server b.N times unconfined and b.N times
// confined, alternating, and reports the median start (dial: process
// start, initialize, tools/list) of each and their ratio.
func BenchmarkStart(b *testing.B) {
	sb, tree := setup(b)
	for _, s := range servers(b) {
		b.Run(s.name, func(b *testing.B) {
			decl := parse(b, s)
			var plain, confined []time.Duration
			ctx := context.Background()
			for b.Loop() {
				for _, c := range []mcpclient.Confiner{nil, sb} {
					start := time.Now()
					conn, err := mcpclient.Dial(ctx, decl, &mcpclient.ConnOptions{Options: mcpclient.Options{Dir: tree, Confine: c}})
					if err != nil {
						b.Fatal(err)
					}
					d := time.Since(start)
					conn.Close()
					if c == nil {
						plain = append(plain, d)
					} else {
						confined = append(confined, d)
					}
				}
			}
			b.ReportMetric(p50(plain), "unconfined-ms")
			b.ReportMetric(p50(confined), "confined-ms")
			b.ReportMetric(p50(confined)/p50(plain), "ratio")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkCall calls a cheap tool b.N times on a running unconfined and
// a running confined server, alternating, and reports the median call of
// each and the median of the paired differences (confined call i minus
// unconfined call i), which drift of the machine does not move.
func BenchmarkCall(b *testing.B) {
	sb, tree := setup(b)
	for _, s := range servers(b) {
		b.Run(s.name, func(b *testing.B) {
			decl := parse(b, s)
			ctx := context.Background()
			var conns [2]*mcpclient.Conn
			for i, c := range []mcpclient.Confiner{nil, sb} {
				conn, err := mcpclient.Dial(ctx, decl, &mcpclient.ConnOptions{Options: mcpclient.Options{Dir: tree, Confine: c}})
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				conns[i] = conn
			}
			args := json.RawMessage(s.args)
			call := func(c *mcpclient.Conn) time.Duration {
				done := make(chan error, 1)
				start := time.Now()
				c.CallToolRaw(ctx, s.tool, args, func(_ json.RawMessage, err error) { done <- err })
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			// Warm both servers up (a JIT, the first allocations).
			for range 50 {
				call(conns[0])
				call(conns[1])
			}
			var plain, confined, diff []time.Duration
			for b.Loop() {
				p, c := call(conns[0]), call(conns[1])
				plain, confined, diff = append(plain, p), append(confined, c), append(diff, c-p)
			}
			us := func(ms float64) float64 { return ms * 1000 }
			b.ReportMetric(us(p50(plain)), "unconfined-p50-µs")
			b.ReportMetric(us(p50(confined)), "confined-p50-µs")
			b.ReportMetric(us(p50(diff)), "added-paired-p50-µs")
			b.ReportMetric(0, "ns/op")
		})
	}
}
