// Package gatewaybench measures what skillgate adds to a capability call:
// the same tool of the same upstream server called directly over stdio,
// through a bare line relay, and through `skillgate mcp`, where the call is
// looked up in the agent's scope, validated against the approved schema,
// decided by the policy engine, audited and forwarded over a pooled stdio
// connection. Two workloads: the npm server-memory's read_graph (a result
// of about 40 bytes) and the npm server-filesystem's read_text_file of a
// 62 KB text file (a result of about 64 KB of JSON, with the escapes real
// prose needs). Run it with bench/gateway.sh, or:
//
//	SKILLGATE_TEST_NPM_DIR=… go test -run '^$' -bench Gateway -benchtime 2000x ./bench/gatewaybench/
//
// It reports p50 and p99 latencies (µs) of each path besides ns/op (the
// time of one call on each of the three paths).
package gatewaybench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/bench/internal/benchbin"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
)

var bin string

func TestMain(m *testing.M) {
	if os.Getenv(relayEnv) != "" {
		os.Exit(relay(os.Args[1:]))
	}
	// The benchmark's own upstream for the 62 KB result is the shared
	// test server in its text mode (the go-sdk's own server): it answers
	// in tens of microseconds, where the npm server-filesystem takes
	// milliseconds, so what the relay adds is not lost in the server's time.
	if os.Getenv(testserver.EnvMode) != "" {
		os.Exit(testserver.Main())
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
	// The server may be this binary too: it must not relay again.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, relayEnv+"=") })
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

// npmServer returns node and the entry point of the npm MCP server pkg
// (server-memory, server-filesystem), or skips the benchmark.
func npmServer(b *testing.B, pkg string) (node, entry string) {
	dir := os.Getenv("SKILLGATE_TEST_NPM_DIR")
	if dir == "" {
		b.Skip("SKILLGATE_TEST_NPM_DIR is unset; run: eval \"$(scripts/setup-npm.sh)\"")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed")
	}
	entry = filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		b.Skipf("%s is not installed: %v", pkg, err)
	}
	return node, entry
}

// client is a minimal MCP client over stdio: it writes one request line
// and reads lines until the response with its id, nothing decoded. The
// go-sdk client spends milliseconds decoding a 62 KB result on this
// machine, which would drown what a relay adds; this one costs the same
// few microseconds on every path.
type client struct {
	in  io.WriteCloser
	out *bufio.Reader
	id  int
	buf []byte
	// meta, when set, is the params._meta of a 2026-07-28 client, added
	// to every request (see modernClient).
	meta string
}

// protocolEnv names the protocol version the agent speaks to skillgate
// (the skillgate paths only: the direct and relayed servers are spoken to
// as before): unset or below 2026-07-28, the initialize handshake at
// 2025-06-18; 2026-07-28, no handshake and every request with its _meta.
const protocolEnv = "SKILLGATE_BENCH_PROTOCOL"

// modernClient starts cmd as a 2026-07-28 client: no handshake.
func modernClient(b *testing.B, cmd *exec.Cmd, v string) *client {
	c := start(b, cmd)
	c.meta = `{"io.modelcontextprotocol/protocolVersion":"` + v + `","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"gatewaybench","version":"v0"}}`
	return c
}

// connect starts cmd and makes the MCP handshake with it.
func connect(b *testing.B, cmd *exec.Cmd) *client {
	c := start(b, cmd)
	if _, err := c.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gatewaybench","version":"v0"}}`); err != nil {
		b.Fatalf("initialize %v: %v", cmd.Args, err)
	}
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	return c
}

