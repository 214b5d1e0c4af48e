// Package capability is skillgate's vocabulary of what an agent may call,
// defined once for every package that reads, decides or records it:
//
//   - a capability's identity, [Ref], written "skill:extensionId/capabilityId";
//   - its risk metadata ([RiskLevel], [SideEffects], [DataEgress], each a
//     [RiskField] with its [Source]), ordered by one severity order in which
//     an unknown value is more severe than every known one;
//   - the pins that fix an approved tool definition ([ToolPin], [PinSet]) and
//     the [Drift] between a pinned and a live set;
//   - what introspection records about a server and its tools
//     ([RedactedServer], [RawPage], [Problem]);
//   - who calls ([Principal]) and the [Effect] of a decision.
//
// It is a leaf of plain data and pure functions: it imports nothing of
// skillgate but [skill] (for the agent tier), so the MCP client, the policy
// engine, the broker, the proposer, the installer, the artefact types and
// the audit log can all share it without importing one another.
package capability
