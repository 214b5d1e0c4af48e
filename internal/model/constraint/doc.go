// Package constraint implements skillgate's typed argument constraints: the
// limits a capability's manifest or a policy puts on the arguments of a
// call, checked before the call reaches its upstream MCP server.
//
// A constraint set is a small JSON object, every field optional:
//
//	{
//	  "allowedDomains": ["api.github.com", "*.example.com"],
//	  "urlArgs":        ["url"],
//	  "pathGlobs":      ["/srv/data/**", "/tmp/*.txt"],
//	  "pathArgs":       ["path", "paths", "source", "destination"],
//	  "argValues":      {"client": ["github"], "mode": ["read*"]},
//	  "rateLimit":      "10/minute"
//	}
//
// An absent field restricts nothing. A present list restricts to exactly its
// entries, so an empty list allows nothing: "allowedDomains": [] forbids
// every URL.
//
// allowedDomains applies to the string arguments named in urlArgs (absent,
// or the entry "*": every string argument at any depth that is an absolute
// URL with a host). A named argument must be an absolute URL with a host. The
// host must equal an entry, or end in the suffix of a "*." entry
// ("*.example.com" matches "a.example.com" and "a.b.example.com", not
// "example.com"), compared without case. The host is read the way browsers
// and fetch libraries read it: leading and trailing spaces and control
// characters ignored, any run of '/' and '\' after the scheme skipped, the
// authority ending at '/', '\', '?' or '#', userinfo (up to the last '@') and
// port removed, one trailing dot removed. A host that is percent-encoded or
// not ASCII is refused (write allowed internationalized names in their
// punycode form, "xn--…"), and so is a URL with a tab or newline inside.
//
// pathGlobs applies to the arguments named in pathArgs (absent: path, paths,
// source, destination, file, directory), each a string or an array of
// strings. A path must be absolute; it is cleaned (so ".." cannot climb out
// of a glob) before it is matched. In a glob, "*" matches any run of
// characters within one path segment and "**" (a whole segment) matches any
// number of segments, including none: "/srv/data/**" matches "/srv/data" and
// everything below it.
//
// argValues binds authority to argument values: each named top-level
// argument must be present and equal one of the listed values, where "*"
// matches any run of characters. Numbers and booleans are compared by their
// JSON text ("10", "true").
//
// rateLimit is "N/second", "N/minute", "N/hour" or "N/day": a token bucket
// of N tokens refilled at N per unit. This package parses it; the policy
// engine keeps the buckets.
//
// Use [Parse] on untrusted JSON (it is strict and bounded), [Set.Compile] to
// get a [Compiled] set, and [Compiled.Check] on every call: it allocates
// nothing when the arguments pass. [Intersect] combines two sets into one
// that is at least as restrictive as each.
package constraint
