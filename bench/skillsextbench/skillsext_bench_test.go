// Package skillsextbench measures and checks the MCP Skills extension of
// `skillgate serve` on a large registry, with outside clients over
// streamable HTTP on loopback: plain HTTP JSON-RPC for skills/list (which
// the go-sdk client cannot send) and the go-sdk client for the rest.
//
// TestWalkVerify pages through the whole skills/list of a T1 agent,
// checking that no entry repeats and that every skill the catalog shows it
// is listed (skill_list's total, less the skills the extension does not
// serve), then reads every file of 100 skills spread over the walk with
// resources/read and verifies each against its entry (size and SHA-256,
// and the frontmatter of each SKILL.md field by field).
//
// BenchmarkSkillsList walks skills/list in pages of 100 and, as the
// anchor in the same run, the skill_list tool in pages of 100 over the
// same registry and session, SKILLGATE_BENCH_RUNS times (3), after a
// warm-up walk of each. It reports, as medians over the runs: the p50 of a
// page and the whole walk for each, their ratios, and the server's
// resident set (VmRSS) after the first 10 pages, at its peak and at the
// end of the skills/list walks, to show that memory stays flat while
// paging; and the first skills/list walk (which builds every entry from
// the store and each SKILL.md) with the resident set before and after it
// (the entry cache, bounded by mcpskills.DefaultCacheBytes).
//
// Run both with bench/skillsext.sh, which generates and scans the
// registry; or with SKILLGATE_BENCH_DATA (a data directory holding a
// scanned registry) and SKILLGATE_BIN (a skillgate binary):
//
//	go test -run WalkVerify -bench SkillsList -benchtime 1x ./bench/skillsextbench/
package skillsextbench

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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpskills"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/model/skillsext"
)

// setup returns the data directory and binary, or skips.
func setup(tb testing.TB) (data, bin string) {
	data, bin = os.Getenv("SKILLGATE_BENCH_DATA"), os.Getenv("SKILLGATE_BIN")
	if data == "" || bin == "" {
		tb.Skip("SKILLGATE_BENCH_DATA or SKILLGATE_BIN is unset: run bench/skillsext.sh")
	}
	return data, bin
}

// serverProc is `skillgate serve` and its MCP endpoint.
type serverProc struct {
	cmd *exec.Cmd
	url string
}

var mcpAt = regexp.MustCompile(`MCP at (http://\S+/mcp)`)

func start(tb testing.TB, bin, data string) *serverProc {
	tb.Helper()
	cmd := exec.Command(bin, "--data", data, "serve", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
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
		tb.Cleanup(p.stop)
		return p
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		tb.Fatal("skillgate serve did not announce its endpoint")
	}
	return nil
}

func (p *serverProc) stop() {
	if p.cmd.ProcessState != nil {
		return
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

// rss returns the process's resident set (VmRSS) in MB.
func (p *serverProc) rss() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// agent is one T1 agent: a go-sdk session, and plain JSON-RPC over HTTP
// in that session for the extension's own methods.
type agent struct {
	url, token string
	cs         *mcp.ClientSession
	hc         *http.Client
	id         int
}

func connect(tb testing.TB, url, data string) *agent {
	tb.Helper()
	p := capability.Principal{Tenant: "bench", Agent: fmt.Sprintf("ext-%d", time.Now().UnixNano()), Tier: skill.T1}
	secret, _, err := server.AddToken(filepath.Join(data, server.TokensFile), p, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	hc := &http.Client{Transport: bearer{secret, http.DefaultTransport}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "skillsextbench", Version: "v0"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return &agent{url: url, token: secret, cs: cs, hc: hc}
}

// rpc sends one JSON-RPC request in the agent's MCP session and decodes
// its result into out.
func (a *agent) rpc(tb testing.TB, method string, params any, out any) {
	tb.Helper()
	a.id++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": a.id, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, a.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", a.cs.ID())
	resp, err := a.hc.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("%s: %d %v %s", method, resp.StatusCode, err, b)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Error != nil {
		tb.Fatalf("%s: %v %s", method, err, b)
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		tb.Fatalf("%s result: %v", method, err)
	}
}

type listPage struct {
	Skills     []skillsext.Entry `json:"skills"`
	NextCursor string            `json:"nextCursor"`
	CacheScope string            `json:"cacheScope"`
}

// walkExt pages through skills/list; page is called after each page with
// its index and duration.
func (a *agent) walkExt(tb testing.TB, page func(i int, d time.Duration, p *listPage)) {
	cursor := ""
	for i := 0; ; i++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var p listPage
		t0 := time.Now()
		a.rpc(tb, "skills/list", params, &p)
		page(i, time.Since(t0), &p)
		if p.NextCursor == "" {
			return
		}
		cursor = p.NextCursor
	}
}

type skillListOut struct {
	Total      int    `json:"total"`
	NextCursor string `json:"next_cursor"`
	Skills     []struct {
		Name     string `json:"name"`
		Category string `json:"category"`
	} `json:"skills"`
}

// walkTool pages through the skill_list tool, 100 a page.
func (a *agent) walkTool(tb testing.TB, page func(i int, d time.Duration, out *skillListOut)) {
	cursor := ""
	for i := 0; ; i++ {
		args := map[string]any{"limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		t0 := time.Now()
		res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "skill_list", Arguments: args})
		d := time.Since(t0)
		if err != nil || res.IsError {
			tb.Fatalf("skill_list: %v %+v", err, res)
		}
		var out skillListOut
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			tb.Fatal(err)
		}
		page(i, d, &out)
		if out.NextCursor == "" {
			return
		}
		cursor = out.NextCursor
	}
}

