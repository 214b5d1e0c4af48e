// Package mcpserver is the MCP server agents talk to, over stdio and
// streamable HTTP: each connection is one principal's session, offered the
// skill tools (skill_list, load_skill, unload_skill; the deepagents filesystem tools over
// the loaded skills), the catalog prompt and resources, the MCP Skills
// extension's methods, and the capabilities the capability gateway
// (internal/gateway/broker, through [CapabilitySource]) scopes for it.
//
// The server is the agent's view only: it holds no decision of its own and
// reaches no upstream MCP server except through its CapabilitySource.
package mcpserver
