// Package catalogbench measures what many agents cost `skillgate serve` on
// a large registry: AGENTS agents connect over streamable HTTP on loopback
// at once (initialize and tools/list, each a new session); then one of them
// pages through skill_list (100 skills a page) for 10×PAGES pages while the
// others stay connected; then every agent pages for PAGES pages, all at the
// same time. The same is done against an anchor in the same run: a minimal
// go-sdk server (this test binary, re-executed) whose skill_list returns a
// static page of the same size, captured from skillgate. Run it with
// bench/catalog.sh, which generates and scans the registry, or:
//
//	SKILLGATE_BENCH_DATA=DIR go test -run '^$' -bench Catalog -benchtime 1x ./bench/catalogbench/
//
// DIR is a data directory holding a scanned registry; tokens for the
// agents are added to it. SKILLGATE_BENCH_AGENTS (100), SKILLGATE_BENCH_PAGES
// (10) and SKILLGATE_BENCH_RUNS (5) tune it. It reports, per server
// (prefix skillgate- or anchor-): connect-ms-{med,min,max} (the time for
// every agent to be connected, over the runs), page-p50-ms and page-p99-ms
// (one agent paging), load-page-p50-ms and load-page-p99-ms (every agent
// paging at once), each the median, min and max over the runs, and
// rss-peak-MB (the server's VmHWM at the end). A warm-up run of each server
// is not counted.
package catalogbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/bench/internal/benchbin"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

var bin string

// anchorEnv makes the test binary the anchor server: it serves the page in
// the file it names and prints its address.
const anchorEnv = "SKILLGATE_BENCH_ANCHOR_PAGE"

func TestMain(m *testing.M) {
	if p := os.Getenv(anchorEnv); p != "" {
		os.Exit(anchor(p))
	}
	os.Exit(benchbin.Main(m, filepath.Join("..", ".."), &bin))
}

