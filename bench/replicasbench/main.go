// Command replicasbench measures skillgate's capability path with one and
// with two `skillgate serve` replicas on one PostgreSQL database (issue
// 19): closed-loop agents over streamable HTTP call a read tool of an
// imported skill (the project's test MCP server), each call decided by a
// stored policy, forwarded and audited; it reports decisions per second
// and the p50/p99 call latency the agents see with 1 and 2 replicas, and
// their ratios. Run it with bench/replicas.sh, or:
//
//	go run ./bench/replicasbench -dsn postgres://… [-agents 20] [-duration 10s]
//
// The database must be empty (it is migrated and filled); the replicas
// listen on 127.0.0.1 only.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errSetup is the error of a run that could not start.
var errSetup = errors.New("set-up failed")

// config is one run.
type config struct {
	dsn       string
	agents    int
	duration  time.Duration
	skillgate string
}

// result is one phase: n replicas under the agents' load.
type result struct {
	Replicas  int           `json:"replicas"`
	Calls     int           `json:"calls"`
	Errors    int           `json:"errors"`
	PerSecond float64       `json:"decisions_per_second"`
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
}

func main() {
	var cfg config
	var jsonOut string
	flag.StringVar(&cfg.dsn, "dsn", os.Getenv("SKILLGATE_BENCH_DSN"), "PostgreSQL database to use, empty ($SKILLGATE_BENCH_DSN)")
	flag.IntVar(&cfg.agents, "agents", 20, "agents calling at once, spread over the replicas")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "measured time of each phase")
	flag.StringVar(&cfg.skillgate, "skillgate", os.Getenv("SKILLGATE_BIN"), "skillgate binary (default: built from ./cmd/skillgate)")
	flag.StringVar(&jsonOut, "json", "", "also write the results as JSON to this file")
	flag.Parse()
	if cfg.dsn == "" {
		fmt.Fprintln(os.Stderr, "replicasbench: -dsn is required (bench/replicas.sh makes a database)")
		os.Exit(2)
	}
	res, err := run(context.Background(), cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicasbench:", err)
		if errors.Is(err, errSetup) {
			os.Exit(2)
		}
		os.Exit(1)
	}
	fmt.Printf("%-9s %8s %7s %14s %10s %10s\n", "replicas", "calls", "errors", "decisions/s", "p50", "p99")
	for _, r := range res {
		fmt.Printf("%-9d %8d %7d %14.0f %10s %10s\n", r.Replicas, r.Calls, r.Errors, r.PerSecond, r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond))
	}
	fmt.Printf("2 replicas / 1: decisions/s %.2fx, p99 %.2fx\n", res[1].PerSecond/res[0].PerSecond, float64(res[1].P99)/float64(res[0].P99))
	if jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "replicasbench:", err)
			os.Exit(2)
		}
	}
	for _, r := range res {
		if r.Errors > 0 {
			os.Exit(1)
		}
	}
}

