package broker_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/telemetry"
)

// BenchmarkTraceCall is a capability call relayed over stdio (the agent's
// line in, decision, pooled upstream call to the test server, the result's
// line out) on two gateways in the same run, in turn, call by call: one
// with tracing off (no endpoint: a nil tracer) and one exporting every call's
// spans over OTLP/HTTP to a receiver in the process. It reports each one's
// p50 and the paired median of the differences, on minus off: what tracing
// costs a call when it is on. BenchmarkTraceHooksOff measures what the
// tracing code costs a call when it is off.
func BenchmarkTraceCall(b *testing.B) {
	rcv := &otlpReceiver{}
	ts := httptest.NewServer(rcv)
	defer ts.Close()
	b.Setenv(telemetry.EnvEndpoint, ts.URL)
	tr, err := telemetry.Open(context.Background(), telemetry.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"}
	type path struct {
		name string
		send func(string)
		read func() string
		tool string
		lat  []time.Duration
	}
	var paths []*path
	for _, c := range []struct {
		name string
		tr   *telemetry.Tracer
	}{{"off", nil}, {"on", tr}} {
		gw, tool := traceGateway(b, c.tr)
		send, read := relayConn(b, gw, p)
		paths = append(paths, &path{name: c.name, send: send, read: read, tool: tool})
	}
	id := 0
	call := func(pt *path) time.Duration {
		id++
		line := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + pt.tool +
			`","arguments":{"text":"hi"},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`
		start := time.Now()
		pt.send(line)
		res := pt.read()
		d := time.Since(start)
		if !strings.Contains(res, `"echo: hi`) {
			b.Fatalf("%s: %s", pt.name, res)
		}
		return d
	}
	for range 50 {
		for _, pt := range paths {
			call(pt)
		}
	}
	var diffs []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// The order turns each round, so that a drift of the machine
		// weighs on both alike.
		var d [2]time.Duration
		for k := range paths {
			j := (k + i) % len(paths)
			d[j] = call(paths[j])
			paths[j].lat = append(paths[j].lat, d[j])
		}
		diffs = append(diffs, d[1]-d[0])
	}
	b.StopTimer()
	med := func(ds []time.Duration) float64 {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Nanoseconds()) / 1e3
	}
	for _, pt := range paths {
		b.ReportMetric(med(pt.lat), pt.name+"-p50-µs")
	}
	b.ReportMetric(med(diffs), "on-minus-off-paired-p50-µs")
}

// BenchmarkTraceHooksOff runs, with tracing off, every piece of tracing
// code a relayed capability call goes through (the relay's and the
// broker's nil checks, the upstream client's look for a span in the call's
// context, the spans' ends): with no tracing code the call would skip
// exactly these. The goal is at most 2 µs and no allocation per call.
func BenchmarkTraceHooksOff(b *testing.B) {
	var tr *telemetry.Tracer
	ctx, cancel := context.WithCancel(context.WithoutCancel(context.Background()))
	defer cancel()
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	result := []byte(`{"content":[{"type":"text","text":"echo: hi"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		// mcpserver: the relay's span (Conn.traceRelay, endRelayed).
		rctx, span := tr.StartServerLine(ctx, line, telemetry.Request{})
		// broker: the decision's attributes and the client span.
		if tr.Enabled() {
			b.Fatal("on")
		}
		uctx, up := tr.StartClient(rctx, telemetry.Request{})
		// mcpclient: the trace context for params._meta.
		if telemetry.MetaJSON(uctx) != nil {
			b.Fatal("meta without a span")
		}
		up.ToolResult(result)
		up.End()
		span.ToolResult(result)
		span.End()
	}
}