// start starts cmd, stopped when the benchmark ends.
func start(b *testing.B, cmd *exec.Cmd) *client {
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return &client{in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

// request sends method(params) and returns the response line (valid until
// the next request).
func (c *client) request(method, params string) ([]byte, error) {
	c.id++
	id := strconv.Itoa(c.id)
	c.buf = append(c.buf[:0], `{"jsonrpc":"2.0","id":`...)
	c.buf = append(c.buf, id...)
	c.buf = append(c.buf, `,"method":"`...)
	c.buf = append(c.buf, method...)
	c.buf = append(c.buf, `","params":`...)
	if c.meta != "" && len(params) > 2 && params[len(params)-1] == '}' {
		c.buf = append(c.buf, params[:len(params)-1]...)
		c.buf = append(c.buf, `,"_meta":`...)
		c.buf = append(c.buf, c.meta...)
		c.buf = append(c.buf, '}')
	} else {
		c.buf = append(c.buf, params...)
	}
	c.buf = append(c.buf, "}\n"...)
	if _, err := c.in.Write(c.buf); err != nil {
		return nil, err
	}
	want := []byte(`"id":` + id)
	for {
		line, err := c.out.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if bytes.Contains(line, want) && !bytes.Contains(line, []byte(`"method"`)) {
			return line, nil
		}
	}
}

// server is one upstream MCP server as a skill declares it in mcp.json.
type server struct {
	id      string // the server's id in mcp.json
	command string
	args    []string
	env     map[string]string
}

func (s server) cmd(self string, relay bool) *exec.Cmd {
	var cmd *exec.Cmd
	if relay {
		cmd = exec.Command(self, append([]string{s.command}, s.args...)...)
	} else {
		cmd = exec.Command(s.command, s.args...)
	}
	cmd.Env = os.Environ()
	if relay {
		cmd.Env = append(cmd.Env, relayEnv+"=1")
	}
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// viaSkillgate installs, approves and enables a skill declaring srv in a
// fresh data directory, and connects an agent to `skillgate mcp`.
func viaSkillgate(b *testing.B, bin, name string, srv server) (*client, *exec.Cmd) {
	data, src := b.TempDir(), filepath.Join(b.TempDir(), name)
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: A benchmark skill.\n---\nCall its tools.\n"), 0o644)
	decl := map[string]any{"command": srv.command, "args": srv.args}
	if srv.env != nil {
		decl["env"] = srv.env
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{srv.id: decl}})
	os.WriteFile(filepath.Join(src, "mcp.json"), cfg, 0o644)
	// SKILLGATE_BENCH_CONFIG is a config.yaml for skillgate's data
	// directory (sandbox limits, for instance).
	if c := os.Getenv("SKILLGATE_BENCH_CONFIG"); c != "" {
		os.WriteFile(filepath.Join(data, "config.yaml"), []byte(c), 0o600)
	}
	for _, args := range [][]string{{"install", src}, {"approve", name}, {"enable", name}} {
		if out, err := exec.Command(bin, append([]string{"--data", data}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("skillgate %v: %v\n%s", args, err, out)
		}
	}
	cmd := exec.Command(bin, "--data", data, "mcp", "--agent", "bench", "--tier", "T1", "--tenant", "bench")
	cmd.Env = os.Environ()
	if p := os.Getenv("SKILLGATE_BENCH_CPUPROFILE"); p != "" {
		cmd.Env = append(cmd.Env, "SKILLGATE_CPUPROFILE="+strings.ReplaceAll(p, "%s", name))
	}
	// SKILLGATE_BENCH_ENV adds space-separated NAME=VALUE pairs to
	// skillgate's environment only (GOMAXPROCS=1, GOGC=200, ...).
	cmd.Env = append(cmd.Env, strings.Fields(os.Getenv("SKILLGATE_BENCH_ENV"))...)
	if v := os.Getenv(protocolEnv); v >= "2026-07-28" {
		return modernClient(b, cmd, v), cmd
	}
	return connect(b, cmd), cmd
}

// cpuTime is the user and system CPU time the process has used so far, all
// its threads, not its children (from /proc; 10 ms resolution), or 0 where
// it cannot be read.
func cpuTime(cmd *exec.Cmd) time.Duration {
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// ResultBytes is the size of the text file the 62 KB workload reads.
const ResultBytes = 62 << 10

// realText returns n bytes of the repository's own documentation (Markdown
// prose, tables, code, quotes and non-ASCII characters: what an agent
// reads), repeated when the documentation is shorter, cut at a line end.
func realText(b *testing.B, n int) []byte {
	repo := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	files = append([]string{filepath.Join(repo, "README.md")}, files...)
	var all []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, data...)
	}
	if len(all) == 0 {
		b.Fatal("no documentation to read")
	}
	var out []byte
	for len(out) < n {
		out = append(out, all...)
	}
	out = out[:n]
	if i := bytes.LastIndexByte(out, '\n'); i > 0 {
		out = out[:i+1]
	}
	return out
}

// BenchmarkGateway opens the three paths to the same server (direct, bare
// relay, skillgate) for each workload and calls them in turn, rotating the
// order, so that a change in the machine's load during the run weighs on
// all three alike. Each b.N iteration is one call on each path; the
// metrics are per path.
func BenchmarkGateway(b *testing.B) {
	b.Run("read_graph", func(b *testing.B) {
		node, entry := npmServer(b, "server-memory")
		srv := server{id: "mem", command: node, args: []string{entry},
			env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(b.TempDir(), "memory.jsonl")}}
		run(b, "memory", srv, "read_graph", map[string]any{}, 0)
	})
	b.Run("read_text_file_62KB", func(b *testing.B) {
		node, entry := npmServer(b, "server-filesystem")
		dir := b.TempDir()
		text := realText(b, ResultBytes)
		file := filepath.Join(dir, "guide.md")
		if err := os.WriteFile(file, text, 0o644); err != nil {
			b.Fatal(err)
		}
		srv := server{id: "fs", command: node, args: []string{entry, dir}}
		run(b, "files", srv, "read_text_file", map[string]any{"path": file}, len(text))
	})
	b.Run("read_text_62KB_go", func(b *testing.B) {
		file := filepath.Join(b.TempDir(), "guide.md")
		text := realText(b, ResultBytes)
		if err := os.WriteFile(file, text, 0o644); err != nil {
			b.Fatal(err)
		}
		self, err := os.Executable()
		if err != nil {
			b.Fatal(err)
		}
		srv := server{id: "text", command: self, args: []string{file}, env: map[string]string{testserver.EnvMode: testserver.ModeText}}
		run(b, "text", srv, "read_text", map[string]any{}, len(text))
	})
}

// run benchmarks one workload: params called on srv directly, through the
// bare relay and through skillgate. When want is not 0, every result's
// text must be want bytes long (the whole file came back).
func run(b *testing.B, skillName string, srv server, tool string, args map[string]any, want int) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	type path struct {
		name string
		cs   *client
		cmd  *exec.Cmd // the process between agent and server (for direct: the server)
		lat  []time.Duration
		cpu  time.Duration
		size int // the length of its first response
	}
	direct, relayed := srv.cmd(self, false), srv.cmd(self, true)
	paths := []*path{
		{name: "direct", cs: connect(b, direct), cmd: direct},
		{name: "relay", cs: connect(b, relayed), cmd: relayed},
	}
	cs, cmd := viaSkillgate(b, bin, skillName, srv)
	paths = append(paths, &path{name: "skillgate", cs: cs, cmd: cmd})
	// SKILLGATE_BENCH_BASELINE names another skillgate binary, called in
	// the same rotation: two builds compared in the same period.
	if base := os.Getenv("SKILLGATE_BENCH_BASELINE"); base != "" {
		cs, cmd := viaSkillgate(b, base, skillName, srv)
		paths = append(paths, &path{name: "baseline", cs: cs, cmd: cmd})
	}
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": args})
	// check decodes a result once per path: the whole text, no error.
	check := func(name string, line []byte) {
		var resp struct {
			Result *mcp.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal(line, &resp); err != nil || resp.Result == nil || resp.Result.IsError {
			b.Fatalf("%s %s: %v %.300s", name, tool, err, line)
		}
		if want > 0 {
			if len(resp.Result.Content) != 1 {
				b.Fatalf("%s %s: %d content blocks", name, tool, len(resp.Result.Content))
			}
			if tc, ok := resp.Result.Content[0].(*mcp.TextContent); !ok || len(tc.Text) != want {
				b.Fatalf("%s %s: the result is not the whole file", name, tool)
			}
		}
	}
	call := func(p *path) time.Duration {
		start := time.Now()
		line, err := p.cs.request("tools/call", string(params))
		d := time.Since(start)
		if err != nil {
			b.Fatalf("%s %s: %v", p.name, tool, err)
		}
		if p.size == 0 {
			check(p.name, line)
			p.size = len(line)
		} else if len(line) < p.size-8 || len(line) > p.size+8 || bytes.Contains(line, []byte(`"isError":true`)) {
			b.Fatalf("%s %s: a different result: %.300s", p.name, tool, line)
		}
		return d
	}
	for _, p := range paths {
		check(p.name, mustRequest(b, p.cs, string(params)))
		for range 100 { // warm up: start-up, JIT, pooled connection
			call(p)
		}
		p.lat = make([]time.Duration, 0, b.N)
	}
	for _, p := range paths {
		p.cpu = cpuTime(p.cmd)
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for k := range paths {
			p := paths[(n+k)%len(paths)]
			p.lat = append(p.lat, call(p))
		}
		n++
	}
	b.StopTimer()
	// Paired differences: call i of one path and call i of another ran in
	// the same round, moments apart, so the machine's state (another
	// process, the frequency, which core) weighs on both alike; the median
	// of the differences is what one path adds to the other, without the
	// drift between rounds that moves each path's own p50 by up to 100 µs
	// on this machine (two identical binaries in the same run differ that
	// much).
	byName := map[string]*path{}
	for _, p := range paths {
		byName[p.name] = p
	}
	paired := func(name, over string) {
		x, y := byName[name], byName[over]
		if x == nil || y == nil || len(x.lat) != len(y.lat) || len(x.lat) == 0 {
			return
		}
		d := make([]time.Duration, len(x.lat))
		for i := range d {
			d[i] = x.lat[i] - y.lat[i]
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e3, name+"-over-"+over+"-paired-p50-µs")
	}
	paired("relay", "direct")
	paired("skillgate", "direct")
	paired("skillgate", "relay")
	paired("baseline", "skillgate")
	for _, p := range paths {
		if c := cpuTime(p.cmd); c > 0 && n > 0 {
			b.ReportMetric(float64((c-p.cpu).Microseconds())/float64(n), p.name+"-cpu-µs/call")
		}
		slices.Sort(p.lat)
		q := func(f float64) float64 { return float64(p.lat[int(f*float64(len(p.lat)-1))].Nanoseconds()) / 1e3 }
		b.ReportMetric(q(0.50), p.name+"-p50-µs")
		b.ReportMetric(q(0.99), p.name+"-p99-µs")
	}
}

func mustRequest(b *testing.B, c *client, params string) []byte {
	line, err := c.request("tools/call", params)
	if err != nil {
		b.Fatal(err)
	}
	return line
}