// run sets up the registry on cfg.dsn, then measures one replica and two.
func run(ctx context.Context, cfg config, log io.Writer) ([]result, error) {
	work, err := os.MkdirTemp("", "skillgate-replicas-bench-")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSetup, err)
	}
	defer os.RemoveAll(work)
	repo, err := filepath.Abs(".")
	if err != nil {
		return nil, err
	}
	bin := cfg.skillgate
	if bin == "" {
		bin = filepath.Join(work, "skillgate")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/skillgate").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%w: go build: %v\n%s", errSetup, err, out)
		}
	}
	// The project's test MCP server answers echo at once: the time
	// measured is skillgate's.
	ts := filepath.Join(work, "testserver")
	build := exec.Command("go", "build", "-o", ts, "./internal/testkit/testserver/cmd/testserver")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: go build testserver: %v\n%s", errSetup, err, out)
	}
	datas := []string{filepath.Join(work, "a"), filepath.Join(work, "b")}
	for _, d := range datas {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(d, "config.yaml"), []byte("store: "+cfg.dsn+"\n"), 0o600); err != nil {
			return nil, err
		}
	}
	sg := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"--data", datas[0]}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("%w: skillgate %s: %v\n%s", errSetup, strings.Join(args, " "), err, errb.String())
		}
		return out.String(), nil
	}
	skill := filepath.Join(work, "notes")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: notes\ndescription: Notes through the test server.\nallowed-tools: notes/echo\n---\nTake notes.\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(skill, "mcp.json"), []byte(`{"mcpServers": {"notes": {"command": "`+ts+`", "env": {"SKILLGATE_TESTSERVER": "normal"}}}}`), 0o644); err != nil {
		return nil, err
	}
	policy := filepath.Join(work, "reads.cedar")
	if err := os.WriteFile(policy, []byte(`@id("reads")
permit (principal, action == Action::"invoke", resource) when { resource.riskLevel == "read" };
`), 0o644); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"install", skill}, {"approve", "notes"}, {"enable", "notes"}, {"policy", "put", "reads", policy}} {
		if _, err := sg(args...); err != nil {
			return nil, err
		}
	}
	tokens := make([]string, cfg.agents)
	for i := range tokens {
		out, err := sg("token", "add", "--agent", fmt.Sprintf("bench%d", i), "--tier", "T3", "--tenant", "acme")
		if err != nil {
			return nil, err
		}
		tokens[i] = strings.TrimSpace(out)
	}
	var results []result
	for n := 1; n <= 2; n++ {
		fmt.Fprintf(log, "replicasbench: %d agents on %d replica(s) for %v\n", cfg.agents, n, cfg.duration)
		var urls []string
		var stops []func()
		for i := range n {
			url, stop, err := serve(bin, datas[i], log)
			if err != nil {
				for _, s := range stops {
					s()
				}
				return nil, err
			}
			urls, stops = append(urls, url), append(stops, stop)
		}
		r, err := measure(ctx, urls, tokens, cfg.duration)
		for _, s := range stops {
			s()
		}
		if err != nil {
			return nil, err
		}
		r.Replicas = n
		results = append(results, r)
	}
	return results, nil
}

var listenRE = regexp.MustCompile(`MCP at (http://\S+)/mcp`)

// serve starts a replica on data and returns its URL and a stop.
func serve(bin, data string, log io.Writer) (string, func(), error) {
	cmd := exec.Command(bin, "--data", data, "serve", "--addr", "127.0.0.1:0", "--max-client-conns", "0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("%w: %v", errSetup, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait() // stopped on purpose: its exit status says nothing
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		return u, stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, fmt.Errorf("%w: skillgate serve did not say where it listens", errSetup)
	}
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// measure connects one agent per token, spread over urls, warms each up
// with one call, then has every agent call echo in a closed loop for d.
func measure(ctx context.Context, urls, tokens []string, d time.Duration) (result, error) {
	sessions := make([]*mcp.ClientSession, len(tokens))
	defer func() {
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
	}()
	for i, tok := range tokens {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "replicasbench", Version: "v0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: urls[i%len(urls)] + "/mcp", HTTPClient: &http.Client{Transport: bearer(tok)}, DisableStandaloneSSE: true,
		}, nil)
		if err != nil {
			return result{}, fmt.Errorf("%w: connect: %v", errSetup, err)
		}
		sessions[i] = cs
		if _, err := call(ctx, cs, "warm-up"); err != nil {
			return result{}, fmt.Errorf("%w: warm-up call: %v", errSetup, err)
		}
	}
	var (
		mu     sync.Mutex
		lat    []time.Duration
		errs   atomic.Int64
		wg     sync.WaitGroup
		cancel = make(chan struct{})
	)
	start := time.Now()
	for i, cs := range sessions {
		wg.Go(func() {
			var mine []time.Duration
			for n := 0; ; n++ {
				select {
				case <-cancel:
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
					return
				default:
				}
				t0 := time.Now()
				if _, err := call(ctx, cs, fmt.Sprintf("agent %d call %d", i, n)); err != nil {
					errs.Add(1)
					continue
				}
				mine = append(mine, time.Since(t0))
			}
		})
	}
	time.Sleep(d)
	close(cancel)
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(p*float64(len(lat)-1))]
	}
	return result{Calls: len(lat), Errors: int(errs.Load()), PerSecond: float64(len(lat)) / elapsed.Seconds(), P50: q(0.5), P99: q(0.99)}, nil
}

// call calls echo; a tool error is an error.
func call(ctx context.Context, cs *mcp.ClientSession, text string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", errors.New(b.String())
	}
	return b.String(), nil
}