func TestWalkVerify(t *testing.T) {
	data, bin := setup(t)
	sg := start(t, bin, data)
	a := connect(t, sg.url, data)
	var all []skillsext.Entry
	seen := map[string]bool{}
	a.walkExt(t, func(i int, _ time.Duration, p *listPage) {
		if len(p.Skills) > mcpskills.PageSize || p.CacheScope != "private" {
			t.Fatalf("page %d: %d skills, cacheScope %q", i, len(p.Skills), p.CacheScope)
		}
		for _, e := range p.Skills {
			if seen[e.URI] {
				t.Fatalf("page %d repeats %s", i, e.URI)
			}
			seen[e.URI] = true
			all = append(all, e)
		}
	})
	total, refused := 0, 0
	a.walkTool(t, func(i int, _ time.Duration, out *skillListOut) {
		total = out.Total
		for _, s := range out.Skills {
			key := s.Name
			if s.Category != "" {
				key = s.Category + "/" + s.Name
			}
			if !seen["skill://"+key+"/SKILL.md"] {
				// Only skills the extension does not serve may be missing.
				var g json.RawMessage
				a.id++
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": a.id, "method": "skills/get", "params": map[string]string{"uri": "skill://" + key + "/SKILL.md"}})
				req, _ := http.NewRequest(http.MethodPost, a.url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := a.hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				g, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				if !bytes.Contains(g, []byte("is not served through the MCP Skills extension")) {
					t.Errorf("%s is in skill_list but not in skills/list: skills/get says %s", key, g)
				} else if refused++; refused <= 3 {
					t.Logf("not served: %s", g)
				}
			}
		}
	})
	if total < 9000 || len(all) > total {
		t.Fatalf("skills/list listed %d skills, skill_list %d", len(all), total)
	}
	t.Logf("skills/list: %d skills, skill_list: %d (%d not served through the extension)", len(all), total, refused)
	files := 0
	step := max(1, len(all)/100)
	checked := 0
	for i := 0; i < len(all) && checked < 100; i += step {
		e := all[i]
		if err := skillsext.CheckLimits(e.Resources); err != nil {
			t.Errorf("%s: %v", e.URI, err)
		}
		for _, r := range e.Resources {
			res, err := a.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: r.URI})
			if err != nil {
				t.Fatalf("resources/read %s: %v", r.URI, err)
			}
			c := res.Contents[0]
			content := []byte(c.Text)
			if c.Blob != nil {
				content = c.Blob
			}
			if err := e.VerifyRead(r.URI, content); err != nil {
				t.Errorf("%v", err)
			}
			if r.URI == e.URI {
				if err := e.VerifyFrontmatter(content); err != nil {
					t.Errorf("%v", err)
				}
			}
			files++
		}
		checked++
	}
	if checked != 100 {
		t.Fatalf("verified %d skills, want 100", checked)
	}
	t.Logf("verified %d files of %d skills", files, checked)
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkSkillsList: see the package documentation. Run it with
// -benchtime 1x.
func BenchmarkSkillsList(b *testing.B) {
	data, bin := setup(b)
	runs := 3
	if v, err := strconv.Atoi(os.Getenv("SKILLGATE_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	for b.Loop() {
		sg := start(b, bin, data)
		a := connect(b, sg.url, data)
		rss0 := sg.rss()
		t0 := time.Now()
		a.walkExt(b, func(int, time.Duration, *listPage) {}) // warm-up: builds the entries
		cold := ms(time.Since(t0))
		rssWarm := sg.rss()
		a.walkTool(b, func(int, time.Duration, *skillListOut) {}) // warm-up
		var extP50, extWalk, toolP50, toolWalk, rss10, rssEnd, rssMax []float64
		pages := 0
		for range runs {
			var ext []time.Duration
			peak := 0.0
			t0 := time.Now()
			a.walkExt(b, func(i int, d time.Duration, _ *listPage) {
				ext = append(ext, d)
				if i%10 == 9 {
					r := sg.rss()
					if i == 9 {
						rss10 = append(rss10, r)
					}
					peak = max(peak, r)
				}
			})
			extWalk = append(extWalk, ms(time.Since(t0)))
			extP50 = append(extP50, ms(quantile(ext, 0.5)))
			rssEnd = append(rssEnd, sg.rss())
			rssMax = append(rssMax, peak)
			pages = len(ext)
			var tool []time.Duration
			t0 = time.Now()
			a.walkTool(b, func(_ int, d time.Duration, _ *skillListOut) { tool = append(tool, d) })
			toolWalk = append(toolWalk, ms(time.Since(t0)))
			toolP50 = append(toolP50, ms(quantile(tool, 0.5)))
		}
		b.ReportMetric(float64(pages), "pages/walk")
		b.ReportMetric(cold, "skills-list-first-walk-ms")
		b.ReportMetric(rss0, "rss-before-first-walk-MB")
		b.ReportMetric(rssWarm, "rss-after-first-walk-MB")
		b.ReportMetric(median(extP50), "skills-list-page-p50-ms")
		b.ReportMetric(median(extWalk), "skills-list-walk-ms")
		b.ReportMetric(median(toolP50), "skill_list-page-p50-ms")
		b.ReportMetric(median(toolWalk), "skill_list-walk-ms")
		b.ReportMetric(median(extP50)/median(toolP50), "ratio-page-p50")
		b.ReportMetric(median(extWalk)/median(toolWalk), "ratio-walk")
		b.ReportMetric(median(rss10), "rss-after-10-pages-MB")
		b.ReportMetric(median(rssMax), "rss-peak-during-walk-MB")
		b.ReportMetric(median(rssEnd), "rss-end-of-walk-MB")
		sg.stop()
	}
}