// anchor serves a minimal go-sdk MCP server over streamable HTTP whose one
// tool, skill_list, returns the page stored in file (its text and
// structured content).
func anchor(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var page struct {
		Text       string          `json:"text"`
		Structured json.RawMessage `json:"structured"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "anchor", Version: "v0"}, nil)
	s.AddTool(&mcp.Tool{Name: "skill_list", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: page.Text}}, StructuredContent: page.Structured}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ln, err := listen()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "anchor: MCP at http://%s/mcp\n", ln.Addr())
	return exitOf(http.Serve(ln, h))
}

func exitOf(err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// serverProc is a server process and the MCP endpoint it announced.
type serverProc struct {
	cmd *exec.Cmd
	url string
}

var mcpAt = regexp.MustCompile(`MCP at (http://\S+/mcp)`)

// start runs cmd and waits for the line announcing its MCP endpoint.
func start(b *testing.B, cmd *exec.Cmd) *serverProc {
	b.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := mcpAt.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case u := <-found:
		p := &serverProc{cmd: cmd, url: u}
		b.Cleanup(p.stop) // also when a measurement fails
		return p
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		b.Fatalf("%s did not announce its endpoint", cmd.Path)
	}
	return nil
}

// peakRSS returns the process's peak resident set (VmHWM) in MB.
func (p *serverProc) peakRSS() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

func (p *serverProc) stop() {
	if p.cmd.ProcessState != nil {
		return // stopped already
	}
	p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// run is one measured run against one server.
type run struct {
	connect time.Duration   // until every agent is connected
	single  []time.Duration // one agent paging alone, the others connected
	pages   []time.Duration // every skill_list call of every agent paging at once
	total   int             // the total skill_list reported
}

// measure connects len(tokens) agents at once, then pages through
// skill_list with each for pages pages at once.
func measure(b *testing.B, url string, tokens []string, pages int) run {
	b.Helper()
	ctx := context.Background()
	tr := &http.Transport{MaxIdleConns: 4 * len(tokens), MaxIdleConnsPerHost: 4 * len(tokens)}
	defer tr.CloseIdleConnections()
	sessions := make([]*mcp.ClientSession, len(tokens))
	errs := make([]error, len(tokens))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, tok := range tokens {
		wg.Go(func() {
			c := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("agent-%03d", i), Version: "v0"}, nil)
			t := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{tok, tr}}, MaxRetries: -1}
			cs, err := c.Connect(ctx, t, nil)
			if err == nil {
				_, err = cs.ListTools(ctx, nil)
			}
			sessions[i], errs[i] = cs, err
		})
	}
	wg.Wait()
	r := run{connect: time.Since(t0)}
	defer func() {
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
	}()
	for i, err := range errs {
		if err != nil {
			b.Fatalf("agent %d: connect: %v", i, err)
		}
	}
	lat := make([][]time.Duration, len(tokens))
	totals := make([]int, len(tokens))
	page := func(i int, cs *mcp.ClientSession, pages int) {
		cursor := ""
		for range pages {
			args := map[string]any{"limit": 100}
			if cursor != "" {
				args["cursor"] = cursor
			}
			t := time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_list", Arguments: args})
			lat[i] = append(lat[i], time.Since(t))
			if err != nil || res.IsError {
				errs[i] = fmt.Errorf("skill_list: %v %+v", err, res)
				return
			}
			// At the last page (and always at the anchor, whose page
			// has no cursor) paging starts again.
			m, _ := res.StructuredContent.(map[string]any)
			cursor, _ = m["next_cursor"].(string)
			if n, ok := m["total"].(float64); ok {
				totals[i] = int(n)
			}
		}
	}
	// One agent pages alone while the others stay connected: the latency
	// of a page itself.
	page(0, sessions[0], 10*pages)
	if errs[0] != nil {
		b.Fatalf("agent 0: %v", errs[0])
	}
	r.single, lat[0] = lat[0], nil
	// Every agent pages at once, without pause: the 2 cores are shared by
	// all, so latency is mostly queueing, for skillgate and anchor alike.
	for i, cs := range sessions {
		wg.Go(func() { page(i, cs, pages) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			b.Fatalf("agent %d: %v", i, err)
		}
	}
	for _, l := range lat {
		r.pages = append(r.pages, l...)
	}
	r.total = totals[0]
	return r
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// report reports the runs against one server under prefix.
func report(b *testing.B, prefix string, runs []run) {
	var connects, p50s, p99s, s50s, s99s []float64
	for _, r := range runs {
		connects = append(connects, ms(r.connect))
		p50s = append(p50s, ms(quantile(r.pages, 0.50)))
		p99s = append(p99s, ms(quantile(r.pages, 0.99)))
		s50s = append(s50s, ms(quantile(r.single, 0.50)))
		s99s = append(s99s, ms(quantile(r.single, 0.99)))
	}
	for _, m := range []struct {
		name string
		v    []float64
	}{{"connect-ms", connects}, {"page-p50-ms", s50s}, {"page-p99-ms", s99s}, {"load-page-p50-ms", p50s}, {"load-page-p99-ms", p99s}} {
		slices.Sort(m.v)
		b.ReportMetric(m.v[len(m.v)/2], prefix+m.name+"-med")
		b.ReportMetric(m.v[0], prefix+m.name+"-min")
		b.ReportMetric(m.v[len(m.v)-1], prefix+m.name+"-max")
	}
	b.ReportMetric(float64(len(runs[0].single)), prefix+"pages-alone/run")
	b.ReportMetric(float64(len(runs[0].pages)), prefix+"pages-at-once/run")
}

// BenchmarkCatalog: see the package documentation. Run it with -benchtime 1x.
func BenchmarkCatalog(b *testing.B) {
	data := os.Getenv("SKILLGATE_BENCH_DATA")
	if data == "" {
		b.Skip("SKILLGATE_BENCH_DATA is unset: run bench/catalog.sh")
	}
	agents := envInt("SKILLGATE_BENCH_AGENTS", 100)
	pages := envInt("SKILLGATE_BENCH_PAGES", 10)
	runs := envInt("SKILLGATE_BENCH_RUNS", 5)
	tokens := make([]string, agents)
	for i := range tokens {
		p := capability.Principal{Tenant: "bench", Agent: fmt.Sprintf("agent-%03d", i), Tier: skill.T3}
		secret, _, err := server.AddToken(filepath.Join(data, server.TokensFile), p, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		tokens[i] = secret
	}
	for b.Loop() {
		// skillgate serve on the registry.
		// Every agent comes from 127.0.0.1, each with its event stream
		// and requests in flight, as agents behind one proxy would: the
		// per-address bound is lifted (docs/security.md).
		sg := start(b, exec.Command(bin, "--data", data, "serve", "--addr", "127.0.0.1:0", "--max-client-conns", "0"))
		measure(b, sg.url, tokens, 1) // warm-up, not counted
		var sgRuns []run
		for range runs {
			sgRuns = append(sgRuns, measure(b, sg.url, tokens, pages))
		}
		page := capture(b, sg.url, tokens[0])
		sgRSS := sg.peakRSS()
		sg.stop()

		// The anchor: the same page, static, from a minimal go-sdk server.
		pf := filepath.Join(b.TempDir(), "page.json")
		if err := os.WriteFile(pf, page, 0o600); err != nil {
			b.Fatal(err)
		}
		self, err := os.Executable()
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), anchorEnv+"="+pf)
		an := start(b, cmd)
		measure(b, an.url, tokens, 1) // warm-up, not counted
		var anRuns []run
		for range runs {
			anRuns = append(anRuns, measure(b, an.url, tokens, pages))
		}
		anRSS := an.peakRSS()
		an.stop()

		report(b, "skillgate-", sgRuns)
		b.ReportMetric(sgRSS, "skillgate-rss-peak-MB")
		b.ReportMetric(float64(sgRuns[0].total), "skills-visible")
		report(b, "anchor-", anRuns)
		b.ReportMetric(anRSS, "anchor-rss-peak-MB")
		b.ReportMetric(float64(len(page)), "page-bytes")
	}
}

// capture returns skillgate's first skill_list page of 100 as the anchor
// serves it: its text and structured content.
func capture(b *testing.B, url, token string) []byte {
	b.Helper()
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "capture", Version: "v0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_list", Arguments: map[string]any{"limit": 100}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		b.Fatal(err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	out, err := json.Marshal(map[string]any{"text": text, "structured": res.StructuredContent})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
