package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// poolDecl declares the test server in mode, under the id "echo".
func poolDecl(t *testing.T, mode string) mcpclient.ServerDecl {
	t.Helper()
	return testDecl(t, "echo", mode, nil)
}

// target introspects the server and pins every tool, as an approval would.
func target(t *testing.T, mode string) mcpclient.Target {
	t.Helper()
	d := poolDecl(t, mode)
	rep, err := mcpclient.Introspect(context.Background(), d, testOptions(testLimits()))
	if err != nil {
		t.Fatal(err)
	}
	return mcpclient.Target{Skill: "tools/echo", Digest: "sha256:1", Server: d, Pins: rep.Pins}
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
	tg := target(t, testserver.ModeProcess)
	p := mcpclient.NewPool(mcpclient.PoolOptions{Limits: testLimits(), RetryAfter: time.Millisecond})
	defer p.Close()

	// Concurrent first calls share one dial.
	var wg sync.WaitGroup
	outs := make([]string, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := call(t, ctx, p, tg, "echo", `{"text":"hi"}`)
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
	if res, err := call(t, ctx, p, tg, "die", `{"text":"bye"}`); err == nil {
		t.Fatalf("die succeeded: %+v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	var after string
	for {
		res, err := call(t, ctx, p, tg, "echo", `{"text":"again"}`)
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
	if _, err := call(t, ctx, p, tg, "nope", ""); !errors.Is(err, mcpclient.ErrToolBlocked) {
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
	tg := target(t, testserver.ModeProcess)
	tg.Server = poolDecl(t, testserver.ModeExit)
	p := mcpclient.NewPool(mcpclient.PoolOptions{Limits: testLimits(), RetryAfter: time.Hour})
	defer p.Close()
	_, err := call(t, ctx, p, tg, "echo", `{"text":"x"}`)
	if !errors.Is(err, mcpclient.ErrServerExited) && !errors.Is(err, mcpclient.ErrServerStart) {
		t.Fatalf("first: %v", err)
	}
	start := time.Now()
	_, err = call(t, ctx, p, tg, "echo", `{"text":"x"}`)
	if !errors.Is(err, mcpclient.ErrUnavailable) || time.Since(start) > time.Second {
		t.Fatalf("second: %v after %s", err, time.Since(start))
	}
	if st := p.Stats(); st[0].Dials != 1 || st[0].Alive || st[0].LastErr == "" {
		t.Fatalf("stats %+v", st)
	}
}

func TestPoolReportsDrift(t *testing.T) {
	ctx := context.Background()
	tg := target(t, testserver.ModeProcess)
	// Approve only echo, then tamper with its pin: the live definition no
	// longer matches, so the call is blocked and the drift reported.
	tg.Pins = tg.Pins.Select("echo")
	var mu sync.Mutex
	var drifts []capability.Drift
	p := mcpclient.NewPool(mcpclient.PoolOptions{Limits: testLimits(), OnDrift: func(_ mcpclient.Target, d capability.Drift) {
		mu.Lock()
		drifts = append(drifts, d)
		mu.Unlock()
	}})
	defer p.Close()
	if _, err := call(t, ctx, p, tg, "echo", `{"text":"x"}`); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(drifts) != 1 || strings.Join(drifts[0].Added, ",") != "die,slow" {
		t.Fatalf("drifts %+v", drifts)
	}
}

// call makes a call and waits for its outcome, decoded.
func call(t *testing.T, ctx context.Context, p *mcpclient.Pool, tg mcpclient.Target, tool, args string) (*mcp.CallToolResult, error) {
	t.Helper()
	raw, err := callRaw(ctx, p, tg, tool, args)
	if err != nil {
		return nil, err
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return &res, nil
}

// callRaw makes a call as acme/drafter and waits for its outcome, as the
// server's bytes.
func callRaw(ctx context.Context, p *mcpclient.Pool, tg mcpclient.Target, tool, args string) (string, error) {
	return callRawAs(ctx, p, capability.Principal{Tenant: "acme", Agent: "drafter", Tier: "T3"}, tg, tool, args)
}

// callRawAs makes a call as who and waits for its outcome.
func callRawAs(ctx context.Context, p *mcpclient.Pool, who capability.Principal, tg mcpclient.Target, tool, args string) (string, error) {
	type outcome struct {
		res string
		err error
	}
	ch := make(chan outcome, 2)
	p.Call(ctx, who, tg, tool, json.RawMessage(args), func(res json.RawMessage, err error) {
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
// timeouts fail.
func TestPoolCallRaw(t *testing.T) {
	ctx := context.Background()
	tg := target(t, testserver.ModeProcess)
	lim := testLimits()
	lim.CallTimeout = time.Second
	p := mcpclient.NewPool(mcpclient.PoolOptions{Limits: lim, RetryAfter: time.Millisecond})
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
