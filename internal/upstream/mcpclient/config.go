package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// Bounds on an mcp.json declaration. They are far above what real skills
// declare (a handful of servers, a dozen args) and low enough that a hostile
// file costs nothing to reject.
const (
	// MaxConfigBytes is the largest mcp.json accepted.
	MaxConfigBytes = 64 << 10
	// MaxServers is the most servers one mcp.json may declare.
	MaxServers = capability.MaxServers
	// MaxArgs is the most command arguments per server.
	MaxArgs = 64
	// MaxEnv is the most environment variables per server.
	MaxEnv = 64
	// MaxHeaders is the most HTTP headers per server.
	MaxHeaders = 32
	// MaxValueBytes bounds a command, an argument, an env value or a header
	// value.
	MaxValueBytes = 4096
	// MaxURLBytes bounds a server URL.
	MaxURLBytes = 2048
	// MaxServerIDBytes bounds a server id.
	MaxServerIDBytes = 64
)

var (
	serverIDPattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	envNamePattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerNamePattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// isManagedHeader reports whether the MCP transport sets the header itself;
// a declaration may not override it (doing so would break or hijack the
// session).
func isManagedHeader(name string) bool {
	switch strings.ToLower(name) {
	case "accept", "connection", "content-length", "content-type", "host",
		"last-event-id", "mcp-protocol-version", "mcp-session-id", "te",
		"transfer-encoding", "upgrade":
		return true
	}
	return false
}

// Config is a parsed mcp.json: the MCP servers one skill declares.
type Config struct {
	// Servers holds the declarations sorted by ID.
	Servers []ServerDecl
}

// Server returns the declaration with the given id.
func (c *Config) Server(id string) (ServerDecl, bool) {
	i, ok := slices.BinarySearchFunc(c.Servers, id, func(d ServerDecl, id string) int {
		return strings.Compare(d.ID, id)
	})
	if !ok {
		return ServerDecl{}, false
	}
	return c.Servers[i], true
}

// ServerDecl is one declared MCP server, as written in mcp.json. Env and
// header values are templates: ${NAME} references a credential that is
// expanded by the caller's lookup at connect time, and $${ writes a literal
// ${. A declaration may still hold literal secrets someone typed in, so it
// formats, logs and marshals only its [ServerDecl.Redacted] view; read the
// fields directly only to connect.
type ServerDecl struct {
	// ID is the key under mcpServers; it becomes each capability's
	// extensionId. It matches [A-Za-z0-9][A-Za-z0-9_-]* and is at most
	// MaxServerIDBytes long.
	ID string
	// Transport is TransportStdio when Command is set, TransportHTTP when URL
	// is set.
	Transport capability.Transport
	// Command is the program to run (looked up on PATH when it has no slash).
	Command string
	// Args are passed to Command verbatim; they may not reference credentials
	// because a process's arguments are visible to every local user.
	Args []string
	// Env holds extra environment variables for Command, as templates.
	Env map[string]string
	// URL is the streamable HTTP endpoint (http or https, no user info).
	URL string
	// Headers holds extra HTTP request headers, as templates.
	Headers map[string]string
	// Exec, when set, is how the server really starts: a package-manager
	// launch (npx PKG, uvx PKG) runs the package fetched and pinned at
	// install, from managed storage, instead of Command and Args. It is
	// never read from mcp.json; the install flow sets it.
	Exec *launch.Exec
}

// redactedText replaces a literal segment of a template in the redacted view.
const redactedText = "[redacted]"

// Redacted returns the report-safe view of d.
func (d ServerDecl) Redacted() capability.RedactedServer {
	r := capability.RedactedServer{
		ID:          d.ID,
		Transport:   d.Transport,
		Command:     d.Command,
		Args:        slices.Clone(d.Args),
		Env:         redactTemplates(d.Env),
		URL:         redactURL(d.URL),
		Headers:     redactTemplates(d.Headers),
		Credentials: d.Credentials(),
	}
	return r
}

// Credentials returns the sorted, distinct credential names that d's env and
// header values reference.
func (d ServerDecl) Credentials() []string {
	var names []string
	for _, m := range []map[string]string{d.Env, d.Headers} {
		for _, v := range m {
			segs, err := parseTemplate(v)
			if err != nil {
				continue
			}
			for _, s := range segs {
				if s.ref != "" {
					names = append(names, s.ref)
				}
			}
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// LogValue implements slog.LogValuer so that logging a declaration logs only
// its redacted view.
func (d ServerDecl) LogValue() slog.Value {
	r := d.Redacted()
	attrs := []slog.Attr{slog.String("id", r.ID), slog.String("transport", string(r.Transport))}
	if r.Command != "" {
		attrs = append(attrs, slog.String("command", r.Command), slog.Any("args", r.Args))
	}
	if r.URL != "" {
		attrs = append(attrs, slog.String("url", r.URL))
	}
	if len(r.Credentials) > 0 {
		attrs = append(attrs, slog.Any("credentials", r.Credentials))
	}
	return slog.GroupValue(attrs...)
}

// Format implements fmt.Formatter so that every verb (%v, %+v, %#v, %s)
// prints the redacted view, never a literal value.
func (d ServerDecl) Format(f fmt.State, verb rune) {
	b, _ := json.Marshal(d.Redacted())
	fmt.Fprintf(f, "ServerDecl%s", b)
}

// MarshalJSON implements json.Marshaler with the redacted view, so that a
// declaration embedded in a report cannot leak a literal secret.
func (d ServerDecl) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.Redacted())
}

// ParseConfig parses and validates an mcp.json document of the shape
// {"mcpServers": {"<id>": {"command", "args", "env"} | {"url", "headers"}}}.
// An optional "type" ("stdio", "http" or "streamable-http") must agree with
// the fields present. The input is treated as hostile: it must be at most
// MaxConfigBytes of valid UTF-8, keys are case-sensitive, duplicate and
// unknown keys are rejected, and every count and length is bounded. Errors
// wrap [ErrInvalidConfig] and name the field.
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%w: mcp.json is %d bytes; the limit is %d", ErrInvalidConfig, len(data), MaxConfigBytes)
	}
	top, err := strictjson.Object(data)
	if err != nil {
		return nil, fmt.Errorf("%w: mcp.json: %v", ErrInvalidConfig, describeObjectErr(err, "the document"))
	}
	var servers json.RawMessage
	for _, m := range top {
		if m.Key != "mcpServers" {
			return nil, fmt.Errorf("%w: mcp.json: unknown field %s; the only top-level field is \"mcpServers\"", ErrInvalidConfig, strictjson.Quote(m.Key, 64))
		}
		servers = m.Value
	}
	if servers == nil {
		return nil, fmt.Errorf("%w: mcp.json: missing field \"mcpServers\"", ErrInvalidConfig)
	}
	entries, err := strictjson.Object(servers)
	if err != nil {
		return nil, fmt.Errorf("%w: mcpServers: %v", ErrInvalidConfig, describeObjectErr(err, "mcpServers"))
	}
	if len(entries) > MaxServers {
		return nil, fmt.Errorf("%w: mcpServers: %d servers; the limit is %d", ErrInvalidConfig, len(entries), MaxServers)
	}
	cfg := &Config{Servers: make([]ServerDecl, 0, len(entries))}
	folded := make(map[string]string)
	for _, e := range entries {
		if err := checkServerID(e.Key); err != nil {
			return nil, fmt.Errorf("%w: mcpServers: %w", ErrInvalidConfig, err)
		}
		if prev, ok := folded[strings.ToLower(e.Key)]; ok {
			return nil, fmt.Errorf("%w: mcpServers: server ids %q and %q differ only in case; rename one", ErrInvalidConfig, prev, e.Key)
		}
		folded[strings.ToLower(e.Key)] = e.Key
		decl, err := parseServer(e.Key, e.Value)
		if err != nil {
			return nil, fmt.Errorf("%w: mcpServers.%s: %w", ErrInvalidConfig, e.Key, err)
		}
		cfg.Servers = append(cfg.Servers, decl)
	}
	sort.Slice(cfg.Servers, func(i, j int) bool { return cfg.Servers[i].ID < cfg.Servers[j].ID })
	return cfg, nil
}

