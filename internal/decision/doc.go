// Package decision groups how skillgate decides: capability scopes, Cedar
// policies, grants and sub-agents (policy, with its one adapter over
// cedar-go's experimental x/exp API in policy/internal/cedarinspect), and
// provider-neutral executors with their backends and resolver (executor).
//
// The part imports platform, model, storage and registry: it must not
// import upstream (a decision never depends on what a server says at call
// time), the agent interface, admission or the gateway.
package decision
