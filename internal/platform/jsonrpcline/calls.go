package jsonrpcline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skillgate/skillgate/internal/platform/jsonscan"
)

// ErrClosed is the error of a call made after [Calls.Fail], or pending when
// it was called, unless Fail was given a cause.
var ErrClosed = errors.New("jsonrpcline: connection closed")

// Response is the outcome of a raw call: the result object as the peer sent
// it, or the JSON-RPC error it answered with, or Err when there was no
// answer (the connection ended, the context was done, the write failed).
type Response struct {
	// Result is the raw "result" member. It is only valid while the done
	// callback runs: copy it to keep it.
	Result json.RawMessage
	// Error is the peer's error object, when it answered with one.
	Error *jsonrpc.Error
	// Err is set when no answer came.
	Err error
}

// Calls sends JSON-RPC requests as raw bytes over a [Writer] and matches the
// responses read by a [Reader] whose tap includes [Calls.Tap]. Its ids are
// strings with a prefix of its own, so they never collide with the numeric
// ids of the SDK's client on the same stream. Calls is safe for concurrent
// use.
type Calls struct {
	w      *Writer
	prefix string
	marker []byte // `"` + prefix: cheap test for a line that may be ours

	mu      sync.Mutex
	seq     uint64
	pending map[string]*pendingCall
	err     error

	// One timer serves the time limits of every call (GoWithin): it is
	// armed for the earliest deadline when a call's is earlier than the
	// one it is armed for, so that with a common limit only the first of
	// a series of calls touches it. timerAt is when it fires, zero when
	// it is not armed.
	timer   *time.Timer
	timerAt time.Time
}

type pendingCall struct {
	done func(Response)
	stop func() bool // releases the context watch
	// sent is set (under Calls.mu, while the Writer's lock is held) just
	// before the request is written; a call that ends earlier is never
	// written, and only a sent request is cancelled.
	sent bool
	// deadline, when not zero, is when the call ends with Err = cause.
	deadline time.Time
	cause    error
}

// NewCalls returns a Calls writing to w, whose request ids are prefix
// followed by a number. The prefix must be plain ASCII without quotes or
// backslashes.
func NewCalls(w *Writer, prefix string) *Calls {
	return &Calls{w: w, prefix: prefix, marker: []byte(`"` + prefix), pending: map[string]*pendingCall{}}
}

// Go sends the request method(params) and arranges for done to be called
// exactly once with its outcome: on the reading goroutine when the response
// arrives, on the caller's goroutine when the request cannot be written, or
// when ctx ends first (then, if the request was written, a
// notifications/cancelled follows it to the peer, and a late response is
// dropped; a request not yet written when its call ends is never written).
// params must be a JSON object or array, or nil. done must not block for
// long: it holds up the stream.
func (c *Calls) Go(ctx context.Context, method string, params json.RawMessage, done func(Response)) {
	c.start(ctx, method, params, 0, nil, done)
}

// GoWithin is [Calls.Go] with a time limit: when no response has come
// within d, the call ends with Err set to cause (which must not be nil) and
// the peer is told to cancel, as when ctx ends. A relay's calls need no
// timer and no context of their own for their limit: one timer serves every
// call of c.
func (c *Calls) GoWithin(ctx context.Context, method string, params json.RawMessage, d time.Duration, cause error, done func(Response)) {
	if d <= 0 {
		d = 1 // a limit that has already passed, as with a context
	}
	c.start(ctx, method, params, d, cause, done)
}

// start is Go with an optional time limit d (0: none).
func (c *Calls) start(ctx context.Context, method string, params json.RawMessage, d time.Duration, cause error, done func(Response)) {
	if ctx.Err() != nil {
		done(Response{Err: context.Cause(ctx)})
		return
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		done(Response{Err: err})
		return
	}
	c.seq++
	id := c.prefix + strconv.FormatUint(c.seq, 10)
	p := &pendingCall{done: done}
	c.pending[id] = p
	if d > 0 {
		p.deadline, p.cause = time.Now().Add(d), cause
		c.armLocked(p.deadline)
	}
	if ctx.Done() != nil {
		// Set under the lock: whoever takes p (under the lock) sees stop.
		p.stop = context.AfterFunc(ctx, func() {
			if c.take(id) == nil {
				return
			}
			c.abandon(id, p, context.Cause(ctx))
		})
	}
	c.mu.Unlock()

	// Write the request only if the call is still pending once the writer
	// is ours: the context may have ended, or Fail come, while it waited.
	send := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.pending[id] != p {
			return false
		}
		p.sent = true
		return true
	}
	m := jsonscan.Quote(method)
	var err error
	if len(params) > 0 {
		err = c.w.writeLineIf(send, []byte(`{"jsonrpc":"2.0","id":`), jsonscan.Quote(id), []byte(`,"method":`), m, []byte(`,"params":`), params, []byte(`}`))
	} else {
		err = c.w.writeLineIf(send, []byte(`{"jsonrpc":"2.0","id":`), jsonscan.Quote(id), []byte(`,"method":`), m, []byte(`}`))
	}
	if err != nil {
		if p := c.take(id); p != nil {
			p.release()
			p.done(Response{Err: fmt.Errorf("writing %s request: %w", method, err)})
		}
	}
}

