package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// rawUpstream answers every raw call at once with result, or fails it
// with err; it stands in for the pool, whose relaying is tested in
// mcpclient.
type rawUpstream struct {
	result json.RawMessage
	err    error
}

func (u rawUpstream) Retain(map[string]bool) {}

func (u rawUpstream) Call(_ context.Context, _ capability.Principal, _ mcpclient.Target, _ string, _ json.RawMessage, done mcpclient.ResultFunc) {
	done(u.result, u.err)
}

// memRecorder keeps the records it is given.
type memRecorder struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (m *memRecorder) Record(r audit.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, r)
	return nil
}

func (m *memRecorder) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// TestCallAuditsAfterResult checks the audit of a relayed call: an
// allowed call the server answered is recorded (allowed, with its subject
// and latency) once its result has been passed on, not while it is being
// passed on; a refusal and an upstream failure are recorded before the
// agent is told, as before.
func TestCallAuditsAfterResult(t *testing.T) {
	ctx := context.Background()
	sk := skillFor(t, "beta")
	admin := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T0"}
	tests := []struct {
		name       string
		up         rawUpstream
		args       string
		want       string // the result done receives
		recsInDone int    // records already queued while done runs
		decision   capability.Effect
	}{
		{"allowed", rawUpstream{result: json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)}, `{"text":"hi"}`,
			`{"content":[{"type":"text","text":"ok"}]}`, 0, capability.Allow},
		{"denied", rawUpstream{result: json.RawMessage(`{}`)}, `{"text":"deny"}`,
			`{"content":[{"type":"text","text":"skillgate: call to echo denied: policy no-deny (test.cedar:1)."}],"isError":true}`, 1, capability.Deny},
		{"upstream failed", rawUpstream{err: errors.New("boom")}, `{"text":"hi"}`,
			`{"content":[{"type":"text","text":"skillgate: echo was allowed but the upstream server failed: boom"}],"isError":true}`, 1, capability.Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &memRecorder{}
			b, err := broker.New(broker.Options{
				Load:     func(context.Context) ([]broker.Skill, error) { return []broker.Skill{sk}, nil },
				Decider:  &listDecider{},
				Upstream: tt.up,
				Audit:    rec,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Reload(ctx); err != nil {
				t.Fatal(err)
			}
			var got string
			inDone := -1
			b.Call(ctx, gatewayCaller(admin), "echo", json.RawMessage(tt.args), func(res json.RawMessage) {
				got, inDone = string(res), rec.count()
			})
			if got != tt.want {
				t.Fatalf("result %s, want %s", got, tt.want)
			}
			if inDone != tt.recsInDone {
				t.Fatalf("%d records queued while done ran, want %d", inDone, tt.recsInDone)
			}
			if len(rec.recs) != 1 {
				t.Fatalf("%d records, want 1", len(rec.recs))
			}
			if r := rec.recs[0]; r.Subject != "beta:srv/echo" || r.Decision != tt.decision || r.Action != "capability.invoke" || r.LatencyNS <= 0 {
				t.Fatalf("record %+v", r)
			}
		})
	}
}

// heldRecorder is a DurableRecorder whose commits wait until release is
// closed, then report err.
type heldRecorder struct {
	memRecorder
	release chan struct{}
	err     error
}

func (h *heldRecorder) RecordCommitted(r audit.Record) (<-chan error, error) {
	h.Record(r)
	ch := make(chan error, 1)
	go func() { <-h.release; ch <- h.err }()
	return ch, nil
}

// TestCallDurableAudit: with DurableAudit, the result of an answered call
// reaches the agent only once its record is committed, and a record that
// cannot be committed withholds it; Drain waits for both.
func TestCallDurableAudit(t *testing.T) {
	ctx := context.Background()
	sk := skillFor(t, "beta")
	admin := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T0"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"committed", nil, `{"content":[{"type":"text","text":"ok"}]}`},
		{"not committed", errors.New("disk full"),
			`{"content":[{"type":"text","text":"the call ran, but its audit record could not be stored, so its result is withheld; ask an operator to check the audit log"}],"isError":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &heldRecorder{release: make(chan struct{}), err: tt.err}
			b, err := broker.New(broker.Options{
				Load:         func(context.Context) ([]broker.Skill, error) { return []broker.Skill{sk}, nil },
				Decider:      &listDecider{},
				Upstream:     rawUpstream{result: json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)},
				Audit:        rec,
				DurableAudit: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Reload(ctx); err != nil {
				t.Fatal(err)
			}
			got := make(chan string, 1)
			b.Call(ctx, gatewayCaller(admin), "echo", json.RawMessage(`{"text":"hi"}`), func(res json.RawMessage) { got <- string(res) })
			if rec.count() != 1 {
				t.Fatalf("%d records queued, want 1", rec.count())
			}
			select {
			case r := <-got:
				t.Fatalf("result %s before the record was committed", r)
			case <-time.After(20 * time.Millisecond):
			}
			dctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			if err := b.Drain(dctx); err == nil {
				t.Error("Drain returned while a record was not committed")
			}
			cancel()
			close(rec.release)
			if r := <-got; r != tt.want {
				t.Fatalf("result %s, want %s", r, tt.want)
			}
			if err := b.Drain(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
