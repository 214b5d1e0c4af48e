package capability

import (
	"errors"
	"fmt"
	"slices"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// ErrForbidden means a principal may not use a route, or may not reach
// the tenant a request names: [Access.Scope] and [Scope.Check] return it.
var ErrForbidden = errors.New("forbidden")

// Access is what each route of skillgate's HTTP edge (the REST API and
// the admin console) declares: which tokens may use it and which tenants'
// data they reach. [Access.Scope] enforces it, the one place that does.
// The tenancy model: a T0 token (a human operator) reaches every tenant; a
// T1 token (a tenant's top orchestrator) reaches its own tenant only; T2–T4
// tokens (agents) use MCP, not these routes.
type Access string

// The accesses a route declares.
const (
	// AccessPublic needs no token and shows no tenant's data (health,
	// readiness, the OpenAPI document). A token sent is still verified.
	AccessPublic Access = "public"
	// AccessServer is for T0 and T1 tokens: server-wide work that shows
	// and changes no tenant's data (rescanning the registry, metrics).
	AccessServer Access = "server"
	// AccessTenant is for T0 and T1 tokens over a tenant's data: T0 any
	// tenant, T1 its own only (listing grants, replaying a policy
	// decision).
	AccessTenant Access = "tenant"
	// AccessOperator is for T0 tokens only: state shared by every tenant
	// (installs, the changes queue, adding and revoking grants, every page
	// of the admin console).
	AccessOperator Access = "operator"
)

// Tiers returns the agent tiers a route of access a serves; nil for
// [AccessPublic], which needs no token.
func (a Access) Tiers() []skill.AgentTier {
	switch a {
	case AccessServer, AccessTenant:
		return []skill.AgentTier{skill.T0, skill.T1}
	case AccessOperator:
		return []skill.AgentTier{skill.T0}
	}
	return nil
}

// Scope decides whether p may use a route of access a, and which tenants
// the request then reaches: every tenant for T0, p's own for others. The
// error wraps [ErrForbidden] and says which tiers the route takes.
func (a Access) Scope(p Principal) (Scope, error) {
	switch a {
	case AccessPublic:
	case AccessServer, AccessTenant, AccessOperator:
		if tiers := a.Tiers(); !slices.Contains(tiers, p.Tier) {
			want := "T0 (a human operator)"
			if len(tiers) == 2 {
				want = "T0 or T1"
			}
			return Scope{}, fmt.Errorf("%w: this needs a token of agent tier %s; this token is %s", ErrForbidden, want, p)
		}
	default:
		return Scope{}, fmt.Errorf("%w: route access %q is not declared", ErrForbidden, a)
	}
	return Scope{Principal: p, all: p.Tier == skill.T0}, nil
}

// Scope is what a request may reach, from [Access.Scope]: its principal
// and the tenants whose data it may read or name. The zero Scope (no
// token) reaches no tenant.
type Scope struct {
	Principal Principal
	all       bool
}

// All reports whether the scope reaches every tenant (a T0 token).
func (s Scope) All() bool { return s.all }

// Allows reports whether the scope reaches tenant's data.
func (s Scope) Allows(tenant string) bool {
	return s.all || s.Principal.Tenant != "" && tenant == s.Principal.Tenant
}

// Check is [Scope.Allows] as an error wrapping [ErrForbidden], naming the
// tenant.
func (s Scope) Check(tenant string) error {
	if s.Allows(tenant) {
		return nil
	}
	if s.Principal.Tenant == "" {
		return fmt.Errorf("%w: tenant %s: this needs a token", ErrForbidden, tenant)
	}
	return fmt.Errorf("%w: tenant %s: a %s token reaches its own tenant (%s) only", ErrForbidden, tenant, s.Principal.Tier, s.Principal.Tenant)
}