// describeObjectErr words a strictjson.Object error for the named value.
func describeObjectErr(err error, what string) string {
	if errors.Is(err, strictjson.ErrNotObject) {
		return what + " must be a JSON object"
	}
	return err.Error()
}

func checkServerID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("empty server id; use letters, digits, '-' and '_'")
	case len(id) > MaxServerIDBytes:
		return fmt.Errorf("server id %s is %d bytes; the limit is %d", strictjson.Quote(id, 64), len(id), MaxServerIDBytes)
	case !serverIDPattern.MatchString(id):
		return fmt.Errorf("server id %s: use letters, digits, '-' and '_', starting with a letter or digit", strictjson.Quote(id, 64))
	}
	return nil
}

// parseServer validates one entry under mcpServers.
func parseServer(id string, raw json.RawMessage) (ServerDecl, error) {
	members, err := strictjson.Object(raw)
	if err != nil {
		return ServerDecl{}, fmt.Errorf("%s", describeObjectErr(err, "a server declaration"))
	}
	d := ServerDecl{ID: id}
	var typ string
	fields := make(map[string]bool)
	for _, m := range members {
		fields[m.Key] = true
		switch m.Key {
		case "type":
			s, ok := strictjson.String(m.Value)
			if !ok {
				return d, fmt.Errorf("type must be a string, not %s", strictjson.Kind(m.Value))
			}
			typ = s
		case "command":
			s, err := stringField("command", m.Value, MaxValueBytes)
			if err != nil {
				return d, err
			}
			if s == "" {
				return d, fmt.Errorf("command is empty")
			}
			if strings.Contains(s, "${") {
				return d, fmt.Errorf("command may not reference credentials; pass them in env")
			}
			d.Command = s
		case "args":
			args, err := parseArgs(m.Value)
			if err != nil {
				return d, err
			}
			d.Args = args
		case "env":
			env, err := parseTemplates("env", m.Value, MaxEnv, envNamePattern, "a letter or '_' followed by letters, digits and '_'")
			if err != nil {
				return d, err
			}
			d.Env = env
		case "url":
			s, err := stringField("url", m.Value, MaxURLBytes)
			if err != nil {
				return d, err
			}
			if err := checkURL(s); err != nil {
				return d, err
			}
			d.URL = s
		case "headers":
			h, err := parseTemplates("headers", m.Value, MaxHeaders, headerNamePattern, "an HTTP token (letters, digits and !#$%&'*+.^_`|~-)")
			if err != nil {
				return d, err
			}
			for name, v := range h {
				if isManagedHeader(name) {
					return d, fmt.Errorf("headers.%s is set by the MCP transport and may not be declared", name)
				}
				if strings.ContainsAny(v, "\r\n") {
					return d, fmt.Errorf("headers.%s contains a line break", name)
				}
			}
			d.Headers = h
		default:
			return d, fmt.Errorf("unknown field %s; a server has \"command\", \"args\", \"env\" (stdio) or \"url\", \"headers\" (streamable HTTP), and an optional \"type\"", strictjson.Quote(m.Key, 64))
		}
	}
	hasCommand, hasURL := fields["command"], fields["url"]
	switch {
	case hasCommand && hasURL:
		return d, fmt.Errorf("both command and url are set; declare exactly one")
	case !hasCommand && !hasURL:
		return d, fmt.Errorf("neither command nor url is set; declare exactly one")
	case hasCommand:
		d.Transport = capability.TransportStdio
		if fields["headers"] {
			return d, fmt.Errorf("headers apply to url servers; a command server takes env")
		}
	default:
		d.Transport = capability.TransportHTTP
		if fields["args"] || fields["env"] {
			return d, fmt.Errorf("args and env apply to command servers; a url server takes headers")
		}
	}
	switch typ {
	case "":
	case "stdio":
		if d.Transport != capability.TransportStdio {
			return d, fmt.Errorf("type is \"stdio\" but url is set; use command")
		}
	case "http", "streamable-http", "streamableHttp":
		if d.Transport != capability.TransportHTTP {
			return d, fmt.Errorf("type is %q but command is set; use url", typ)
		}
	case "sse":
		return d, fmt.Errorf("type \"sse\" (the deprecated HTTP+SSE transport) is not supported; use a streamable HTTP url")
	default:
		return d, fmt.Errorf("type %s is not one of \"stdio\", \"http\", \"streamable-http\"", strictjson.Quote(typ, 64))
	}
	return d, nil
}