// Pending reports how many calls await their response.
func (c *Calls) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// abandon ends the taken call p (id) with err, telling the peer to cancel
// the request when it was sent. p.sent no longer changes once p is taken,
// and a sent request holds the Writer's lock until it is written whole, so
// the notification follows it.
func (c *Calls) abandon(id string, p *pendingCall, err error) {
	if p.sent {
		_ = c.w.WriteLine([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`),
			jsonscan.Quote(id), []byte(`,"reason":`), jsonscan.Quote(err.Error()), []byte(`}}`))
	}
	p.done(Response{Err: err})
}

// armLocked makes the timer fire by deadline. c.mu is held.
func (c *Calls) armLocked(deadline time.Time) {
	if !c.timerAt.IsZero() && !deadline.Before(c.timerAt) {
		return
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(time.Until(deadline), c.expire)
	} else {
		c.timer.Reset(time.Until(deadline))
	}
	c.timerAt = deadline
}

// expire ends the calls whose deadline has passed and arms the timer for
// the earliest deadline left.
func (c *Calls) expire() {
	type ended struct {
		id string
		p  *pendingCall
	}
	var due []ended
	now := time.Now()
	c.mu.Lock()
	c.timerAt = time.Time{}
	var next time.Time
	for id, p := range c.pending {
		switch {
		case p.deadline.IsZero():
		case !p.deadline.After(now):
			delete(c.pending, id)
			due = append(due, ended{id, p})
		case next.IsZero() || p.deadline.Before(next):
			next = p.deadline
		}
	}
	if !next.IsZero() && c.err == nil {
		c.armLocked(next)
	}
	c.mu.Unlock()
	for _, e := range due {
		e.p.release()
		c.abandon(e.id, e.p, e.p.cause)
	}
}

// take removes and returns the pending call id, or nil when it already
// ended.
func (c *Calls) take(id string) *pendingCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	delete(c.pending, id)
	return p
}

func (p *pendingCall) release() {
	if p.stop != nil {
		p.stop()
	}
}

// response is the part of an incoming message Tap needs. Method is decoded
// only to tell a request that reuses one of our ids from a response.
type response struct {
	ID     *string         `json:"id"`
	Method *string         `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// responseKeys are the members of a response that decodeResponse reads,
// in the order of its values.
var responseKeys = []string{"id", "method", "result", "error"}

// decodeResponse decodes line as json.Unmarshal into a response would, and
// reports false where that fails. The usual response (a plain string id, a
// result, no method, no error) is read with jsonscan.Object; anything else goes
// to encoding/json.
func decodeResponse(line []byte) (response, bool) {
	var v [4][]byte
	if jsonscan.Object(line, responseKeys, v[:]) && isNullOrAbsent(v[1]) && isNullOrAbsent(v[3]) {
		if id, ok := jsonscan.PlainString(v[0]); ok {
			// Result is the reader's buffer, not a copy: Response.Result is
			// valid only while done runs, which is before the reader reads
			// again. A relay copies it once, into the message it writes.
			return response{ID: &id, Result: v[2]}, true
		}
	}
	var r response
	if err := json.Unmarshal(line, &r); err != nil {
		return response{}, false
	}
	return r, true
}

func isNullOrAbsent(raw []byte) bool { return raw == nil || string(raw) == "null" }

// Tap takes line when it is the response to one of c's requests, and calls
// that request's done. It is meant to be (part of) a [Reader]'s tap.
//
// A line is read once: the usual message (a response with a plain string
// id, or a message of the SDK's with another id or a method) is told apart
// by jsonscan.Object alone, which reads every byte of it anyway (a result the
// relay passes on must be valid JSON); only what it cannot decide (an id
// with escapes, a response with an error, a line that is not plain JSON)
// goes to encoding/json, after a search for the prefix.
func (c *Calls) Tap(line []byte) bool {
	var v [4][]byte
	if jsonscan.Object(line, responseKeys, v[:]) {
		id := v[0]
		switch {
		case !bytes.HasPrefix(id, c.marker):
			// Not ours, unless an escape sequence spells the prefix.
			if len(id) == 0 || id[0] != '"' || bytes.IndexByte(id, '\\') < 0 {
				return false
			}
		case !isNullOrAbsent(v[1]):
			return false // a request or notification that reuses our id
		case isNullOrAbsent(v[3]):
			if s, ok := jsonscan.PlainString(id); ok {
				return c.answer(s, v[2], nil)
			}
		}
	}
	if !bytes.Contains(line, c.marker) {
		return false
	}
	r, ok := decodeResponse(line)
	if !ok || r.ID == nil || r.Method != nil {
		return false
	}
	return c.answer(*r.ID, r.Result, r.Error)
}

// answer ends the call id, when it is one of c's, with its result or error.
// It reports whether the response was c's.
func (c *Calls) answer(id string, result json.RawMessage, rerr *jsonrpc.Error) bool {
	if len(id) <= len(c.prefix) || id[:len(c.prefix)] != c.prefix {
		return false
	}
	p := c.take(id)
	if p == nil {
		return true // the answer to a call that already ended: nobody waits for it
	}
	p.release()
	switch {
	case rerr != nil:
		p.done(Response{Error: rerr})
	case len(result) == 0:
		p.done(Response{Err: fmt.Errorf("response to %s has neither result nor error", id)})
	default:
		p.done(Response{Result: result})
	}
	return true
}

// Fail ends every pending call with err (ErrClosed when nil) and makes every
// later call fail the same way. Only the first Fail counts.
func (c *Calls) Fail(err error) {
	if err == nil {
		err = ErrClosed
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = map[string]*pendingCall{}
	if c.timer != nil {
		c.timer.Stop()
		c.timerAt = time.Time{}
	}
	c.mu.Unlock()
	for _, p := range pending {
		p.release()
		p.done(Response{Err: err})
	}
}
