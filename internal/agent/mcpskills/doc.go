// Package mcpskills is the server side of the MCP Skills extension
// (io.modelcontextprotocol/skills, SEP-2640) that skillgate serves to its
// agents: skills/list, skills/get, resources/read of skill files and
// resources/directory/read, each over exactly the skills the caller's
// principal may see, with the skills installed skills' servers publish
// relayed under mcp~<install>/. The extension's formats (entries, skill://
// URIs, cursors, limits and verification) are internal/model/skillsext.
//
// The official Go SDK (v1.8.0) does not implement the extension and refuses
// methods it does not know before any middleware runs, so the three methods
// of the extension arrive here as raw JSON-RPC ([Server.Handle]), taken off
// the stream by the gateway (stdio) or the HTTP server; resources/read goes
// through the SDK as a resource template ([Server.Read]).
//
// # Addressing
//
// A skill with identity category/name is served at
// skill://<category>/<name>/SKILL.md (a category of several levels gives
// several prefix segments); a skill without a category at
// skill://<name>/SKILL.md. The last segment of the skill path is the skill's
// name, as the extension requires. URIs are never percent-encoded: a skill
// whose identity or file paths would need it (spaces, '%', '?', '#', control
// characters) is not served through the extension, nor is one whose main
// file is not named SKILL.md or whose name is not a valid Agent Skills name.
//
// # Limits
//
// A skill over the extension's limits (512 files, 16 MiB in total) is not
// served ("servers SHOULD NOT serve" it): it is left out of skills/list, and
// skills/get answers -32602 naming the limit, so the agent's principal
// learns why. Such a skill stays loadable with load_skill.
//
// # Digests
//
// Entries list each file's SHA-256 as the registry recorded it at scan time
// (store.Version.Files "digest"). A version recorded before skillgate kept
// per-file digests is hashed here on first use, all its files read once,
// and served only when the tree digest they make is the recorded one (the
// next scan records them; see migration 14 of store/sqlite). Every read is
// checked against the entry before it is served: a file changed on disk
// since the scan is refused with -32603, never served unverified.
package mcpskills
