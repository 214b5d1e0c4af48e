package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// dormant returns the credentials of c's server not configured for p: a
// first_party capability is dormant for p while there is one.
func (b *Broker) dormant(ctx context.Context, p capability.Principal, c *Capability) []string {
	if len(c.Credentials) == 0 || b.opts.Configured == nil {
		return nil
	}
	return b.opts.Configured(ctx, p, c.Skill, c.Credentials)
}

// connected reports whether p's calls to c can reach its server: true
// unless the server needs a connection p lacks.
func (b *Broker) connected(p capability.Principal, c *Capability) bool {
	conns := b.opts.Executors.Connections
	if conns == nil {
		return true
	}
	_, err := conns.Use(p, c.target.Server, "")
	return err == nil
}

// Tools implements [mcpserver.CapabilitySource]: the capabilities in p's
// scope that no backend maps, under their names, and the executors live
// for p, each with the provider argument's enum of its live providers. A
// dormant executor is not listed, nor a first_party capability dormant for p.
func (b *Broker) Tools(ctx context.Context, p capability.Principal) ([]*mcp.Tool, error) {
	scope := b.opts.Decider.Scope(p)
	es := b.snap.Load().exec
	out := make([]*mcp.Tool, 0, len(scope))
	for _, c := range scope {
		if es != nil && es.mapped[c.ID()] {
			continue
		}
		if len(b.dormant(ctx, p, c)) > 0 || !b.connected(p, c) {
			continue
		}
		out = append(out, c.Tool)
	}
	out = append(out, b.executorTools(es, p, scope)...)
	sortTools(out)
	return out, nil
}

// Capabilities returns every capability of the current snapshot, whoever
// may call it.
func (b *Broker) Capabilities() []*Capability { return b.snap.Load().caps }

// Call implements [mcpserver.CapabilitySource]: it decides the call at once
// and, when it is allowed, forwards it; done receives the tools/call result
// as JSON, exactly once: the upstream server's own bytes, or a tool error
// saying why the call was refused or failed. The result is valid only
// while done runs (see [mcpclient.ResultFunc]). A refusal is audited before
// done runs; the record of a call the server answered is queued once done
// has returned, on the goroutine that read the result ([Broker.Drain]
// waits for it).
func (b *Broker) Call(ctx context.Context, who capability.Caller, name string, rawArgs json.RawMessage, done func(result json.RawMessage)) {
	var a admission
	if es := b.snap.Load().exec; es != nil && es.names[name] {
		a = b.admitExecutor(ctx, es, who, name, rawArgs)
	} else {
		a = b.admit(ctx, who, name, rawArgs)
	}
	if b.opts.Tracer.Enabled() {
		b.traceAdmission(ctx, &a)
	}
	if a.refusal != "" {
		done(toolErrorJSON(a.refusal))
		return
	}
	b.forwarding.Add(1)
	uctx, span := b.startUpstream(ctx, &a) // ctx and nil when tracing is off
	uctx = mcpclient.WithAccount(uctx, a.account)
	b.opts.Upstream.Call(uctx, who.Principal, a.c.target, a.c.Capability.CapabilityID, a.args, func(res json.RawMessage, err error) {
		defer b.forwarding.Add(-1)
		endUpstream(span, res, err)
		if err != nil {
			done(toolErrorJSON(b.failed(ctx, a, name, err)))
			return
		}
		if len(res) == 0 || res[0] != '{' {
			done(toolErrorJSON(b.failed(ctx, a, name, fmt.Errorf("%w: the result is not a JSON object", mcpclient.ErrServerError))))
			return
		}
		if a.result != nil {
			mapped, err := a.result.Apply(ctx, res)
			if err != nil {
				done(toolErrorJSON(b.failed(ctx, a, name, fmt.Errorf("%w: %w", mcpclient.ErrServerError, err))))
				return
			}
			res = mapped
		}
		if b.durable != nil {
			// The agent is told of the call only once its record is
			// committed: a process killed before then loses a call the
			// agent never saw succeed, never one it did. The wait is
			// not on this goroutine, which reads the results of every
			// call to the server: res is valid only until we return.
			out := bytes.Clone(res)
			committed, err := b.allowedDurable(a)
			b.forwarding.Add(1)
			go func() {
				defer b.forwarding.Add(-1)
				if err == nil {
					err = <-committed
				}
				if err != nil {
					b.log.ErrorContext(ctx, "audit record not committed; the call's result is withheld", "capability", a.rec.Subject, "err", err)
					done(toolErrorJSON("the call ran, but its audit record could not be stored, so its result is withheld; ask an operator to check the audit log"))
					return
				}
				done(out)
			}()
			return
		}
		// The result goes to the agent before the record is queued: queuing
		// wakes the audit writer, whose work (and the thread it wakes on a
		// machine of few cores) would otherwise run while the result is
		// still being passed on. The record is the same; only its latency
		// now includes passing the result on.
		done(res)
		b.allowed(ctx, a)
	})
}

