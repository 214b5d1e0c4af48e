package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrSetup is the error of a run that could not start: a build, the
// generator, a missing npm server, an install step.
var ErrSetup = errors.New("set-up failed")

// Config is one load test.
type Config struct {
	Agents    int
	Skills    int
	Timeout   time.Duration
	Skillgate string    // binary; "" builds ./cmd/skillgate
	Work      string    // "" makes and removes a temporary directory
	GenDir    string    // "" uses $TMPDIR/skillgate-load-skills-nS
	NPMDir    string    // holds node_modules/@modelcontextprotocol/server-filesystem
	Repo      string    // repository root; "" finds it from the working directory
	Log       io.Writer // progress; nil discards it
	// MaxPages bounds the skill_list pages one agent reads (0: 1,000).
	MaxPages int
	// Think is an agent's mean pause before each call after it connected:
	// the model's turn between two tool calls. Each pause is drawn
	// uniformly from [Think/2, 3·Think/2]. 0 makes every agent call
	// without pause, all at once: a saturation test of the two cores, which
	// measures throughput, not the latency an agent sees.
	Think time.Duration
}

// Goals of issue 12 for 100 agents on 10,000 skills.
const (
	GoalConnectAll = 2 * time.Second
	GoalPageP99    = 20 * time.Millisecond
	GoalRSSBytes   = 500 << 20
)

// Op names the operations an agent makes, in order.
var Ops = []string{"connect", "skill_list page", "load_skill", "read_file", "grep", "capability call"}

// Report is what a run measured.
type Report struct {
	Agents, Skills int
	// ConnectAll is the time from the start of the agents until the last
	// one was connected.
	ConnectAll time.Duration
	// Latency per operation: all samples, sorted.
	Latency map[string][]time.Duration
	// Pages is the number of skill_list pages read by all agents, Listed
	// the most skills one agent saw over its pages.
	Pages, Listed int
	// Errors per operation, and the first few messages.
	Errors    map[string]int
	ErrorText []string
	// PeakRSS is the server's VmHWM in bytes.
	PeakRSS int64
	// CapCalls is how many capability calls were made (sent), AuditCalls
	// how many capability.invoke records of the agents the audit log holds.
	CapCalls, AuditCalls int
	// Think is the mean pause between an agent's calls (Config.Think).
	Think time.Duration
	// AuditVerify is the output of `skillgate audit verify`, AuditOK its
	// verdict.
	AuditVerify string
	AuditOK     bool
	Wall        time.Duration
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (c *Config) logf(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "load: "+format+"\n", a...)
	}
}

