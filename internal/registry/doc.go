// Package registry groups the skill registry: walking roots with their
// scopes, bounds and symlink policy (discover), incremental scans,
// precedence and queries (registry), signed skills and root indexes
// (signature), per-tenant libraries kept in the bucket (library), and the
// valid skills uploaded for replicas (mirror).
//
// The part imports platform, model and storage: it must not import the
// upstream servers, decisions, the agent interface or admission.
package registry
