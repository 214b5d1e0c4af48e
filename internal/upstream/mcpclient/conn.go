package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/jsonrpcline"
	"github.com/skillgate/skillgate/internal/platform/jsonscan"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// ConnOptions configures [Dial].
type ConnOptions struct {
	Options
	// Pins is the approved pin set. Tools outside it, or changed since, are
	// blocked. Nil pins the tools listed at connect time (trust on first use
	// for this connection only), so a change during the session is still
	// caught.
	Pins *capability.PinSet
	// LeftOut names the tools the server offered when Pins were approved
	// that a human left out of the approval. Offered live, they are not
	// drift (no warning, no OnDrift); like every unpinned tool they are
	// refused.
	LeftOut []string
	// OnDrift, when set, is called after every re-check that finds drift
	// (at connect, on notifications/tools/list_changed, and on
	// [Conn.Recheck]). It runs on the re-checking goroutine while the
	// re-check lock is held, so it must not call Recheck or Close; calls,
	// Drift and Blocked are fine.
	OnDrift func(capability.Drift)
}

// Conn is a long-lived connection to one upstream server that enforces pins:
// a call reaches the server only for a tool that is pinned and offered
// unchanged. Pins are re-checked at connect (a reconnect is a new Dial), on
// every notifications/tools/list_changed, and on demand. While a re-check
// triggered by a notification runs, calls wait for it; if it fails, calls
// fail with [ErrRecheckFailed] until one succeeds. A Conn is safe for
// concurrent use.
type Conn struct {
	u       *upstream
	pins    capability.PinSet
	leftOut []string
	onDrift func(capability.Drift)
	limits  Limits
	ctx     context.Context // ends at Close
	cancel  context.CancelFunc
	done    chan struct{}

	recheckMu sync.Mutex // serialises re-checks

	mu         sync.Mutex
	ready      bool // Dial finished its first listing
	missed     bool // a notification arrived before ready
	closed     bool
	report     *ServerReport
	drift      capability.Drift
	blocked    map[string]string // tool name → reason
	recheckErr error
	pending    chan struct{} // open while a notified re-check is outstanding
	gen        uint64        // notifications received
	wg         sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// Dial connects to the declared server, lists its tools and compares them
// with opts.Pins. It fails with the same errors as [Introspect], or with
// [ErrInvalidPin] when opts.Pins does not verify. Drift is not an error:
// see [Conn.Drift] and [Conn.Blocked].
func Dial(ctx context.Context, decl ServerDecl, opts *ConnOptions) (*Conn, error) {
	if opts == nil {
		opts = &ConnOptions{}
	}
	if opts.Pins != nil {
		if err := opts.Pins.Verify(); err != nil {
			return nil, &ServerError{ServerID: decl.ID, Phase: "pins", Err: err}
		}
	}
	o := opts.Options.resolve()
	cctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		onDrift: opts.OnDrift,
		leftOut: slices.Clone(opts.LeftOut),
		limits:  o.limits,
		ctx:     cctx,
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	u, err := open(ctx, decl, o, c.listChanged)
	if err != nil {
		cancel()
		return nil, err
	}
	c.u = u
	report, err := u.snapshot(ctx)
	if err != nil {
		cancel()
		_ = u.close()
		return nil, err
	}
	if opts.Pins != nil {
		c.pins = *opts.Pins
	} else {
		c.pins = report.Pins
	}
	c.mu.Lock()
	c.apply(report)
	c.ready = true
	missed, drift := c.missed, c.drift
	c.mu.Unlock()
	go func() {
		_ = u.cs.Wait()
		close(c.done)
	}()
	if missed {
		// The tool list changed while it was being listed; list again so
		// that the first state is not stale.
		if _, err := c.Recheck(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
		return c, nil
	}
	if !drift.Empty() {
		u.o.logger.Warn("mcpclient: pinned tools drifted", "server", decl.ID, "affected", drift.Affected())
		if c.onDrift != nil {
			c.onDrift(drift)
		}
	}
	return c, nil
}

// apply installs a fresh report and recomputes drift and the blocked set.
// c.mu must be held.
func (c *Conn) apply(r *ServerReport) {
	c.report = r
	c.drift = capability.Diff(c.pins, r.Pins).Omit(c.leftOut)
	c.blocked = make(map[string]string)
	for _, n := range c.leftOut {
		_, pinned := c.pins.Lookup(n)
		if _, live := r.Pins.Lookup(n); live && !pinned {
			c.blocked[n] = "it was left out of the approval"
		}
	}
	for _, n := range c.drift.Added {
		c.blocked[n] = "it was added after the tools were pinned"
	}
	for _, n := range c.drift.Removed {
		c.blocked[n] = "the server no longer offers it"
	}
	for _, ch := range c.drift.Changed {
		names := make([]string, len(ch.Fields))
		for i, f := range ch.Fields {
			names[i] = f.Field
		}
		c.blocked[ch.Name] = "its definition changed since it was pinned (" + strings.Join(names, ", ") + ")"
	}
}

// Server returns the identity the server reported at connect.
func (c *Conn) Server() capability.ServerIdentity { return c.u.server }

// Report returns the latest introspection report.
func (c *Conn) Report() *ServerReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.report
}

// Drift returns the drift found by the latest successful re-check.
func (c *Conn) Drift() capability.Drift {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drift
}

// BlockedTool is a tool a Conn refuses to call, and why.
type BlockedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Blocked returns the blocked tools, sorted by name.
func (c *Conn) Blocked() []BlockedTool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]BlockedTool, 0, len(c.blocked))
	for n, r := range c.blocked {
		out = append(out, BlockedTool{Name: n, Reason: r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Done returns a channel that is closed when the upstream session ends, by
// Close or because the server went away. A pool uses it to reconnect (with
// a new Dial, which re-checks the pins).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Recheck lists the tools again and compares them with the pins. It returns
// the new drift; on error the previous report stays, and every call fails
// with [ErrRecheckFailed] until a re-check succeeds.
func (c *Conn) Recheck(ctx context.Context) (capability.Drift, error) {
	c.recheckMu.Lock()
	defer c.recheckMu.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return capability.Drift{}, &ServerError{ServerID: c.u.id, Phase: "tools/list", Err: ErrClosed}
	}
	gen := c.gen
	c.mu.Unlock()

	report, err := c.u.snapshot(ctx)

	c.mu.Lock()
	if err != nil {
		c.recheckErr = err
	} else {
		c.recheckErr = nil
		c.apply(report)
	}
	if c.gen == gen && c.pending != nil {
		close(c.pending)
		c.pending = nil
	}
	drift := c.drift
	c.mu.Unlock()

	if err != nil {
		c.u.o.logger.Warn("mcpclient: pin re-check failed; calls are refused", "server", c.u.id, "error", err)
		return capability.Drift{}, err
	}
	if !drift.Empty() {
		c.u.o.logger.Warn("mcpclient: pinned tools drifted", "server", c.u.id, "affected", drift.Affected())
		if c.onDrift != nil {
			c.onDrift(drift)
		}
	}
	return drift, nil
}

// listChanged handles notifications/tools/list_changed: calls wait from now
// until a re-check completes.
func (c *Conn) listChanged() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if !c.ready {
		c.missed = true
		return
	}
	c.gen++
	if c.pending == nil {
		c.pending = make(chan struct{})
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_, _ = c.Recheck(c.ctx)
	}()
}

// admit checks that the tool name may be called now, after waiting for a
// re-check that a notification started.
func (c *Conn) admit(ctx context.Context, name string) error {
	se := func(cause error) error { return &ServerError{ServerID: c.u.id, Phase: "tools/call", Err: cause} }
	c.mu.Lock()
	pending := c.pending
	c.mu.Unlock()
	if pending != nil {
		select {
		case <-pending:
		case <-ctx.Done():
			return se(fmt.Errorf("%w: waiting for a pin re-check: %w", ErrConnection, ctx.Err()))
		case <-c.done:
		}
	}
	c.mu.Lock()
	closed, recheckErr := c.closed, c.recheckErr
	reason, blocked := c.blocked[name]
	_, pinned := c.pins.Lookup(name)
	c.mu.Unlock()
	switch {
	case closed:
		return se(ErrClosed)
	case recheckErr != nil:
		return se(fmt.Errorf("%w: %w", ErrRecheckFailed, recheckErr))
	case blocked:
		return se(fmt.Errorf("%w: tool %s: %s", ErrToolBlocked, strictjson.Quote(name, 128), reason))
	case !pinned:
		return se(fmt.Errorf("%w: tool %s is not pinned", ErrToolBlocked, strictjson.Quote(name, 128)))
	}
	select {
	case <-c.done:
		return se(ErrClosed)
	default:
	}
	return nil
}

// ResultFunc receives the outcome of a tool call: the tools/call result
// object exactly as the server sent it, unparsed, or an error. The result
// is the connection's read buffer: it is valid only while the function
// runs (copy it to keep it). The function runs on the goroutine reading
// the server's output, so it must not block for long. Every raw call in
// skillgate ([Conn.CallToolRaw], [Pool.Call], the broker's and the
// gateway's) hands its result on under this rule.
type ResultFunc func(result json.RawMessage, err error)

// CallToolRaw calls a pinned, unchanged tool: the one call path of a
// connection. args are the call's arguments, a JSON object (empty means
// {}), read only before CallToolRaw returns; done receives the result (see
// [ResultFunc]) or the error. CallToolRaw does not wait for the answer:
// done runs on the goroutine reading the server's output when the answer
// arrives, or on the caller's goroutine when the call ends before reaching
// the server.
//
// It fails with [ErrToolBlocked] for a tool that is not pinned or no
// longer matches its pin, [ErrRecheckFailed] after a failed re-check,
// [ErrClosed] after Close, and otherwise with the errors of a server call
// (ErrTimeout after Limits.CallTimeout, ErrServerExited, ErrServerError,
// ErrConnection). A tool that runs and reports failure is not an error:
// see the result's isError.
//
// Over stdio the request and its response bypass the SDK's client (fewer
// copies, no re-encoding, nothing the SDK does not know is dropped); over
// HTTP, and while a re-check is outstanding, the SDK's client makes the
// call on another goroutine and its result is encoded for done.
func (c *Conn) CallToolRaw(ctx context.Context, name string, args json.RawMessage, done ResultFunc) {
	var calls *jsonrpcline.Calls
	if c.u.stdio != nil {
		if _, conn := c.u.stdio.current(); conn != nil {
			calls = conn.calls
		}
	}
	c.mu.Lock()
	pending := c.pending
	c.mu.Unlock()
	if calls == nil || pending != nil {
		args := bytes.Clone(args) // the caller's buffer is not ours after return
		go func() { done(c.callSDK(ctx, name, args)) }()
		return
	}
	if err := c.admit(ctx, name); err != nil {
		done(nil, err)
		return
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	n := jsonscan.Quote(name)
	params := make([]byte, 0, len(n)+len(args)+24)
	params = append(append(append(append(params, `{"name":`...), n...), `,"arguments":`...), args...)
	if c.u.meta != nil {
		params = append(append(params, `,"_meta":`...), c.u.meta...)
	}
	params = append(params, '}')
	calls.GoWithin(ctx, "tools/call", params, c.limits.CallTimeout, errPhaseTimeout, func(r jsonrpcline.Response) {
		switch {
		case r.Err != nil:
			done(nil, c.u.classify(errors.Is(r.Err, errPhaseTimeout), ctx, "tools/call", c.limits.CallTimeout, r.Err))
		case r.Error != nil:
			done(nil, c.u.classify(false, ctx, "tools/call", c.limits.CallTimeout, r.Error))
		default:
			done(r.Result, nil)
		}
	})
}

// callSDK makes the call through the SDK's client (HTTP, or stdio while a
// re-check is outstanding) and encodes its result.
func (c *Conn) callSDK(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if err := c.admit(ctx, name); err != nil {
		return nil, err
	}
	params := &mcp.CallToolParams{Name: name}
	if len(args) > 0 {
		params.Arguments = args
	}
	cctx, cancel := context.WithTimeoutCause(ctx, c.limits.CallTimeout, errPhaseTimeout)
	defer cancel()
	res, err := c.u.cs.CallTool(cctx, params)
	if err != nil {
		return nil, c.u.classify(timedOut(cctx), ctx, "tools/call", c.limits.CallTimeout, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, &ServerError{ServerID: c.u.id, Phase: "tools/call", Err: fmt.Errorf("%w: the result cannot be encoded: %w", ErrServerError, err)}
	}
	return b, nil
}

// CallTool is [Conn.CallToolRaw] for a caller that wants the decoded
// result and can wait for it: args are encoded as JSON (nil means none),
// and the result is decoded into the SDK's type. It fails as CallToolRaw
// does, and with [ErrMalformedResponse] when the result does not decode.
func (c *Conn) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	var raw json.RawMessage
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("mcpclient: the arguments of %s cannot be encoded as JSON: %w", strictjson.Quote(name, 128), err)
		}
		raw = b
	}
	type outcome struct {
		res []byte
		err error
	}
	ch := make(chan outcome, 1)
	c.CallToolRaw(ctx, name, raw, func(res json.RawMessage, err error) { ch <- outcome{bytes.Clone(res), err} })
	o := <-ch
	if o.err != nil {
		return nil, o.err
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(o.res, &res); err != nil {
		return nil, &ServerError{ServerID: c.u.id, Phase: "tools/call", Err: fmt.Errorf("%w: the result: %w", ErrMalformedResponse, err)}
	}
	return &res, nil
}

// Close ends the session (and, for stdio, the server's process group) and
// waits for background re-checks to stop. It is idempotent.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		if c.pending != nil {
			close(c.pending)
			c.pending = nil
		}
		c.mu.Unlock()
		c.cancel()
		c.closeErr = c.u.close()
		c.wg.Wait()
	})
	return c.closeErr
}
