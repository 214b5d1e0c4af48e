package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// toolNamePattern is the MCP tool naming rule (SEP-986).
var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// Capability is one tool of one server, as introspected: the unit a human
// approves and policy allows.
type Capability struct {
	// Tool is the tool's identity and definition as received; its
	// Description is empty when it broke a limit (see Problems).
	capability.Tool
	// Risk is the risk metadata derived from the server; see [DeriveRisk].
	Risk capability.RiskMetadata `json:"risk"`
	// Pin is the tool's pin digest; empty when the definition cannot be
	// pinned (see Problems).
	Pin string `json:"pin,omitempty"`
	// Problems lists why the tool cannot be approved as is. A capability
	// with problems must stay blocked.
	Problems []capability.Problem `json:"problems,omitempty"`
}

// Err returns nil when the capability has no problems, else every problem
// joined, each wrapping its sentinel.
func (c Capability) Err() error {
	if len(c.Problems) == 0 {
		return nil
	}
	errs := make([]error, len(c.Problems))
	for i, p := range c.Problems {
		errs[i] = p.Err()
	}
	return fmt.Errorf("mcpclient: server %q: tool %q: %w", c.ExtensionID, c.CapabilityID, errors.Join(errs...))
}

// ServerReport is the result of introspecting one declared server. It holds
// no secret: the declaration is in its redacted form.
type ServerReport struct {
	// ServerID is the declared server id.
	ServerID string `json:"serverId"`
	// Declaration is the redacted declaration.
	Declaration capability.RedactedServer `json:"declaration"`
	// Server is the name and version the server reported (serverInfo).
	Server capability.ServerIdentity `json:"serverInfo"`
	// ServerTitle is the server's display title, if it reported one.
	ServerTitle string `json:"serverTitle,omitempty"`
	// ProtocolVersion is the negotiated MCP protocol version.
	ProtocolVersion string `json:"protocolVersion"`
	// ToolsCapability reports whether the server advertised tools at all.
	ToolsCapability bool `json:"toolsCapability"`
	// RawToolsList holds every tools/list page in order, as received.
	RawToolsList []capability.RawPage `json:"rawToolsList"`
	// Capabilities holds one entry per tool, sorted by CapabilityID.
	Capabilities []Capability `json:"capabilities"`
	// Pins pins every tool that could be pinned (those without a pin
	// problem). Approve a subset with [PinSet.Select].
	Pins capability.PinSet `json:"pins"`
	// Elapsed is how long introspection took.
	Elapsed time.Duration `json:"elapsedNs"`
	// Skills is what the server publishes through the MCP Skills
	// extension, fetched by [Introspect] (never by a [Conn]'s re-checks);
	// nil when the server does not declare the extension. It is not part
	// of the report's JSON: the caller verifies it and records the result.
	Skills *PublishedSkills `json:"-"`
}

// Capability returns the capability with the given tool name.
func (r *ServerReport) Capability(name string) (Capability, bool) {
	i := sort.Search(len(r.Capabilities), func(i int) bool { return r.Capabilities[i].CapabilityID >= name })
	if i < len(r.Capabilities) && r.Capabilities[i].CapabilityID == name {
		return r.Capabilities[i], true
	}
	return Capability{}, false
}

// MissingMetadata is a capability whose risk metadata is incomplete.
type MissingMetadata struct {
	CapabilityID string   `json:"capabilityId"`
	Fields       []string `json:"fields"`
}

// Missing lists, in capability order, each capability with unknown risk
// fields and which. The caller blocks the skill until an operator supplies
// them.
func (r *ServerReport) Missing() []MissingMetadata {
	var out []MissingMetadata
	for _, c := range r.Capabilities {
		if f := c.Risk.Unknown(); len(f) > 0 {
			out = append(out, MissingMetadata{CapabilityID: c.CapabilityID, Fields: f})
		}
	}
	return out
}

// Introspect starts (stdio) or connects to (streamable HTTP) the declared
// server, performs initialize, lists every tool through all pages, and
// closes the connection, all within opts.Limits. A stdio server's whole
// process group is gone when Introspect returns, whatever happened.
//
// When the server declares the MCP Skills extension, Introspect also
// lists the skills it publishes and reads every file they list
// ([ServerReport.Skills]); a failure there is recorded in it, not
// returned.
//
// A server-level failure returns a *[ServerError] wrapping one of
// ErrMissingCredential, ErrServerStart, ErrServerExited, ErrTimeout,
// ErrResponseTooLarge, ErrTooManyTools, ErrMalformedResponse, ErrServerError
// or ErrConnection. A fault in one tool is not an error: it is listed in that
// capability's Problems, and the other tools are still reported.
func Introspect(ctx context.Context, decl ServerDecl, opts *Options) (*ServerReport, error) {
	o := opts.resolve()
	u, err := open(ctx, decl, o, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = u.close() }()
	r, err := u.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	r.Skills = u.fetchSkills(ctx)
	return r, nil
}

// snapshot lists the tools and builds a report, with the server's
// credentials scrubbed from it and from its errors.
func (u *upstream) snapshot(ctx context.Context) (*ServerReport, error) {
	r, err := u.snapshotRaw(ctx)
	if err != nil {
		return nil, u.scrub.err(err)
	}
	return u.scrub.report(r)
}