// Run performs the load test. Its error is about the set-up or the
// harness; what the agents met is in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if cfg.Log != nil {
		// The run and the server's log reader write to it at once.
		cfg.Log = &syncWriter{w: cfg.Log}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = 1000
	}
	if cfg.Repo == "" {
		r, err := repoRoot()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSetup, err)
		}
		cfg.Repo = r
	}
	fsEntry := filepath.Join(cfg.NPMDir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	node, err := exec.LookPath("node")
	if cfg.NPMDir == "" || err != nil {
		return nil, fmt.Errorf("%w: node and the npm servers are needed: eval \"$(scripts/setup-npm.sh)\"", ErrSetup)
	}
	if _, err := os.Stat(fsEntry); err != nil {
		return nil, fmt.Errorf("%w: npm server-filesystem missing: %v", ErrSetup, err)
	}
	work := cfg.Work
	if work == "" {
		if work, err = os.MkdirTemp("", "skillgate-load-"); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSetup, err)
		}
		defer os.RemoveAll(work)
	}
	bin := cfg.Skillgate
	if bin == "" {
		bin = filepath.Join(work, "skillgate")
		cfg.logf("building skillgate")
		if err := goBuild(ctx, cfg.Repo, bin, "./cmd/skillgate"); err != nil {
			return nil, err
		}
	}
	genDir := cfg.GenDir
	if genDir == "" {
		genDir = filepath.Join(os.TempDir(), fmt.Sprintf("skillgate-load-skills-n%d", cfg.Skills))
	}
	gen := filepath.Join(work, "gen")
	if err := goBuild(ctx, cfg.Repo, gen, "./bench/gen"); err != nil {
		return nil, err
	}
	cfg.logf("generating %d skills into %s", cfg.Skills, genDir)
	if out, err := exec.CommandContext(ctx, gen, "-n", strconv.Itoa(cfg.Skills), "-out", genDir, "-reuse").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: bench/gen: %v\n%s", ErrSetup, err, out)
	}
	data := filepath.Join(work, "data")
	sg := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"--data", data}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("%w: skillgate %s: %v\n%s", ErrSetup, strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	cfg.logf("scanning")
	if _, err := sg("scan", "--root", genDir, "--max-dirs", "1000000", "--json"); err != nil {
		return nil, err
	}

	// The imported skill: server-filesystem over a directory of notes.
	files := filepath.Join(work, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	noteText := "Acta de la reunión: la parte vendedora transmite la finca libre de cargas.\n"
	note := filepath.Join(files, "acta.txt")
	if err := os.WriteFile(note, []byte(noteText), 0o644); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	src := filepath.Join(work, "import", "notes")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	md := "---\nname: notes\ndescription: Read meeting notes through an MCP filesystem server.\nallowed-tools: fs/read_text_file\n---\nUse `read_text_file` to read the notes.\n"
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": map[string]any{"command": node, "args": []string{fsEntry, files}}}})
	if err := os.WriteFile(filepath.Join(src, "SKILL.md"), []byte(md), 0o644); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	if err := os.WriteFile(filepath.Join(src, "mcp.json"), mcpJSON, 0o644); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	cfg.logf("installing, approving and enabling the imported skill")
	for _, args := range [][]string{{"install", src}, {"approve", "notes"}, {"enable", "notes"}} {
		if _, err := sg(args...); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(data, "policies"), 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	policy := "@id(\"load-reads\")\npermit (principal, action == Action::\"invoke\", resource) when { resource.riskLevel == \"read\" };\n"
	if err := os.WriteFile(filepath.Join(data, "policies", "load.cedar"), []byte(policy), 0o600); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	if _, err := sg("policy", "check"); err != nil {
		return nil, err
	}
	cfg.logf("adding %d tokens", cfg.Agents)
	secrets := make([]string, cfg.Agents)
	for i := range secrets {
		out, err := sg("token", "add", "--agent", agentName(i), "--tier", "T3", "--tenant", "load", "--json")
		if err != nil {
			return nil, err
		}
		var tok struct {
			Secret string `json:"secret"`
		}
		if err := json.Unmarshal([]byte(out[strings.IndexByte(out, '{'):]), &tok); err != nil || tok.Secret == "" {
			return nil, fmt.Errorf("%w: token add printed %q", ErrSetup, out)
		}
		secrets[i] = tok.Secret
	}

	srv, err := startServe(ctx, bin, data, cfg.Log)
	if err != nil {
		return nil, err
	}
	cfg.logf("serving at %s; %d agents start", srv.url, cfg.Agents)
	rep := &Report{Agents: cfg.Agents, Skills: cfg.Skills, Think: cfg.Think, Latency: map[string][]time.Duration{}, Errors: map[string]int{}}
	var rss rssWatch
	rss.start(srv.cmd.Process.Pid)
	runAgents(ctx, cfg, srv.url, secrets, note, noteText, rep)
	rep.PeakRSS = rss.stop()
	if err := srv.stop(); err != nil {
		cfg.logf("stopping the server: %v", err)
	}

	// Nothing lost: one capability.invoke record per capability call made.
	out, err := sg("audit", "query", "--action", "capability.invoke", "--json")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		var rec struct {
			Actor string `json:"actor"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Actor, "agent:load/") {
			rep.AuditCalls++
		}
	}
	vout, verr := exec.CommandContext(ctx, bin, "--data", data, "audit", "verify").CombinedOutput()
	rep.AuditVerify, rep.AuditOK = strings.TrimSpace(string(vout)), verr == nil
	rep.Wall = time.Since(start)
	return rep, nil
}

func agentName(i int) string { return fmt.Sprintf("agent%03d", i) }

// repoRoot finds the module root from the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(data), "module github.com/skillgate/skillgate\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the skillgate repository (no go.mod); run from it or set Repo")
		}
		dir = parent
	}
}

func goBuild(ctx context.Context, repo, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = repo
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: go build %s: %v\n%s", ErrSetup, pkg, err, b)
	}
	return nil
}

// server is a running `skillgate serve`.
type server struct {
	cmd    *exec.Cmd
	url    string
	logged chan struct{}
}

var listenRE = regexp.MustCompile(`MCP at (http://127\.0\.0\.1:\d+)/mcp`)

func startServe(ctx context.Context, bin, data string, log io.Writer) (*server, error) {
	// Every agent connects from 127.0.0.1, so the per-client connection
	// limit (meant for one remote host) is lifted.
	cmd := exec.Command(bin, "--data", data, "serve", "--addr", "127.0.0.1:0", "--max-client-conns", "0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: skillgate serve: %v", ErrSetup, err)
	}
	s := &server{cmd: cmd, logged: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		defer close(s.logged)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		lines := 0
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
			if log != nil && lines < 50 { // the first lines only: the run prints its own report
				fmt.Fprintln(log, "skillgate serve: "+sc.Text())
				lines++
			}
		}
	}()
	select {
	case u := <-found:
		s.url = u
		return s, nil
	case <-time.After(60 * time.Second):
	case <-ctx.Done():
	}
	_ = s.stop() // the setup error below says what went wrong
	return nil, fmt.Errorf("%w: skillgate serve did not say where it listens", ErrSetup)
}

// stop interrupts the server (it flushes the audit log) and waits for it.
func (s *server) stop() error {
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		err = errors.New("killed after 30 s")
		<-done // the exit status of a killed server says nothing more
	}
	<-s.logged
	return err
}

// rssWatch reads a process's peak resident set (VmHWM) at the end, and its
// current RSS every 100 ms meanwhile, keeping the larger.
type rssWatch struct {
	pid  int
	peak int64
	quit chan struct{}
	done chan struct{}
}

func (w *rssWatch) start(pid int) {
	w.pid, w.quit, w.done = pid, make(chan struct{}), make(chan struct{})
	go func() {
		defer close(w.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			w.sample()
			select {
			case <-w.quit:
				return
			case <-t.C:
			}
		}
	}()
}

func (w *rssWatch) sample() {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(w.pid) + "/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		for _, key := range []string{"VmHWM:", "VmRSS:"} {
			if rest, ok := strings.CutPrefix(line, key); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				w.peak = max(w.peak, kb<<10)
			}
		}
	}
}

