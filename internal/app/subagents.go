package app

import (
	"context"
	"errors"
	"time"

	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// AddSubAgentToken makes a bearer token for a sub-agent over HTTP: the
// principal of agent, tier and tenant, whose scope is forward within the
// scope of parent (TENANT/AGENT, which must hold a token; see
// server.Delegation). A malformed principal or delegation is a usage
// error.
func (a *App) AddSubAgentToken(ctx context.Context, agent, tier, tenant, parent string, forward []string) (secret string, tok server.Token, p capability.Principal, err error) {
	if p, err = Principal(agent, tier, tenant); err != nil {
		return "", tok, p, err
	}
	ts, err := a.TokenSet(ctx, nil)
	if err != nil {
		return "", tok, p, err
	}
	secret, tok, err = ts.AddDelegated(ctx, p, server.Delegation{Parent: parent, Forward: forward}, time.Now())
	if errors.Is(err, server.ErrInvalidDelegation) {
		return "", tok, p, Usagef("%v", err)
	}
	return secret, tok, p, err
}

// delegateToken registers child as a sub-agent of parent with the
// capabilities forward, for a sub-agent's bearer token (server.Delegate).
func (d *Runtime) delegateToken(parent, child capability.Principal, forward []string) error {
	_, err := d.Caps.Decider.Delegate(parent, child, forward)
	return err
}
