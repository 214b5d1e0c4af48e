package audit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillgate/skillgate/internal/storage/audit"
)

// batchLog is a [audit.Log] that records each Append as one batch of
// subjects, with the time it was called. The writer only appends; the other
// methods are left to the nil embedded Log and panic if called.
type batchLog struct {
	audit.Log
	start time.Time
	mu    sync.Mutex
	got   []string // "+elapsed subject,subject"
}

func (l *batchLog) Append(_ context.Context, rs ...audit.Record) ([]audit.Record, error) {
	subjects := make([]string, len(rs))
	for i, r := range rs {
		subjects[i] = r.Subject
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, fmt.Sprintf("+%s %s", time.Since(l.start), strings.Join(subjects, ",")))
	return rs, nil
}

func (l *batchLog) batches() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.got, "; ")
}

func rec(subject string) audit.Record {
	return audit.Record{Actor: "agent:acme/a1", Action: "capability.invoke", Subject: subject}
}

// TestWriterFlushInterval: a record waits FlushInterval for others to join
// its batch, and no longer; records that arrive meanwhile are committed with
// it, in order; a flush, or Close, ends the wait at once. It runs in a
// synctest bubble, so "not yet" is checked once the writer is idle, and
// each step's time is the bubble's, exact.
func TestWriterFlushInterval(t *testing.T) {
	const interval = 10 * time.Millisecond
	tests := []struct {
		name  string
		steps func(t *testing.T, w *audit.Writer, log *batchLog)
		want  string
	}{
		{"one record waits one interval", func(t *testing.T, w *audit.Writer, log *batchLog) {
			w.Record(rec("a"))
			time.Sleep(interval - time.Nanosecond)
			synctest.Wait()
			if got := log.batches(); got != "" {
				t.Fatalf("before the interval: appended %q", got)
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
		}, "+10ms a"},
		{"records within the interval share the batch", func(t *testing.T, w *audit.Writer, log *batchLog) {
			w.Record(rec("a"))
			time.Sleep(interval / 2)
			w.Record(rec("b"))
			w.Record(rec("c"))
			time.Sleep(interval)
			w.Record(rec("d"))
			time.Sleep(2 * interval)
		}, "+10ms a,b,c; +25ms d"},
		{"flush with nothing queued returns at once", func(t *testing.T, w *audit.Writer, log *batchLog) {
			w.Record(rec("a"))
			time.Sleep(2 * interval)
			start := time.Now()
			if err := w.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d != 0 {
				t.Errorf("Flush with nothing queued took %s", d)
			}
		}, "+10ms a"},
		{"close commits what is queued", func(t *testing.T, w *audit.Writer, log *batchLog) {
			w.Record(rec("a"))
			w.Record(rec("b"))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}, "+0s a,b"},
		{"a batch is sealed in the order of its records' times", func(t *testing.T, w *audit.Writer, log *batchLog) {
			late, early := rec("late"), rec("early")
			early.Time = time.Now()
			late.Time = early.Time.Add(time.Microsecond)
			w.Record(late)
			w.Record(early)
			time.Sleep(2 * interval)
		}, "+10ms early,late"},
		{"a durable record returns once its batch committed", func(t *testing.T, w *audit.Writer, log *batchLog) {
			start := time.Now()
			w.Record(rec("a"))
			if err := w.RecordDurable(context.Background(), rec("b")); err != nil {
				t.Fatal(err)
			}
			if got, d := log.batches(), time.Since(start); got != "+10ms a,b" || d != interval {
				t.Errorf("RecordDurable returned after %s with %q committed", d, got)
			}
		}, "+10ms a,b"},
		{"concurrent durable records share one batch", func(t *testing.T, w *audit.Writer, log *batchLog) {
			var wg sync.WaitGroup
			for _, s := range []string{"a", "b", "c"} {
				wg.Go(func() {
					if err := w.RecordDurable(context.Background(), rec(s)); err != nil {
						t.Error(err)
					}
				})
				time.Sleep(time.Millisecond)
			}
			wg.Wait()
		}, "+10ms a,b,c"},
		{"a flush ends the wait for a batch", func(t *testing.T, w *audit.Writer, log *batchLog) {
			w.Record(rec("a"))
			time.Sleep(3 * time.Millisecond)
			start := time.Now()
			if err := w.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d != 0 {
				t.Errorf("Flush waited %s for the interval", d)
			}
		}, "+3ms a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log := &batchLog{start: time.Now()}
				w := audit.NewWriter(log, audit.WriterOptions{FlushInterval: interval})
				defer w.Close()
				tt.steps(t, w, log)
				synctest.Wait()
				if got := log.batches(); got != tt.want {
					t.Fatalf("batches %q, want %q", got, tt.want)
				}
			})
		})
	}
}