func (w *rssWatch) stop() int64 {
	close(w.quit)
	<-w.done
	w.sample()
	return w.peak
}

// bearer sends an agent's token, and its skillgate session: a client of
// protocol 2026-07-28 (the Go SDK's default) has no MCP session, and
// names skillgate's with the Skillgate-Session header on every request
// (docs/mcp.md), as an agent that loads skills must.
type bearer struct {
	token, session string
	base           http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	r.Header.Set("Skillgate-Session", b.session)
	return b.base.RoundTrip(r)
}

// runAgents runs every agent at once and gathers what they measured.
func runAgents(ctx context.Context, cfg Config, url string, secrets []string, note, noteText string, rep *Report) {
	var mu sync.Mutex
	record := func(op string, d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			rep.Errors[op]++
			if len(rep.ErrorText) < 10 {
				rep.ErrorText = append(rep.ErrorText, op+": "+oneLine(err.Error()))
			}
			return
		}
		rep.Latency[op] = append(rep.Latency[op], d)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 4, MaxConnsPerHost: 0, IdleConnTimeout: 90 * time.Second}
	defer transport.CloseIdleConnections()
	var connected sync.WaitGroup
	connected.Add(len(secrets))
	var wg sync.WaitGroup
	begin := time.Now()
	allConnected := make(chan time.Duration, 1)
	go func() { connected.Wait(); allConnected <- time.Since(begin) }()
	for i, secret := range secrets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := agent{id: i, cfg: cfg, record: record, note: note, noteText: noteText}
			a.run(ctx, url, &http.Client{Transport: bearer{token: secret, session: "load-" + agentName(i), base: transport}}, connected.Done, func(calls, pages, listed int) {
				mu.Lock()
				rep.CapCalls += calls
				rep.Pages += pages
				rep.Listed = max(rep.Listed, listed)
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	rep.ConnectAll = <-allConnected
	for _, l := range rep.Latency {
		slices.Sort(l)
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// agent is one simulated agent.
type agent struct {
	id             int
	cfg            Config
	record         func(op string, d time.Duration, err error)
	note, noteText string
}

// opTimeout bounds each operation of an agent.
const opTimeout = 2 * time.Minute

func (a *agent) run(ctx context.Context, url string, hc *http.Client, connected func(), done func(calls, pages, listed int)) {
	calls, pages, listed := 0, 0, 0
	defer func() { done(calls, pages, listed) }()
	once := sync.OnceFunc(connected)
	defer once()
	cl := mcp.NewClient(&mcp.Implementation{Name: "load-" + agentName(a.id), Version: "v0"}, nil)
	cctx, cancel := context.WithTimeout(ctx, opTimeout)
	t0 := time.Now()
	cs, err := cl.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	cancel()
	a.record("connect", time.Since(t0), err)
	once()
	if err != nil {
		return
	}
	defer cs.Close()
	// think pauses as the model's turn would between two calls; the seed
	// makes a run's pauses the same from one run to the next.
	rng := rand.New(rand.NewPCG(uint64(a.id), 0x5eed))
	think := func() bool {
		if a.cfg.Think <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(a.cfg.Think/2 + time.Duration(rng.Int64N(int64(a.cfg.Think)+1)))
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	// callTool thinks, then calls name and records the call's latency
	// (the pause not included) under op.
	callTool := func(op, name string, args map[string]any) (*mcp.CallToolResult, error) {
		if !think() {
			a.record(op, 0, ctx.Err())
			return nil, ctx.Err()
		}
		cctx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		t0 := time.Now()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
		d := time.Since(t0)
		if err == nil && res.IsError {
			err = fmt.Errorf("%s: tool error: %s", name, resultText(res))
		}
		a.record(op, d, err)
		return res, err
	}

	// Page through skill_list: follow next_cursor while the server gives one.
	var first string // category/name of a skill to load
	var firstName string
	args := map[string]any{}
	for pages < a.cfg.MaxPages {
		res, err := callTool("skill_list page", "skill_list", args)
		if err != nil {
			return
		}
		pages++
		var page struct {
			Skills []struct {
				Name     string `json:"name"`
				Category string `json:"category"`
			} `json:"skills"`
			NextCursor string `json:"next_cursor"`
		}
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			_ = json.Unmarshal(raw, &page)
		}
		listed += len(page.Skills)
		for _, s := range page.Skills {
			if first == "" && s.Name != "notes" {
				first, firstName = s.Name, s.Name
				if s.Category != "" {
					first = s.Category + "/" + s.Name
				}
			}
		}
		if page.NextCursor == "" {
			break
		}
		args = map[string]any{"cursor": page.NextCursor}
	}
	if first == "" {
		a.record("load_skill", 0, errors.New("skill_list listed no skill to load"))
		return
	}
	if _, err := callTool("load_skill", "load_skill", map[string]any{"skill": first}); err != nil {
		return
	}
	res, err := callTool("read_file", "read_file", map[string]any{"file_path": "/skills/" + firstName + "/SKILL.md"})
	if err == nil && !strings.Contains(resultText(res), "name: "+firstName) {
		a.record("read_file", 0, fmt.Errorf("read_file of %s's SKILL.md did not return it: %.200q", firstName, resultText(res)))
	}
	if _, err := callTool("grep", "grep", map[string]any{"pattern": "the", "path": "/skills/" + firstName}); err != nil {
		return
	}
	calls++ // counted when sent: the audit log must hold it whatever the outcome
	res, err = callTool("capability call", "read_text_file", map[string]any{"path": a.note})
	if err == nil && resultText(res) != a.noteText {
		a.record("capability call", 0, fmt.Errorf("read_text_file returned %.200q", resultText(res)))
	}
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