// stringField decodes a bounded string without NUL bytes.
func stringField(name string, raw json.RawMessage, max int) (string, error) {
	s, ok := strictjson.String(raw)
	if !ok {
		return "", fmt.Errorf("%s must be a string, not %s", name, strictjson.Kind(raw))
	}
	if len(s) > max {
		return "", fmt.Errorf("%s is %d bytes; the limit is %d", name, len(s), max)
	}
	if strings.ContainsRune(s, 0) {
		return "", fmt.Errorf("%s contains a NUL byte", name)
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%s is not valid UTF-8", name)
	}
	return s, nil
}

func parseArgs(raw json.RawMessage) ([]string, error) {
	if strictjson.Kind(raw) != "an array" {
		return nil, fmt.Errorf("args must be an array of strings, not %s", strictjson.Kind(raw))
	}
	items, err := strictjson.Array(raw)
	if err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	if len(items) > MaxArgs {
		return nil, fmt.Errorf("args has %d entries; the limit is %d", len(items), MaxArgs)
	}
	args := make([]string, 0, len(items))
	for i, it := range items {
		s, err := stringField(fmt.Sprintf("args[%d]", i), it, MaxValueBytes)
		if err != nil {
			return nil, err
		}
		if strings.Contains(s, "${") {
			return nil, fmt.Errorf("args[%d] references a credential; arguments are visible to every local user, so pass credentials in env", i)
		}
		args = append(args, s)
	}
	return args, nil
}

