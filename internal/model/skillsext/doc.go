// Package skillsext holds the formats of the MCP Skills extension
// (SEP-2640, io.modelcontextprotocol/skills): skill entries and their
// resources with digests and limits, skill:// URIs, paging cursors, the
// frontmatter as JSON, the extension's method names, and the records of
// skills that installed skills' servers publish. Both sides use it: the
// agent interface serving skills (internal/agent/mcpskills), and admission
// and the gateway, which verify and relay what upstream servers publish.
package skillsext
