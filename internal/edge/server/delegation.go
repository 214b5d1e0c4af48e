package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// Bounds of a token's delegation: it comes from the token file, which
// another host may write.
const (
	// MaxForward bounds the capabilities one token forwards.
	MaxForward = 256
	// maxForwardLen bounds one forwarded capability's name.
	maxForwardLen = 512
)

// ErrInvalidDelegation means a sub-agent token's parent or forwards are
// malformed, name a parent without a token, rank the sub-agent above its
// parent, or disagree with another token of the same principal.
var ErrInvalidDelegation = errors.New("invalid delegation")

// Delegation makes a token's principal a sub-agent over HTTP, as
// 'skillgate mcp --parent --forward' does over stdio: Parent is the
// parent's principal id (TENANT/AGENT), which must hold a token of its
// own (its tier is that token's, never claimed), and Forward the
// capabilities it forwards ("skill:ext/cap", or "ext/cap" when one skill
// offers it). The sub-agent's scope is Forward ∩ the parent's scope ∩ the
// registry and policy for its own tier (policy.Engine.Delegate): a token
// can narrow its parent's scope, never widen it. The zero value is no
// delegation.
type Delegation struct {
	Parent  string
	Forward []string
}

// Delegation returns the token's delegation (zero for an agent of its
// own).
func (t Token) Delegation() Delegation { return Delegation{Parent: t.Parent, Forward: t.Forward} }

// IsZero reports whether d delegates nothing: the token's principal is an
// agent of its own.
func (d Delegation) IsZero() bool { return d.Parent == "" && len(d.Forward) == 0 }

// equal reports whether d and o are the same delegation.
func (d Delegation) equal(o Delegation) bool {
	return d.Parent == o.Parent && slices.Equal(d.Forward, o.Forward)
}

// check validates d for the child principal p on its own: a well-formed
// parent of p's tenant that is not p, and bounded forwards.
func (d Delegation) check(p capability.Principal) error {
	if d.Parent == "" {
		if len(d.Forward) > 0 {
			return fmt.Errorf("%w: forwarded capabilities need a parent (--parent TENANT/AGENT)", ErrInvalidDelegation)
		}
		return nil
	}
	tenant, agent, err := policy.ParsePrincipalID(d.Parent)
	if err != nil {
		return fmt.Errorf("%w: parent: %w", ErrInvalidDelegation, err)
	}
	if id := tenant + "/" + agent; id != d.Parent {
		return fmt.Errorf("%w: parent %q must be written TENANT/AGENT (%s)", ErrInvalidDelegation, d.Parent, id)
	}
	if tenant != p.Tenant {
		return fmt.Errorf("%w: parent %s is of tenant %s, not %s", ErrInvalidDelegation, d.Parent, tenant, p.Tenant)
	}
	if d.Parent == p.ID() {
		return fmt.Errorf("%w: %s cannot be its own parent", ErrInvalidDelegation, d.Parent)
	}
	if len(d.Forward) > MaxForward {
		return fmt.Errorf("%w: %d forwarded capabilities, at most %d", ErrInvalidDelegation, len(d.Forward), MaxForward)
	}
	for _, f := range d.Forward {
		if f == "" || len(f) > maxForwardLen || strings.ContainsAny(f, " \t\r\n,") {
			return fmt.Errorf("%w: forwarded capability %.40q is not SKILL:EXT/CAP or EXT/CAP", ErrInvalidDelegation, f)
		}
	}
	return nil
}

// tokenOf returns the token of the principal id among toks, and whether
// there is one. Tokens of one id share their delegation (admitDelegation),
// and the lowest tier among them is taken, so that a parent's scope is
// never read wider than its narrowest token.
func tokenOf(toks []Token, id string) (Token, bool) {
	var best Token
	found := false
	for _, t := range toks {
		if t.Principal().ID() != id {
			continue
		}
		// T0 ranks highest: a larger tier string is a lower rank.
		if !found || t.Tier > best.Tier {
			best, found = t, true
		}
	}
	return best, found
}

