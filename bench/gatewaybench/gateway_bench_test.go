// Package gatewaybench measures what skillgate adds to a capability call:
// the same tool of the same upstream server (the npm server-memory's
// read_graph, a read) called directly over stdio, and through `skillgate mcp`,
// where the call is looked up in the agent's scope, validated against the
// approved schema, decided by the policy engine, audited and forwarded over
// a pooled stdio connection. Run it with bench/gateway.sh, or:
//
//	SKILLGATE_TEST_NPM_DIR=… go test -run '^$' -bench Gateway -benchtime 2000x ./bench/gatewaybench/
//
// It reports p50 and p99 latencies (µs) of each path besides ns/op (the
// time of one call on each of the three paths).
package gatewaybench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/bench/internal/benchbin"
)

var bin string

func TestMain(m *testing.M) {
	if os.Getenv(relayEnv) != "" {
		os.Exit(relay(os.Args[1:]))
	}
	os.Exit(benchbin.Main(m, filepath.Join("..", ".."), &bin))
}

// relayEnv makes the test binary a bare relay: it starts the command in its
// arguments and copies newline-delimited messages both ways, nothing else.
// It is the floor of what any process between agent and server costs: two
// more pipe writes and reads, and two more processes to schedule.
const relayEnv = "SKILLGATE_BENCH_RELAY"

func relay(args []string) int {
	if len(args) == 0 {
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 1
	}
	if err := cmd.Start(); err != nil {
		return 1
	}
	go func() {
		copyLines(in, os.Stdin)
		in.Close()
	}()
	copyLines(os.Stdout, out)
	return 0
}

func copyLines(w io.Writer, r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

func memoryServer(b *testing.B) (node, entry string) {
	dir := os.Getenv("SKILLGATE_TEST_NPM_DIR")
	if dir == "" {
		b.Skip("SKILLGATE_TEST_NPM_DIR is unset; run: eval \"$(scripts/setup-npm.sh)\"")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed")
	}
	return node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
}

func connect(b *testing.B, cmd *exec.Cmd) *mcp.ClientSession {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "gatewaybench", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// viaSkillgate installs, approves and enables a skill declaring the memory
// server in a fresh data directory, and connects an agent to `skillgate mcp`.
func viaSkillgate(b *testing.B, node, entry, memFile string) *mcp.ClientSession {
	data, src := b.TempDir(), filepath.Join(b.TempDir(), "memory")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: memory\ndescription: Remember facts.\n---\nUse `read_graph`.\n"), 0o644)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"mem": map[string]any{
		"command": node, "args": []string{entry}, "env": map[string]string{"MEMORY_FILE_PATH": memFile}}}})
	os.WriteFile(filepath.Join(src, "mcp.json"), cfg, 0o644)
	for _, args := range [][]string{{"install", src}, {"approve", "memory"}, {"enable", "memory"}} {
		if out, err := exec.Command(bin, append([]string{"--data", data}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("skillgate %v: %v\n%s", args, err, out)
		}
	}
	cmd := exec.Command(bin, "--data", data, "mcp", "--agent", "bench", "--tier", "T1", "--tenant", "bench")
	cmd.Env = os.Environ()
	if p := os.Getenv("SKILLGATE_BENCH_CPUPROFILE"); p != "" {
		cmd.Env = append(cmd.Env, "SKILLGATE_CPUPROFILE="+p)
	}
	// SKILLGATE_BENCH_ENV adds space-separated NAME=VALUE pairs to
	// skillgate's environment only (GOMAXPROCS=1, GOGC=200, ...).
	cmd.Env = append(cmd.Env, strings.Fields(os.Getenv("SKILLGATE_BENCH_ENV"))...)
	return connect(b, cmd)
}

// BenchmarkGateway opens the three paths to the same server (direct, bare
// relay, skillgate) and calls them in turn, rotating the order, so that a
// change in the machine's load during the run weighs on all three alike.
// Each b.N iteration is one call on each path; the metrics are per path.
func BenchmarkGateway(b *testing.B) {
	node, entry := memoryServer(b)
	memFile := filepath.Join(b.TempDir(), "memory.jsonl")
	direct := exec.Command(node, entry)
	direct.Env = append(os.Environ(), "MEMORY_FILE_PATH="+memFile)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	relayed := exec.Command(self, node, entry)
	relayed.Env = append(os.Environ(), relayEnv+"=1", "MEMORY_FILE_PATH="+memFile)
	paths := []struct {
		name string
		cs   *mcp.ClientSession
		lat  []time.Duration
	}{
		{name: "direct", cs: connect(b, direct)},
		{name: "relay", cs: connect(b, relayed)},
		{name: "skillgate", cs: viaSkillgate(b, node, entry, memFile)},
	}
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}}
	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("read_graph: %v %+v", err, res)
		}
		return d
	}
	for i := range paths {
		for range 100 { // warm up: start-up, JIT, pooled connection
			call(paths[i].cs)
		}
		paths[i].lat = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for k := range paths {
			p := &paths[(n+k)%len(paths)]
			p.lat = append(p.lat, call(p.cs))
		}
		n++
	}
	b.StopTimer()
	for _, p := range paths {
		slices.Sort(p.lat)
		q := func(f float64) float64 { return float64(p.lat[int(f*float64(len(p.lat)-1))].Nanoseconds()) / 1e3 }
		b.ReportMetric(q(0.50), p.name+"-p50-µs")
		b.ReportMetric(q(0.99), p.name+"-p99-µs")
	}
}
