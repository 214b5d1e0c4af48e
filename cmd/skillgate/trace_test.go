package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestMCPTraced: `skillgate mcp` with an OTLP endpoint in its environment
// traces its requests as children of the trace context in their _meta, and
// exports the spans before it exits; an OTLP protocol it cannot speak is a
// usage error.
func TestMCPTraced(t *testing.T) {
	var mu sync.Mutex
	spans := map[string]string{} // name → parent span id
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans[s.Name] = hex.EncodeToString(s.ParentSpanId)
				}
			}
		}
	}))
	defer rcv.Close()
	data := t.TempDir()
	if code, _, errs := run(t, data, "scan", "--root", filepath.Join("..", "..", "examples", "skills")); code != 0 {
		t.Fatalf("scan: %s", errs)
	}
	env := map[string]string{"SKILLGATE_DATA": data, "SKILLGATE_AGENT": "drafter", "SKILLGATE_TIER": "T3", "SKILLGATE_TENANT": "acme",
		"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_BSP_SCHEDULE_DELAY": "60000"}
	for k, v := range env {
		t.Setenv(k, v) // the exporter reads the process's environment
	}

	if code, _, errs := runEnv(t, data, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
		"mcp", "--agent", "a", "--tier", "T3"); code != 2 || errs != "Error: tracing: telemetry: invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL=\"http/json\": want http/protobuf or grpc\n" {
		t.Errorf("http/json: exit %d %q", code, errs)
	}

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	old := stdin
	stdin = inR
	t.Cleanup(func() { stdin = old })
	var errb bytes.Buffer
	m := &Main{Stdout: outW, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	done := make(chan int, 1)
	go func() { done <- m.Run(context.Background(), []string{"mcp"}); outW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const parent = "00f067aa0ba902b7"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"skill": "compraventa"},
		Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-" + parent + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("load_skill: %v %+v", err, res)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// The batch would wait a minute: the spans arrived because the exit
	// flushed them.
	mu.Lock()
	defer mu.Unlock()
	if got, ok := spans["tools/call load_skill"]; !ok || got != parent {
		t.Errorf("spans %v: want tools/call load_skill, a child of %s", spans, parent)
	}
}