// admitDelegation checks that tok may join toks: its principal's other
// tokens carry the same delegation, and a sub-agent's parent holds a token
// whose tier ranks at or above tok's.
func admitDelegation(toks []Token, tok Token) error {
	id := tok.Principal().ID()
	for _, t := range toks {
		if t.Principal().ID() == id && !t.Delegation().equal(tok.Delegation()) {
			return fmt.Errorf("%w: %s already has token %s with another delegation; remove it first ('skillgate token rm %s')", ErrInvalidDelegation, id, t.ID, t.ID)
		}
	}
	if tok.Parent == "" {
		return nil
	}
	parent, ok := tokenOf(toks, tok.Parent)
	if !ok {
		return fmt.Errorf("%w: parent %s has no token; add one first ('skillgate token add --agent ... --tenant ...')", ErrInvalidDelegation, tok.Parent)
	}
	if tok.Tier < parent.Tier {
		return fmt.Errorf("%w: %s at %s would rank above its parent %s at %s; give the sub-agent %s or lower", ErrInvalidDelegation, id, tok.Tier, tok.Parent, parent.Tier, parent.Tier)
	}
	return nil
}

// Delegate registers a sub-agent: child's scope becomes forward within
// parent's (policy.Engine.Delegate through the capability gateway's
// decider). The server calls it for every link of a sub-agent token's
// chain, from the top, before the token's MCP session starts.
type Delegate func(parent, child capability.Principal, forward []string) error

// ErrParentRevoked means a sub-agent token's parent (or an ancestor) no
// longer holds a token: the sub-agent is refused.
var ErrParentRevoked = errors.New("the parent of this sub-agent token has no token any more")

// Chain returns the delegation chain of tok in the set as loaded, from the
// top agent down to tok itself: each token's parent is the one before it.
// A parent without a token, a cycle, or a chain deeper than
// policy.MaxDelegationDepth is an error wrapping [ErrParentRevoked].
func (t *Tokens) Chain(tok Token) ([]Token, error) {
	t.mu.Lock()
	toks := make([]Token, 0, len(t.byHash))
	for _, x := range t.byHash {
		toks = append(toks, x)
	}
	t.mu.Unlock()
	chain := []Token{tok}
	for cur := tok; cur.Parent != ""; {
		if len(chain) > policy.MaxDelegationDepth {
			return nil, fmt.Errorf("%w: the chain above %s is deeper than %d", ErrParentRevoked, tok.Principal().ID(), policy.MaxDelegationDepth)
		}
		parent, ok := tokenOf(toks, cur.Parent)
		if !ok {
			return nil, fmt.Errorf("%w: %s (parent of %s)", ErrParentRevoked, cur.Parent, cur.Principal().ID())
		}
		if slices.ContainsFunc(chain, func(c Token) bool { return c.Principal().ID() == parent.Principal().ID() }) {
			return nil, fmt.Errorf("%w: %s is its own ancestor", ErrParentRevoked, parent.Principal().ID())
		}
		chain = append(chain, parent)
		cur = parent
	}
	slices.Reverse(chain)
	return chain, nil
}

// delegate registers tok's delegation chain with the decider, from the
// top; a token without a parent needs nothing.
func (s *Server) delegate(ctx context.Context, tok Token) error {
	if tok.Parent == "" {
		return nil
	}
	if s.opts.Delegate == nil {
		return fmt.Errorf("%w: this server does not serve sub-agent tokens", errForbidden)
	}
	chain, err := s.opts.Tokens.Chain(tok)
	if err != nil {
		return fmt.Errorf("%w: %w", errForbidden, err)
	}
	for i := 1; i < len(chain); i++ {
		parent, child := chain[i-1].Principal(), chain[i].Principal()
		if err := s.opts.Delegate(parent, child, chain[i].Forward); err != nil {
			return fmt.Errorf("%w: delegation from %s to %s refused: %w", errForbidden, parent.ID(), child.ID(), err)
		}
	}
	s.log.DebugContext(ctx, "sub-agent delegated", "principal", tok.Principal().String(), "parent", tok.Parent, "forwarded", len(tok.Forward))
	return nil
}

// tokenFrom returns the token a request was authenticated with.
func tokenFrom(ctx context.Context) (Token, bool) {
	ti := auth.TokenInfoFromContext(ctx)
	if ti == nil {
		return Token{}, false
	}
	tok, ok := ti.Extra[tokenKey].(Token)
	return tok, ok
}

// tokenKey is the TokenInfo.Extra key holding the token record.
const tokenKey = "skillgate.token"