// parseTemplates decodes an object of name → template (env or headers).
func parseTemplates(field string, raw json.RawMessage, maxEntries int, namePattern *regexp.Regexp, nameRule string) (map[string]string, error) {
	members, err := strictjson.Object(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", field, describeObjectErr(err, field))
	}
	if len(members) > maxEntries {
		return nil, fmt.Errorf("%s has %d entries; the limit is %d", field, len(members), maxEntries)
	}
	out := make(map[string]string, len(members))
	folded := make(map[string]bool)
	for _, m := range members {
		if len(m.Key) > 256 || !namePattern.MatchString(m.Key) {
			return nil, fmt.Errorf("%s: name %s must be %s", field, strictjson.Quote(m.Key, 64), nameRule)
		}
		if field == "headers" {
			if folded[strings.ToLower(m.Key)] {
				return nil, fmt.Errorf("headers.%s is declared twice (header names are case-insensitive)", m.Key)
			}
			folded[strings.ToLower(m.Key)] = true
		}
		name := field + "." + m.Key
		v, err := stringField(name, m.Value, MaxValueBytes)
		if err != nil {
			return nil, err
		}
		if _, err := parseTemplate(v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[m.Key] = v
	}
	return out, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("url is not a valid URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("url must use http or https, not %s", strictjson.Quote(u.Scheme, 32))
	case u.Host == "":
		return fmt.Errorf("url has no host")
	case u.User != nil:
		return fmt.Errorf("url contains user info; put credentials in headers as ${NAME} references")
	case u.Fragment != "":
		return fmt.Errorf("url has a fragment (#...); remove it")
	case strings.Contains(s, "${"):
		return fmt.Errorf("url may not reference credentials; put them in headers")
	}
	return nil
}

// segment is one piece of a template: literal text or a credential reference.
type segment struct {
	literal string
	ref     string
}

// parseTemplate splits v into literal text and ${NAME} references. $${ is a
// literal ${. Any other ${ that does not form ${NAME} is an error, so a typo
// never silently sends the text "${TOKEN" to a server.
func parseTemplate(v string) ([]segment, error) {
	var (
		segs []segment
		lit  strings.Builder
	)
	for i := 0; i < len(v); {
		switch {
		case strings.HasPrefix(v[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(v[i:], "${"):
			end := strings.IndexByte(v[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ${ (write $${ for a literal ${)")
			}
			name := v[i+2 : i+end]
			if len(name) > 128 || !envNamePattern.MatchString(name) {
				return nil, fmt.Errorf("${%s} is not a credential reference; a name is a letter or '_' followed by letters, digits and '_' (write $${ for a literal ${)", name)
			}
			if lit.Len() > 0 {
				segs = append(segs, segment{literal: lit.String()})
				lit.Reset()
			}
			segs = append(segs, segment{ref: name})
			i += end + 1
		default:
			lit.WriteByte(v[i])
			i++
		}
	}
	if lit.Len() > 0 {
		segs = append(segs, segment{literal: lit.String()})
	}
	return segs, nil
}

// CredentialLookup returns the value of a named credential and whether it is
// set. The caller decides which credentials a skill may see; skillgate never
// falls back to its own environment.
type CredentialLookup func(name string) (string, bool)

// expandTemplates expands every value of m with lookup. field is "env" or
// "headers", used in messages; values never appear in errors.
func expandTemplates(field string, m map[string]string, lookup CredentialLookup) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		segs, err := parseTemplate(m[k])
		if err != nil {
			return nil, fmt.Errorf("%w: %s.%s: %w", ErrInvalidConfig, field, k, err)
		}
		var b strings.Builder
		for _, s := range segs {
			if s.ref == "" {
				b.WriteString(s.literal)
				continue
			}
			var (
				val string
				ok  bool
			)
			if lookup != nil {
				val, ok = lookup(s.ref)
			}
			if !ok {
				return nil, fmt.Errorf("%w: %s.%s references ${%s}, which is not set", ErrMissingCredential, field, k, s.ref)
			}
			b.WriteString(val)
		}
		v := b.String()
		if strings.ContainsRune(v, 0) || (field == "headers" && strings.ContainsAny(v, "\r\n")) {
			return nil, fmt.Errorf("%w: %s.%s: an expanded credential contains a NUL byte or a line break", ErrInvalidConfig, field, k)
		}
		out[k] = v
	}
	return out, nil
}

func redactTemplates(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		segs, err := parseTemplate(v)
		if err != nil {
			out[k] = redactedText
			continue
		}
		var b strings.Builder
		for _, s := range segs {
			if s.ref != "" {
				b.WriteString("${" + s.ref + "}")
			} else {
				b.WriteString(redactedText)
			}
		}
		out[k] = b.String()
	}
	return out
}

// redactURL hides query values, which sometimes carry API keys.
func redactURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		return redactedText
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			u.RawQuery = redactedText
			return u.String()
		}
		parts := make([]string, 0, len(q))
		for _, k := range sortedKeys(q) {
			parts = append(parts, url.QueryEscape(k)+"="+redactedText)
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	return u.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
