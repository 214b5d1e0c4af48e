package broker

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/skillgate/skillgate/internal/platform/telemetry"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// Attribute keys of skillgate's own span attributes (package telemetry
// owns the semantic conventions'). Values are identifiers, never the
// call's arguments.
const (
	attrDecision   = "skillgate.decision"
	attrCapability = "skillgate.capability"
	attrSkill      = "skillgate.skill"
	attrServer     = "skillgate.server"
	attrPolicies   = "skillgate.policy.ids"
	attrGrant      = "skillgate.grant.id"
	attrExecutor   = "skillgate.executor"
	attrBackend    = "skillgate.backend"
	attrProvider   = "skillgate.provider"
)

// traceAdmission puts what the gateway decided about a call on the span of
// the request that made it (ctx's): the decision (allow, deny,
// require_approval), the capability, the deciding policies' ids, the grant
// that allowed it, and an executor call's executor, backend and provider.
// It does nothing when tracing is off.
func (b *Broker) traceAdmission(ctx context.Context, a *admission) {
	s := b.opts.Tracer.SpanFromContext(ctx)
	if s == nil {
		return
	}
	s.SetString(attrDecision, string(a.rec.Decision))
	if a.rec.Subject != "" {
		s.SetString(attrCapability, a.rec.Subject)
	}
	if a.c != nil {
		s.SetString(attrSkill, a.c.Skill)
		s.SetString(attrServer, a.c.target.Server.ID)
	}
	var ids []string
	for _, r := range a.policy {
		if r.Policy != "" && !slices.Contains(ids, r.Policy) {
			ids = append(ids, r.Policy)
		}
		if r.Grant != "" {
			s.SetString(attrGrant, r.Grant)
		}
	}
	if len(ids) > 0 {
		s.SetStrings(attrPolicies, ids)
	}
	for key, attr := range map[string]string{"executor": attrExecutor, "backend": attrBackend, "provider": attrProvider} {
		if v, ok := a.data[key].(string); ok && v != "" {
			s.SetString(attr, v)
		}
	}
}

// startUpstream starts the client span of an allowed call forwarded to its
// upstream server, a child of ctx's span; the upstream client writes it
// into the request's params._meta. It returns ctx and nil when tracing is
// off.
func (b *Broker) startUpstream(ctx context.Context, a *admission) (context.Context, *telemetry.Span) {
	t := b.opts.Tracer
	if !t.Enabled() {
		return ctx, nil
	}
	ctx, s := t.StartClient(ctx, telemetry.Request{Method: "tools/call", Target: a.c.Capability.CapabilityID})
	s.SetString(attrCapability, a.c.ID())
	s.SetString(attrSkill, a.c.Skill)
	s.SetString(attrServer, a.c.target.Server.ID)
	s.Arguments(a.args)
	return ctx, s
}

// endUpstream ends an upstream call's span with its outcome.
func endUpstream(s *telemetry.Span, res json.RawMessage, err error) {
	if s == nil {
		return
	}
	switch {
	case err == nil:
		s.ToolResult(res)
	case errors.Is(err, mcpclient.ErrNotSent):
		s.Fail("not_sent", err.Error())
	default:
		s.Fail("upstream_error", err.Error())
	}
	s.End()
}