// Drain waits until every call forwarded so far has its audit record
// queued, or until ctx ends. Close the upstream pool first, so that no
// call waits for a server, then drain, then close the audit writer: no
// record is lost.
func (b *Broker) Drain(ctx context.Context) error {
	for b.forwarding.Load() > 0 {
		t := time.NewTimer(time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("broker: %d calls not yet audited: %w", b.forwarding.Load(), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// admission is a call that was looked up, validated and decided.
type admission struct {
	start   time.Time
	rec     audit.Record
	c       *Capability
	args    json.RawMessage
	refusal string // the tool error text when the call is refused
	release func(context.Context) error
	// data is the record's Data (sealed into it when it is recorded):
	// the executor, backend and provider of an executor call, the
	// approval command, the upstream error.
	data map[string]any
	// result, for an executor call whose backend declares one, maps the
	// tool's result to the executor's.
	result *executor.ResultMapping
	// account is the account of the principal's connection the call
	// uses, for a backend reached through a connection.
	account string
	// policy are the decision's reasons as the policy engine gave them,
	// for the trace's policy and grant ids (Decision.Policy).
	policy []policy.Reason
}

// admit does everything before forwarding: scope lookup, argument
// validation, decision. A refusal is audited here; an allowed call is
// audited when its outcome is known ([Broker.allowed], [Broker.failed]).
func (b *Broker) admit(ctx context.Context, who capability.Caller, name string, rawArgs json.RawMessage) admission {
	start := b.opts.Now()
	p := who.Principal
	a := admission{start: start, rec: audit.Record{
		Time: start, Actor: "agent:" + p.Tenant + "/" + p.Agent, Session: who.SessionID,
		Action: "capability.invoke", Subject: name,
	}}
	if len(rawArgs) == 0 || string(rawArgs) == "null" {
		rawArgs = json.RawMessage("{}")
	}
	a.args = rawArgs
	if h, err := audit.HashArgs(rawArgs); err == nil {
		a.rec.ArgsHash = h
	}
	refuse := func(effect capability.Effect, reasons []string, msg string) admission {
		a.rec.Decision, a.rec.Reasons = effect, reasons
		a.rec.LatencyNS = b.opts.Now().Sub(start).Nanoseconds()
		b.record(ctx, a.rec)
		a.refusal = msg
		return a
	}
	c := b.opts.Decider.Find(p, name)
	if es := b.snap.Load().exec; c != nil && es != nil && es.mapped[c.ID()] {
		c = nil // served as an executor only
	}
	if c == nil {
		return refuse(capability.Deny, []string{"not in scope: no capability named " + name + " for " + p.String()},
			fmt.Sprintf("skillgate: unknown tool %q: it is not among the capabilities you may call", name))
	}
	if missing := b.dormant(ctx, p, c); len(missing) > 0 {
		// Not listed for p: for the agent it does not exist.
		a.rec.Subject = c.ID()
		return refuse(capability.Deny, []string{"dormant: credentials not configured for " + p.String() + ": " + strings.Join(missing, ", ")},
			fmt.Sprintf("skillgate: unknown tool %q: it is not among the capabilities you may call", name))
	}
	a.c = c
	a.rec.Subject = c.ID()
	ctx, err := b.useConnection(ctx, &a, p, c, "")
	if err != nil {
		a.seal()
		return refuse(capability.Deny, []string{oneLine(err)}, "skillgate: "+oneLine(err))
	}
	args, err := decodeArgs(rawArgs)
	if err != nil {
		return refuse(capability.Deny, []string{"invalid arguments: not a JSON object"},
			fmt.Sprintf("skillgate: invalid arguments for %s: they must be a JSON object (%v)", name, err))
	}
	if args == nil {
		return refuse(capability.Deny, []string{"invalid arguments: not a JSON object"},
			fmt.Sprintf("skillgate: invalid arguments for %s: they must be a JSON object", name))
	}
	if err := c.validate(args); err != nil {
		return refuse(capability.Deny, []string{"invalid arguments: " + oneLine(err)},
			fmt.Sprintf("skillgate: invalid arguments for %s: %s", name, oneLine(err)))
	}
	b.decide(ctx, &a, who, c, name, args)
	return a
}

// decide asks the decider about a call of c with args and completes the
// admission: allowed, or refused (and audited) with the reasons.
func (b *Broker) decide(ctx context.Context, a *admission, who capability.Caller, c *Capability, name string, args map[string]any) {
	p := who.Principal
	refuse := func(effect capability.Effect, reasons []string, msg string) {
		a.rec.Decision, a.rec.Reasons = effect, reasons
		a.rec.LatencyNS = b.opts.Now().Sub(a.start).Nanoseconds()
		a.seal()
		b.record(ctx, a.rec)
		a.refusal = msg
	}
	d := b.opts.Decider.Decide(ctx, p, who.SessionID, c, args)
	a.policy = d.Policy
	switch d.Effect {
	case capability.Allow:
	case capability.RequireApproval:
		if d.Approve != "" {
			a.note("approve", d.Approve)
			b.log.WarnContext(ctx, "capability call needs a human's approval", "principal", p.String(), "session", who.SessionID,
				"capability", c.ID(), "approve", d.Approve)
		}
		msg := fmt.Sprintf("skillgate: %s needs a human's approval before you may call it: %s. Ask a human operator to approve it; the request is recorded for them.", name, strings.Join(d.told(), "; "))
		refuse(capability.RequireApproval, d.Reasons, msg)
		return
	default:
		msg := fmt.Sprintf("skillgate: call to %s denied: %s.", name, strings.Join(d.told(), "; "))
		refuse(capability.Deny, d.Reasons, msg)
		return
	}
	a.rec.Decision, a.rec.Reasons = capability.Allow, d.Reasons
	a.release = d.Release
}

// decodeArgs decodes a call's arguments, numbers kept as json.Number. A
// nil map with a nil error means they were JSON null. The empty object,
// which every call of a tool without parameters sends, needs no decoder.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	if string(bytes.Trim(raw, " \t\r\n")) == "{}" { // JSON's whitespace only
		return map[string]any{}, nil
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the object")
	}
	return args, nil
}

// allowed audits an allowed call that the upstream server answered.
func (b *Broker) allowed(ctx context.Context, a admission) {
	a.rec.LatencyNS = b.opts.Now().Sub(a.start).Nanoseconds()
	a.seal()
	b.record(ctx, a.rec)
}

// allowedDurable audits an allowed call that the server answered; the
// channel receives the outcome of the record's commit.
func (b *Broker) allowedDurable(a admission) (<-chan error, error) {
	a.rec.LatencyNS = b.opts.Now().Sub(a.start).Nanoseconds()
	a.seal()
	return b.durable.RecordCommitted(a.rec)
}

// failed audits an allowed call whose forwarding failed and returns the tool
// error text for the agent. A call the upstream connection refused because
// the live tool no longer matches its approved pin (or could not be
// re-checked) never ran: it is audited as denied for drift.
//
// A call that never reached the server (mcpclient.ErrNotSent: a missing
// credential, a server that does not start, drift) gives back the grant use
// its decision consumed, so a one-use grant still serves the call that
// reaches the server.
func (b *Broker) failed(ctx context.Context, a admission, name string, err error) string {
	a.rec.LatencyNS = b.opts.Now().Sub(a.start).Nanoseconds()
	released := false
	if a.release != nil && errors.Is(err, mcpclient.ErrNotSent) {
		if rerr := a.release(ctx); rerr != nil {
			b.log.ErrorContext(ctx, "grant use not given back", "capability", a.rec.Subject, "err", rerr)
		} else {
			released = true
		}
	}
	if a.data == nil {
		a.data = map[string]any{}
	}
	if errors.Is(err, mcpclient.ErrToolBlocked) || errors.Is(err, mcpclient.ErrRecheckFailed) {
		a.rec.Decision, a.rec.Reasons = capability.Deny, []string{"drift: " + oneLine(err)}
		if released {
			a.data["grantReleased"] = true
		}
		a.seal()
		b.record(ctx, a.rec)
		b.log.WarnContext(ctx, "call refused for drift", "capability", a.rec.Subject, "err", err)
		return fmt.Sprintf("skillgate: %s was refused: the server's tool no longer matches the definition an operator approved (drift); an operator must review it (skillgate review) before it can be called again", name)
	}
	a.data["upstreamError"] = oneLine(err)
	if released {
		a.data["grantReleased"] = true
	}
	a.seal()
	b.record(ctx, a.rec)
	b.log.WarnContext(ctx, "upstream call failed", "capability", a.rec.Subject, "err", err)
	if errors.Is(err, mcpclient.ErrConnectionRequired) {
		return "skillgate: " + oneLine(err)
	}
	if errors.Is(err, mcpclient.ErrNotSent) {
		return fmt.Sprintf("skillgate: %s was allowed but never reached its server: %s", name, oneLine(err))
	}
	return fmt.Sprintf("skillgate: %s was allowed but the upstream server failed: %s", name, oneLine(err))
}

func (b *Broker) record(ctx context.Context, r audit.Record) {
	if b.opts.Audit == nil {
		return
	}
	if err := b.opts.Audit.Record(r); err != nil {
		b.log.ErrorContext(ctx, "audit record failed", "err", err)
	}
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// toolErrorJSON is toolError as a tools/call result in JSON.
func toolErrorJSON(msg string) json.RawMessage {
	b, _ := json.Marshal(toolError(msg))
	return b
}

func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}