func (u *upstream) snapshotRaw(ctx context.Context) (*ServerReport, error) {
	start := time.Now()
	pages, tools, err := u.listTools(ctx)
	if err != nil {
		return nil, err
	}
	r := &ServerReport{
		ServerID:        u.id,
		Declaration:     u.decl.Redacted(),
		Server:          u.server,
		ServerTitle:     u.title,
		ProtocolVersion: u.proto,
		ToolsCapability: u.tools,
		RawToolsList:    make([]capability.RawPage, len(pages)),
		Capabilities:    make([]Capability, 0, len(tools)),
		Pins:            capability.PinSet{Server: u.server, Tools: []capability.ToolPin{}},
	}
	for i, p := range pages {
		sum := sha256.Sum256(p)
		r.RawToolsList[i] = capability.RawPage{Result: p, SHA256: hex.EncodeToString(sum[:]), Bytes: len(p)}
	}
	seen := make(map[string]bool, len(tools))
	for i, raw := range tools {
		c, pin, err := buildCapability(u.id, u.server, raw, u.o.limits)
		if err != nil {
			return nil, &ServerError{ServerID: u.id, Phase: "tools/list", Err: fmt.Errorf("%w: tools[%d]: %w", ErrMalformedResponse, i, err)}
		}
		if seen[c.CapabilityID] {
			return nil, &ServerError{ServerID: u.id, Phase: "tools/list", Err: fmt.Errorf("%w: tool %s is listed twice", ErrMalformedResponse, strictjson.Quote(c.CapabilityID, 128))}
		}
		seen[c.CapabilityID] = true
		r.Capabilities = append(r.Capabilities, c)
		if pin != nil {
			r.Pins.Tools = append(r.Pins.Tools, *pin)
		}
	}
	sort.Slice(r.Capabilities, func(i, j int) bool { return r.Capabilities[i].CapabilityID < r.Capabilities[j].CapabilityID })
	sort.Slice(r.Pins.Tools, func(i, j int) bool { return r.Pins.Tools[i].Name < r.Pins.Tools[j].Name })
	r.Elapsed = time.Since(start)
	u.o.logger.Debug("mcpclient: listed tools", "server", u.id, "tools", len(r.Capabilities),
		"pages", len(pages), "elapsed", r.Elapsed)
	return r, nil
}

// buildCapability validates one raw tool. It returns an error only when the
// tool has no usable identity (not an object, no string name); every other
// fault becomes a Problem.
func buildCapability(serverID string, server capability.ServerIdentity, raw json.RawMessage, l Limits) (Capability, *capability.ToolPin, error) {
	c := Capability{Tool: capability.Tool{ExtensionID: serverID}}
	members, err := strictjson.Object(raw)
	if err != nil {
		// A duplicate key, for example. Recover the name the way most
		// clients would read it, so the problem can be reported per tool.
		var probe struct {
			Name *string `json:"name"`
		}
		if json.Unmarshal(raw, &probe) != nil || probe.Name == nil || *probe.Name == "" {
			return c, nil, fmt.Errorf("%s", describeObjectErr(err, "a tool"))
		}
		c.CapabilityID = *probe.Name
		c.Problems = []capability.Problem{{Code: capability.ProblemInvalidTool, Field: "tool", Message: err.Error()}}
		return c, nil, nil
	}
	fields := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		fields[m.Key] = m.Value
	}
	name, ok := strictjson.String(fields["name"])
	if !ok || name == "" {
		return c, nil, fmt.Errorf("\"name\" is missing, empty or not a string")
	}
	c.CapabilityID = name
	add := func(code capability.ProblemCode, field, format string, args ...any) {
		c.Problems = append(c.Problems, capability.Problem{Code: code, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !toolNamePattern.MatchString(name) {
		add(capability.ProblemInvalidTool, "name", "%s breaks the MCP naming rule: 1 to 128 of A-Z a-z 0-9 _ . -", strictjson.Quote(name, 160))
	}
	for _, f := range []string{"title", "description"} {
		v, present := fields[f]
		if !present {
			continue
		}
		s, ok := strictjson.String(v)
		switch {
		case !ok:
			add(capability.ProblemInvalidTool, f, "is %s; want a string", strictjson.Kind(v))
		case len(s) > l.MaxDescriptionBytes:
			add(capability.ProblemTooLarge, f, "is %d bytes; the limit is %d", len(s), l.MaxDescriptionBytes)
		case f == "title":
			c.Title = s
		default:
			c.Description = s
		}
	}
	if in, ok := fields["inputSchema"]; ok {
		c.InputSchema = in
		if p := checkSchema("inputSchema", in, l); p != nil {
			c.Problems = append(c.Problems, *p)
		}
	} else {
		add(capability.ProblemInvalidSchema, "inputSchema", "is missing")
	}
	if out, ok := fields["outputSchema"]; ok && strictjson.Kind(out) != "null" {
		c.OutputSchema = out
		if p := checkSchema("outputSchema", out, l); p != nil {
			c.Problems = append(c.Problems, *p)
		}
	}
	if a, ok := fields["annotations"]; ok {
		c.Annotations = a
	}
	var ps []capability.Problem
	c.Risk, ps = DeriveRisk(raw)
	c.Problems = append(c.Problems, ps...)
	pin, err := capability.NewToolPin(server, raw)
	if err != nil {
		add(capability.ProblemInvalidTool, "definition", "cannot be pinned: %s", strings.TrimPrefix(err.Error(), ErrInvalidTool.Error()+": "))
		return c, nil, nil
	}
	c.Pin = pin.Digest
	return c, &pin, nil
}
