// Package platform groups the primitives the rest of skillgate stands on
// and that know nothing of skills: the one crash-safe file writer
// (atomicfile), strict reading of outside JSON
// (strictjson), JSON fast paths held to encoding/json (jsonscan), MCP stdio
// framing (jsonrpcline), pipes (pipe), file facts and FIFO-safe opens
// (fileinfo), lock files shared by processes (flock), the bounded end of a
// child's output (tailbuf), outside text made safe for a terminal
// (termtext), counted nouns (plural), the words of a name or a text
// (words), host paths kept from agents (hostpath) and OpenTelemetry tracing
// configured by the OTEL_* variables (telemetry).
//
// The part imports nothing of skillgate: it must not import any other part.
package platform
