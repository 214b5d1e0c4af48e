package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/mcpclient"
	"github.com/skillgate/skillgate/upstream"
)

const envMode = "SKILLGATE_UPSTREAM_TEST_SERVER"

// TestMain doubles as the upstream server: tests start this binary again
// with envMode set.
func TestMain(m *testing.M) {
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(serve(mode))
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Text string `json:"text"`
}

// serve runs a small stdio server: echo answers, die exits the process
// mid-call, slow answers only after a minute unless cancelled, and in mode "broken" the process exits before initialize.
func serve(mode string) int {
	if mode == "broken" {
		return 3
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream-test", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text + " from " + itoa(os.Getpid())}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Exit the server."}, func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
		os.Exit(1)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Answer after a minute, or never when cancelled."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(time.Minute):
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func decl(t *testing.T, mode string) mcpclient.ServerDecl {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcpclient.ServerDecl{ID: "echo", Transport: capability.TransportStdio, Command: exe, Env: map[string]string{envMode: mode}}
}

func limits() mcpclient.Limits {
	return mcpclient.Limits{InitializeTimeout: 10 * time.Second, ListTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, TerminateTimeout: 200 * time.Millisecond}
}

// target introspects the server and pins every tool, as an approval would.
func target(t *testing.T, mode string) upstream.Target {
	t.Helper()
	d := decl(t, mode)
	rep, err := mcpclient.Introspect(context.Background(), d, &mcpclient.Options{Limits: limits(), InheritEnv: []string{"GOCOVERDIR", "GORACE", "TMPDIR"}})
	if err != nil {
		t.Fatal(err)
	}
	return upstream.Target{Skill: "tools/echo", Digest: "sha256:1", Server: d, Pins: rep.Pins}
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content %+v", res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestPoolReusesAndRestarts(t *testing.T) {
	ctx := context.Background()
	tg := target(t, "ok")
	p := upstream.New(upstream.Options{Limits: limits(), RetryAfter: time.Millisecond})
	defer p.Close()

	// Concurrent first calls share one dial.
	var wg sync.WaitGroup
	outs := make([]string, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Call(ctx, tg, "echo", map[string]any{"text": "hi"})
			if err != nil {
				t.Error(err)
				return
			}
			outs[i] = text(t, res)
		}()
	}
	wg.Wait()
	for _, o := range outs[1:] {
		if o != outs[0] {
			t.Fatalf("calls reached different processes: %q", outs)
		}
	}
	if st := p.Stats(); len(st) != 1 || st[0].Dials != 1 || !st[0].Alive || st[0].Target != "tools/echo@sha256:1/echo" {
		t.Fatalf("stats %+v", st)
	}

	// The server dies mid-call: that call fails (it may have run), the
	// next one gets a restarted server.
	if res, err := p.Call(ctx, tg, "die", map[string]any{"text": "bye"}); err == nil {
		t.Fatalf("die succeeded: %+v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	var after string
	for {
		res, err := p.Call(ctx, tg, "echo", map[string]any{"text": "again"})
		if err == nil {
			after = text(t, res)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(after, "again from ") || after[len("again from "):] == outs[0][len("hi from "):] {
		t.Fatalf("after restart %q (before %q)", after, outs[0])
	}
	if st := p.Stats(); st[0].Dials != 2 {
		t.Fatalf("stats after restart %+v", st)
	}

	// A tool that is not pinned never reaches the server.
	if _, err := p.Call(ctx, tg, "nope", nil); !errors.Is(err, mcpclient.ErrToolBlocked) {
		t.Fatalf("unpinned: %v", err)
	}

	// Retain closes what is no longer wanted.
	p.Retain(map[string]bool{})
	if st := p.Stats(); len(st) != 0 {
		t.Fatalf("after retain %+v", st)
	}
}

func TestPoolFailsFastAfterDialError(t *testing.T) {
	ctx := context.Background()
	tg := target(t, "ok")
	tg.Server = decl(t, "broken")
	p := upstream.New(upstream.Options{Limits: limits(), RetryAfter: time.Hour})
	defer p.Close()
	_, err := p.Call(ctx, tg, "echo", map[string]any{"text": "x"})
	if !errors.Is(err, mcpclient.ErrServerExited) && !errors.Is(err, mcpclient.ErrServerStart) {
		t.Fatalf("first: %v", err)
	}
	start := time.Now()
	_, err = p.Call(ctx, tg, "echo", map[string]any{"text": "x"})
	if !errors.Is(err, upstream.ErrUnavailable) || time.Since(start) > time.Second {
		t.Fatalf("second: %v after %s", err, time.Since(start))
	}
	if st := p.Stats(); st[0].Dials != 1 || st[0].Alive || st[0].LastErr == "" {
		t.Fatalf("stats %+v", st)
	}
}

func TestPoolReportsDrift(t *testing.T) {
	ctx := context.Background()
	tg := target(t, "ok")
	// Approve only echo, then tamper with its pin: the live definition no
	// longer matches, so the call is blocked and the drift reported.
	tg.Pins = tg.Pins.Select("echo")
	var mu sync.Mutex
	var drifts []capability.Drift
	p := upstream.New(upstream.Options{Limits: limits(), OnDrift: func(_ upstream.Target, d capability.Drift) {
		mu.Lock()
		drifts = append(drifts, d)
		mu.Unlock()
	}})
	defer p.Close()
	if _, err := p.Call(ctx, tg, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(drifts) != 1 || strings.Join(drifts[0].Added, ",") != "die,slow" {
		t.Fatalf("drifts %+v", drifts)
	}
}

// callRaw makes a raw call and waits for its outcome.
func callRaw(ctx context.Context, p *upstream.Pool, tg upstream.Target, tool, args string) (string, error) {
	type outcome struct {
		res string
		err error
	}
	ch := make(chan outcome, 2)
	p.CallRaw(ctx, tg, tool, json.RawMessage(args), func(res json.RawMessage, err error) {
		ch <- outcome{string(res), err} // res is only valid during the callback
	})
	o := <-ch
	select {
	case extra := <-ch:
		panic(fmt.Sprintf("done called twice: %+v then %+v", o, extra))
	case <-time.After(10 * time.Millisecond):
	}
	return o.res, o.err
}

// rawText returns the text of a raw tools/call result with one text content.
func rawText(t *testing.T, res string) string {
	t.Helper()
	var r struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	if err := json.Unmarshal([]byte(res), &r); err != nil || len(r.Content) != 1 || r.IsError {
		t.Fatalf("result %s: %v", res, err)
	}
	return r.Content[0].Text
}

// TestPoolCallRaw runs the relay path: results come back as the server's
// bytes, a dead server is restarted, and unpinned tools, cancellations and
// timeouts fail as Call's do.
func TestPoolCallRaw(t *testing.T) {
	ctx := context.Background()
	tg := target(t, "ok")
	lim := limits()
	lim.CallTimeout = time.Second
	p := upstream.New(upstream.Options{Limits: lim, RetryAfter: time.Millisecond})
	defer p.Close()

	first, err := callRaw(ctx, p, tg, "echo", `{"text":"hi"}`) // dials
	if err != nil {
		t.Fatal(err)
	}
	second, err := callRaw(ctx, p, tg, "echo", `{"text":"hi"}`) // pooled
	if err != nil {
		t.Fatal(err)
	}
	if a, b := rawText(t, first), rawText(t, second); a != b || !strings.HasPrefix(a, "hi from ") {
		t.Fatalf("two calls: %q, %q", a, b)
	}
	pid := rawText(t, first)[len("hi from "):]

	if _, err := callRaw(ctx, p, tg, "nope", `{}`); !errors.Is(err, mcpclient.ErrToolBlocked) {
		t.Fatalf("unpinned: %v", err)
	}

	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = callRaw(cctx, p, tg, "slow", `{}`)
	cancel()
	if !errors.Is(err, mcpclient.ErrConnection) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled by the caller: %v", err)
	}
	_, err = callRaw(ctx, p, tg, "slow", `{}`)
	const wantTimeout = `mcpclient: server "echo": tools/call: server did not answer in time (limit 1s)`
	if !errors.Is(err, mcpclient.ErrTimeout) || err.Error() != wantTimeout {
		t.Fatalf("over the call limit: %v; want %s", err, wantTimeout)
	}
	// The connection survives both: the server was told to cancel.
	if res, err := callRaw(ctx, p, tg, "echo", `{"text":"still"}`); err != nil || rawText(t, res) != "still from "+pid {
		t.Fatalf("after cancellations: %s %v", res, err)
	}

	// The server dies mid-call: that call fails (it may have run); the next
	// one gets a restarted server.
	if res, err := callRaw(ctx, p, tg, "die", `{"text":"bye"}`); err == nil {
		t.Fatalf("die succeeded: %s", res)
	} else if errors.Is(err, mcpclient.ErrClosed) {
		t.Fatalf("a call that reached the server failed as never sent: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := callRaw(ctx, p, tg, "echo", `{"text":"again"}`)
		if err == nil {
			if got := rawText(t, res); got == "again from "+pid || !strings.HasPrefix(got, "again from ") {
				t.Fatalf("after restart %q (pid before %s)", got, pid)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
