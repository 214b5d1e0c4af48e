package audit

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Writer appends records to a [Log] in the background, batching the records
// of concurrent callers into one transaction (group commit), so that the
// decision path of a capability call does not wait for the store. Records
// keep the order in which Record was called. The queue is bounded: when it
// is full, Record blocks rather than dropping a record.
//
// A record is durable once the batch holding it commits, normally within
// FlushInterval; Flush waits for everything queued so far, and Close flushes
// and stops. A process killed in between loses at most the records of the
// last interval, never a part of the chain.
type Writer struct {
	log      Log
	logger   *slog.Logger
	interval time.Duration
	max      int

	queue chan item
	// kick ends the writer's wait for a batch early: Flush and Close send
	// on it after queueing, so records alone never wake the writer.
	kick chan struct{}
	done chan struct{}
	once sync.Once

	mu   sync.Mutex
	err  error // the last append error, reported by Flush and Close
	lost int64 // records whose append failed
}

type item struct {
	rec   Record
	flush chan error // non-nil for a flush marker
	// durable, for a record, is told the outcome of the batch holding it
	// once it committed (RecordDurable).
	durable chan error
}

// WriterOptions tunes a Writer; zero fields take the defaults.
type WriterOptions struct {
	// FlushInterval is the longest a record waits for a batch. Default 5ms.
	FlushInterval time.Duration
	// MaxBatch is the most records in one transaction. Default 256.
	MaxBatch int
	// Queue is how many records may wait. Default 4096.
	Queue int
	// Logger receives append failures; nil discards them.
	Logger *slog.Logger
}

// NewWriter starts a writer over log.
func NewWriter(log Log, opts WriterOptions) *Writer {
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 5 * time.Millisecond
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Writer{log: log, logger: opts.Logger, interval: opts.FlushInterval, max: opts.MaxBatch,
		queue: make(chan item, opts.Queue), kick: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run()
	return w
}

// ErrWriterClosed is returned by Record and Flush after Close.
var ErrWriterClosed = errors.New("audit writer closed")

// Record queues r. It returns an error only when r is incomplete (see
// [Record.Check]) or the writer is closed.
func (w *Writer) Record(r Record) (err error) {
	if err := r.Check(); err != nil {
		return err
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	defer func() {
		if recover() != nil {
			err = ErrWriterClosed
		}
	}()
	w.queue <- item{rec: r}
	return nil
}

// RecordDurable queues r as Record does and waits until the batch holding
// it is committed, or ctx ends. It returns the batch's append error: a
// record it returns nil for survives the process being killed. Concurrent
// callers still share one transaction per batch (group commit), so each
// waits at most about FlushInterval plus one commit.
func (w *Writer) RecordDurable(ctx context.Context, r Record) error {
	committed, err := w.RecordCommitted(r)
	if err != nil {
		return err
	}
	select {
	case err := <-committed:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RecordCommitted queues r as Record does and returns a channel that
// receives the outcome of the batch holding it once that batch is
// committed (nil: r is stored), for a caller that must not block until
// then. The error is that of Record.
func (w *Writer) RecordCommitted(r Record) (_ <-chan error, err error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	ch := make(chan error, 1)
	defer func() {
		if recover() != nil {
			err = ErrWriterClosed
		}
	}()
	w.queue <- item{rec: r, durable: ch}
	return ch, nil
}

// Flush waits until every record queued before it is stored, and returns
// the first append error since the previous Flush.
func (w *Writer) Flush(ctx context.Context) (err error) {
	ch := make(chan error, 1)
	func() {
		defer func() {
			if recover() != nil {
				err = ErrWriterClosed
			}
		}()
		w.queue <- item{flush: ch}
	}()
	if err != nil {
		return err
	}
	w.wake()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wake ends the writer's wait for a batch, if it is waiting.
func (w *Writer) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Close flushes and stops the writer.
func (w *Writer) Close() error {
	w.once.Do(func() { close(w.queue); w.wake() })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Writer) run() {
	defer close(w.done)
	var batch []Record
	var flushes, durables []chan error
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	commit := func() {
		if len(batch) > 0 {
			// A refusal is queued at once, an answered call once its result
			// is passed on: seal each batch in the order of the decisions.
			slices.SortStableFunc(batch, func(a, b Record) int { return a.Time.Compare(b.Time) })
			_, err := w.log.Append(context.Background(), batch...)
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.lost += int64(len(batch))
				w.mu.Unlock()
				w.logger.Error("audit: append failed", "records", len(batch), "err", err)
			}
			for _, d := range durables {
				d <- err
			}
			batch, durables = batch[:0], durables[:0]
		}
		if len(flushes) > 0 {
			w.mu.Lock()
			err := w.err
			w.err = nil
			w.mu.Unlock()
			for _, f := range flushes {
				f <- err
			}
			flushes = flushes[:0]
		}
	}
	for {
		it, ok := <-w.queue
		if !ok {
			commit()
			return
		}
		// Let the batch gather without waking for each record: callers'
		// sends land in the buffered queue while this goroutine sleeps, so
		// a busy gateway pays two wake-ups per interval, not one per call.
		// A flush marker or a full batch ends the wait early.
		if it.flush != nil {
			flushes = append(flushes, it.flush)
		} else {
			batch = append(batch, it.rec)
			if it.durable != nil {
				durables = append(durables, it.durable)
			}
			if len(w.queue) < w.max-1 { // a backlog commits at once
				timer.Reset(w.interval)
				select {
				case <-timer.C:
				case <-w.kick:
					timer.Stop()
				}
			}
		}
	drain:
		for len(batch) < w.max && len(flushes) == 0 {
			select {
			case it, ok = <-w.queue:
				if !ok {
					break drain
				}
				if it.flush != nil {
					flushes = append(flushes, it.flush)
				} else {
					batch = append(batch, it.rec)
					if it.durable != nil {
						durables = append(durables, it.durable)
					}
				}
			default:
				break drain
			}
		}
		commit()
		if !ok {
			return
		}
	}
}
