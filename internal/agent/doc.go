// Package agent groups what agents talk to: the MCP server with its tools,
// prompt and resources (mcpserver), principals, sessions, mounts and
// disclosure (session), the skill filesystem (vfs), catalogs (catalog) and
// the MCP Skills extension (mcpskills).
//
// The part imports platform, model, storage, registry and decision: it must
// not import upstream (an agent reaches a server only through the gateway)
// or admission (agents are served what the registry holds).
package agent
