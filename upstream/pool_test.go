package upstream_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
// mid-call, and in mode "broken" the process exits before initialize.
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
	return mcpclient.ServerDecl{ID: "echo", Transport: mcpclient.TransportStdio, Command: exe, Env: map[string]string{envMode: mode}}
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
	var drifts []mcpclient.Drift
	p := upstream.New(upstream.Options{Limits: limits(), OnDrift: func(_ upstream.Target, d mcpclient.Drift) {
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
	if len(drifts) != 1 || strings.Join(drifts[0].Added, ",") != "die" {
		t.Fatalf("drifts %+v", drifts)
	}
}
