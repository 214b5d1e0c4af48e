package broker_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/store"
)

const opsCatalog = `apiVersion: skillgate.dev/v1
kind: ExecutorCatalog
providers:
  - {name: jira, suffix: _jira}
executors:
  - name: %s
    description: Open a ticket in a project's tracker.
    inputSchema:
      type: object
      properties:
        project: {type: string}
        summary: {type: string}
      required: [project, summary]
      additionalProperties: false
`

// TestRuntimeReloadsOperatorCatalogs: the operator catalogs of
// RuntimeOptions.CatalogDir are merged over the built-in catalog at open,
// and a file added while the gateway runs is merged without a restart;
// each load, reload and rejection is an audit record.
func TestRuntimeReloadsOperatorCatalogs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, exec string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Replace(opsCatalog, "%s", exec, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("10-tickets.yaml", "create_ticket")
	st := openStore(t)
	n := newNotifier()
	ins := &fakeInstalls{}
	ctx := context.Background()
	rt, err := broker.OpenRuntime(ctx, broker.RuntimeOptions{Installs: ins, Store: st, PolicyDir: filepath.Join(t.TempDir(), "policies"), Limits: limits(), CatalogDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"}
	names := func() []string {
		var s []string
		for _, e := range rt.Broker.ExecutorStatus(p) {
			if strings.HasSuffix(e.Name, "_ticket") {
				s = append(s, e.Name)
			}
		}
		return s
	}
	if got := names(); !slices.Equal(got, []string{"create_ticket"}) {
		t.Fatalf("executors at open: %v", got)
	}
	// Written while the gateway runs (its watch not yet looking, so
	// that it finds both at once).
	write("20-read.yaml", "read_ticket")
	write("30-again.yaml", "create_ticket") // redefines create_ticket: refused
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); rt.Watch(wctx, time.Millisecond, n) }()
	t.Cleanup(func() { cancel(); <-done })
	wait(t, n.changed, "capability change after the catalog change")
	for deadline := time.Now().Add(10 * time.Second); !slices.Equal(names(), []string{"create_ticket", "read_ticket"}); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("executors after the change: %v", names())
		}
	}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		rs, err := st.AuditRecords(ctx, store.AuditFilter{Action: "executor.catalog."})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, r := range rs {
			s := r.Action + " " + r.Subject + " " + string(r.Decision)
			if len(r.Reasons) > 0 {
				s += ": " + r.Reasons[0]
			}
			got = append(got, s)
		}
		if len(got) >= 4 || time.Now().After(deadline) {
			break
		}
	}
	want := []string{
		"executor.catalog.load executor-catalog:10-tickets.yaml allow",
		"executor.catalog.reload executor-catalog:10-tickets.yaml allow",
		"executor.catalog.reload executor-catalog:20-read.yaml allow",
		"executor.catalog.reject executor-catalog:30-again.yaml deny: invalid executor catalog: 30-again.yaml: executor create_ticket: name: " +
			"10-tickets.yaml already declares it; an operator catalog adds executors and never redefines one: remove it from 30-again.yaml or name another object",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("audit:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
