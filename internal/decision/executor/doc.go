// Package executor is skillgate's model of provider-neutral capabilities:
// the two orthogonal axes of seed 000, kept apart.
//
//   - An [Executor] is what an agent calls: a canonical name written
//     verb_object from a closed vocabulary ([Verbs]), a description and an
//     input schema. Executors are declared in an executor catalog file
//     ([ParseCatalog]); skillgate embeds one ([Builtin]).
//   - A [Backend] is how one provider runs one executor: one tool of one
//     MCP server of one provider skill, with an argument [Mapping] written
//     in CEL from the executor's canonical arguments to the tool's. Backends
//     are declared in a provider skill's backends.yaml, kept beside its
//     SKILL.md and mcp.json ([ParseBackends]).
//   - A provider ([Provider]) is the service behind backends (github,
//     gitlab); the catalog is its naming authority and knows each
//     provider's suffix (_github), so provider-suffixed tool names are
//     recognised ([Catalog.SplitProvider]).
//   - The resolver ([Resolve]) picks, for one call, the backend that runs
//     it: an explicit provider pin, else the tenant's then the global
//     preference order, else provider name order. It is a pure function of
//     the backends' liveness facts ([Off]) and the configuration.
//   - An executor with no live backend for a principal is dormant: it is
//     not listed ([Index.Live]).
//
// The package decides nothing about skills, credentials or policy: callers
// give it each backend's liveness as data, so the same rules serve the
// broker, the CLI's `skillgate executors` and the tests.
package executor
