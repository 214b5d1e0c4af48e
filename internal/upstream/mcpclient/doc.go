// Package mcpclient connects skillgate to the upstream MCP servers a skill
// declares: it parses the skill's mcp.json, introspects each server with the
// official Go SDK client, derives risk metadata from what the server states,
// pins every tool definition against rug pulls, and keeps long-lived
// connections that refuse to call a tool whose definition drifted.
//
// Everything an upstream server sends is treated as hostile. Every phase has
// a time limit, every message and list a size limit ([Limits]), and a stdio
// server's whole process group is killed when its connection closes, so a
// server that does not start, hangs, crashes, floods or lies yields a
// specific error ([ServerError] wrapping a sentinel from errors.go) in
// bounded time and leaves nothing running.
//
// # A tour
//
// Parse the declaration beside SKILL.md:
//
//	cfg, err := mcpclient.ParseConfig(data) // {"mcpServers": {"github": {...}}}
//	decl, _ := cfg.Server("github")
//
// Introspect it at install time. ${NAME} references in env and header values
// are expanded by the caller's lookup, never from skillgate's environment,
// and never appear in a report:
//
//	report, err := mcpclient.Introspect(ctx, decl, &mcpclient.Options{
//		Credentials: vault.Lookup,
//		Dir:         skillDir,
//	})
//	for _, c := range report.Capabilities {
//		// c.ExtensionID, c.CapabilityID, c.InputSchema, c.Risk, c.Problems
//	}
//	blocked := report.Missing() // capabilities with unknown risk fields
//
// At approval, keep the pins of the approved tools (report.Pins.Select) in
// the install report. At run time, connect with them:
//
//	conn, err := mcpclient.Dial(ctx, decl, &mcpclient.ConnOptions{
//		Options: opts,
//		Pins:    &approved,
//		OnDrift: func(d capability.Drift) { registry.Block(d.Affected()) },
//	})
//	res, err := conn.CallTool(ctx, "search_issues", args) // ErrToolBlocked on drift
//
// # Raw capture
//
// The SDK's typed tool drops fields it does not know and cannot tell an
// absent hint from false, so this package captures every tools/list result
// as the bytes the server sent ([ServerReport.RawToolsList]) and works from
// them: risk derivation distinguishes absent annotations from false ones,
// and pins cover every field.
//
// # Risk metadata
//
// A server states risk directly under the tool _meta key [MetaKey]
// ("io.skillgate/risk"); otherwise explicitly present annotations are mapped
// (see [DeriveRisk]) into a [capability.RiskMetadata]. Absent annotations are not metadata, so a field with no
// statement stays unknown and the caller must block the capability until an
// operator supplies it.
//
// # Pins
//
// A pin is the SHA-256 of the RFC 8785 canonical JSON of the whole tool
// definition as received, together with the server's reported name and
// version, under a versioned domain tag ([capability.ToolPin]). The pin
// types and [capability.Diff], which compares a pinned set with a live one
// and reports added, removed, changed (field by field, with readable before
// and after) and probably renamed tools, live in package capability, beside
// the risk vocabulary, so that the artefact types and the policy engine use
// them without importing this client. This package pins what it lists and
// re-checks live connections against the approved pins.
package mcpclient
