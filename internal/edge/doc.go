// Package edge groups skillgate's outside surfaces: HTTP with streamable
// MCP, bearer tokens and the REST API (server), the admin console (admin)
// and metrics (metrics).
//
// The part imports every part below it: it must not import the storage
// drivers or the application; the application hands it what it serves.
package edge
