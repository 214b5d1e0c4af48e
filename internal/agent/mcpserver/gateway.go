package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpskills"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skillsext"
	"github.com/skillgate/skillgate/internal/platform/hostpath"
	"github.com/skillgate/skillgate/internal/platform/telemetry"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// Resource URIs served to every session.
const (
	// DisclosureURI is the session's disclosure: the discovery fragment,
	// or the loaded skills' SKILL.md bodies.
	DisclosureURI = "skillgate://disclosure"
	// SessionURI describes the session: its id, principal and loaded
	// skills, as JSON.
	SessionURI = "skillgate://session"
	// DisclosurePrompt is the name of the prompt carrying the disclosure.
	DisclosurePrompt = "skills"
)

// DefaultImplementation names the server to clients.
var DefaultImplementation = mcp.Implementation{Name: "skillgate", Title: "skillgate", Version: "dev"}

// Options configures a [Gateway]. Sessions is required.
type Options struct {
	// Sessions opens the agents' sessions.
	Sessions *session.Manager
	// Catalog is the registry, used to detect changes (see
	// [Gateway.Fingerprint]); nil disables change detection.
	Catalog session.Catalog
	// Implementation names the server; nil means DefaultImplementation.
	Implementation *mcp.Implementation
	// DisclosureBudget is the discovery fragment's budget in characters; 0
	// means session.DefaultBudget.
	DisclosureBudget int
	// Logger receives connection events and internal errors (which agents
	// never see); nil discards them.
	Logger *slog.Logger
	// Capabilities, when set, adds the principal's callable upstream
	// capabilities to every connection as tools.
	Capabilities CapabilitySource
	// Published, when set, adds the skills installed skills' MCP servers
	// publish, relayed and verified, to the MCP Skills extension's
	// skills/list, skills/get and reads (see package mcpskills).
	Published skillsext.Published
	// HostPaths are the host's directories that no text sent to an agent
	// may name: the data directory (which holds the sandbox state
	// directories), the scanned skill roots, mounted directories. Errors,
	// tool results with isError and upstream servers' results name each as
	// "[host path]" instead (see agentbound.go).
	HostPaths []string
	// Tracer, when tracing is on, starts a server span per request
	// received (trace.go); nil: off.
	Tracer *telemetry.Tracer
}

// Gateway is skillgate's MCP server for agents: each connection gets an
// [mcp.Server] bound to one agent session, with the skill tools
// (skill_list, load_skill, unload_skill), the filesystem tools (ls,
// read_file, grep, glob, write_file, edit_file), the disclosure as a prompt
// and a resource, and change notifications. It is transport-agnostic: serve
// a [Conn]'s server over stdio or streamable HTTP. A Gateway is safe for
// concurrent use.
type Gateway struct {
	opts    Options
	log     *slog.Logger
	schemas *mcp.SchemaCache

	mu    sync.Mutex
	conns map[*Conn]struct{}

	// skills serves the MCP Skills extension (skillsext.go).
	skills *mcpskills.Server
	// scrub removes Options.HostPaths from what agents receive.
	scrub *hostpath.Scrubber
	// versions are the protocol versions served, newest first
	// (SupportedVersions).
	versions []string
	// stateless holds the connections that serve modern clients' requests
	// by session (stateless.go).
	stateless statelessConns

	// seen is the registry fingerprint agents were last brought up to
	// date with (SyncRegistry); syncMu guards it.
	syncMu sync.Mutex
	seen   string
}

// New returns a gateway over opts.
func New(opts Options) (*Gateway, error) {
	if opts.Sessions == nil {
		return nil, errors.New("gateway: Options.Sessions is required")
	}
	if opts.Implementation == nil {
		impl := DefaultImplementation
		opts.Implementation = &impl
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	skills, err := mcpskills.NewServer(mcpskills.Options{View: opts.Sessions, Published: opts.Published})
	if err != nil {
		return nil, err
	}
	return &Gateway{opts: opts, log: log, schemas: mcp.NewSchemaCache(), conns: map[*Conn]struct{}{}, skills: skills,
		scrub: hostpath.New(opts.HostPaths...), versions: SupportedVersions()}, nil
}

// ConnectOptions tunes one connection.
type ConnectOptions struct {
	// InitTimeout closes the connection when the client has not finished
	// the MCP initialize handshake within this time (HTTP connections, whose
	// server is created before the handshake); 0 means never.
	InitTimeout time.Duration
	// Stateless marks a connection that serves the requests of modern
	// clients (protocol 2026-07-28), each through a short-lived SDK
	// session: its life is tied to none of them, and its owner closes it
	// (see [Gateway.ConnectStateless]).
	Stateless bool
	// sessionless marks the principal's sessionless connection
	// (stateless.go).
	sessionless bool
}

// Conn is one MCP connection: an [mcp.Server] bound to an open session.
// Close it when the connection ends; the session stays resumable.
type Conn struct {
	g      *Gateway
	sess   *session.Session
	server *mcp.Server

	mu       sync.Mutex
	loadDesc string            // the load_skill description now advertised
	capTools map[string]string // capability tools advertised: name → definition JSON
	closed   bool

	// stateless: see ConnectOptions.Stateless.
	stateless bool

	// initialized is set once the client has finished the MCP handshake;
	// every request reads it (see firstRequest), so it takes no lock.
	initialized atomic.Bool

	// ctx ends when the connection closes. Relayed capability calls run in
	// contexts of their own over relayBase (ctx's values, not its end, so
	// that a call costs no registration in ctx); relayed holds their cancel
	// functions by JSON-RPC id (as sent), and Close cancels them.
	ctx       context.Context
	cancel    context.CancelFunc
	relayBase context.Context
	relayed   map[string]context.CancelFunc
	// sdkReady is set once the SDK's session has its client's parameters.
	sdkReady bool
	// skillsSlots bounds the MCP Skills extension requests answered at
	// once on a stdio connection (skillsext.go).
	skillsSlots chan struct{}
}

// Connect opens (or resumes, or starts when sessionID is empty) the session
// sessionID for principal p and returns a connection whose Server is ready
// to run on a transport. Errors are those of [session.Manager.Open].
func (g *Gateway) Connect(ctx context.Context, p capability.Principal, sessionID string, opts *ConnectOptions) (*Conn, error) {
	if sessionID != "" && g.stateless.sessionless(sessionID) {
		return nil, fmt.Errorf("%w: %s serves requests that name no session; choose another id", session.ErrSessionUnavailable, sessionID)
	}
	sess, err := g.opts.Sessions.Open(ctx, p, sessionID)
	if err != nil {
		return nil, err
	}
	c := &Conn{g: g, sess: sess, skillsSlots: make(chan struct{}, maxSkillsInFlight), stateless: opts != nil && opts.Stateless}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	c.relayBase = context.WithoutCancel(c.ctx)
	c.server = mcp.NewServer(g.opts.Implementation, &mcp.ServerOptions{
		Instructions:       instructions(sess, opts),
		Logger:             g.log,
		SchemaCache:        g.schemas,
		InitializedHandler: c.onInitialized,
		SubscribeHandler:   subscribeHandler,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		SetCacheable:       setCacheable,
		Capabilities: &mcp.ServerCapabilities{
			Tools:      &mcp.ToolCapabilities{ListChanged: true},
			Resources:  &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:    &mcp.PromptCapabilities{ListChanged: true},
			Extensions: map[string]any{skillsext.ExtensionID: mcpskills.Capability()},
		},
	})
	desc, err := c.loadSkillDescription(ctx)
	if err != nil {
		c.cancel()
		sess.Close()
		return nil, err
	}
	c.loadDesc = desc
	c.server.AddReceivingMiddleware(c.agentBound, c.firstRequest, c.connectionRequired)
	if g.opts.Tracer.Enabled() {
		c.server.AddReceivingMiddleware(c.traceRequest)
	}
	c.addTools(desc)
	c.addDisclosure()
	c.addSkillFiles()
	if err := c.syncCapabilities(ctx); err != nil {
		c.cancel()
		sess.Close()
		return nil, err
	}
	g.mu.Lock()
	g.conns[c] = struct{}{}
	g.mu.Unlock()
	if opts != nil && opts.InitTimeout > 0 && !c.stateless {
		time.AfterFunc(opts.InitTimeout, func() {
			if !c.initialized.Load() {
				c.Close()
			}
		})
	}
	g.log.InfoContext(ctx, "mcp connection", "session", sess.ID(), "principal", p.String())
	return c, nil
}

// Server returns the connection's MCP server.
func (c *Conn) Server() *mcp.Server { return c.server }

// Session returns the connection's session.
func (c *Conn) Session() *session.Session { return c.sess }

// Close releases the session handle. It is idempotent.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	relayed := c.relayed
	c.relayed = nil
	c.mu.Unlock()
	c.cancel()
	for _, cancel := range relayed {
		cancel()
	}
	c.g.mu.Lock()
	delete(c.g.conns, c)
	c.g.mu.Unlock()
	return c.sess.Close()
}

// onInitialized ties the connection's life to its MCP session: when the
// client goes away (or an idle HTTP session times out), the session handle
// is released.
func (c *Conn) onInitialized(_ context.Context, req *mcp.InitializedRequest) {
	c.handshakeDone(req.Session)
}

// handshakeDone marks the connection initialized and, the first time, ties
// its life to ss. The initialize handshake of protocol 2025-11-25 ends with
// notifications/initialized; a client of 2026-07-28 asks server/discover
// and sends no such notification, so its first request ends it instead
// (see firstRequest).
func (c *Conn) handshakeDone(ss *mcp.ServerSession) {
	if c.initialized.CompareAndSwap(false, true) && ss != nil && !c.stateless {
		go func() {
			_ = ss.Wait()
			c.Close()
		}()
	}
}

// firstRequest is a receiving middleware that ends the handshake at the
// client's first request other than initialize (whose handshake its own
// notification ends).
func (c *Conn) firstRequest(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !c.initialized.Load() && method != "initialize" && !strings.HasPrefix(method, "notifications/") {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				c.handshakeDone(ss)
			}
		}
		return next(ctx, method, req)
	}
}

// Serve runs one connection for p on transport t until the client
// disconnects or ctx is done: what `skillgate mcp` does over stdio.
func (g *Gateway) Serve(ctx context.Context, t mcp.Transport, p capability.Principal, sessionID string) error {
	c, err := g.Connect(ctx, p, sessionID, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.server.Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("gateway: session %s: %w", c.sess.ID(), err)
	}
	return nil
}

func instructions(s *session.Session, opts *ConnectOptions) string {
	switch {
	case opts != nil && opts.sessionless:
		return fmt.Sprintf("skillgate, for %s, without a session. Skills you may use are listed by skill_list and by the prompt %q. "+
			"To load a skill (it appears under /skills) or keep files under /workspace, send the Skillgate-Session header "+
			"with a session id of your choice on every request.", s.Principal().String(), DisclosurePrompt)
	case opts != nil && opts.Stateless:
		return fmt.Sprintf("skillgate session %s (%s). Skills you may use are listed by skill_list and by the prompt %q; "+
			"load_skill makes one appear under /skills and returns its instructions. Your files go under /workspace. "+
			"Send the Skillgate-Session header %s on every request to stay in this session.",
			s.ID(), s.Principal().String(), DisclosurePrompt, s.ID())
	}
	return fmt.Sprintf("skillgate session %s (%s). Skills you may use are listed by skill_list and by the prompt %q; "+
		"load_skill makes one appear under /skills and returns its instructions. Your files go under /workspace. "+
		"Reconnect with session id %s to resume the loaded skills and /workspace.",
		s.ID(), s.Principal().String(), DisclosurePrompt, s.ID())
}

func subscribeHandler(_ context.Context, req *mcp.SubscribeRequest) error {
	switch req.Params.URI {
	case DisclosureURI, SessionURI:
		return nil
	}
	return mcp.ResourceNotFoundError(req.Params.URI)
}

// connsOf returns the open connections, optionally only those of one session.
func (g *Gateway) connsOf(sessionID string) []*Conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*Conn, 0, len(g.conns))
	for c := range g.conns {
		if sessionID == "" || c.sess.ID() == sessionID {
			out = append(out, c)
		}
	}
	return out
}

// Connections returns how many connections are open.
func (g *Gateway) Connections() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.conns)
}

// sessionChanged tells every connection on a session that its disclosure
// and description changed (a skill was loaded or unloaded).
func (g *Gateway) sessionChanged(ctx context.Context, sessionID string) {
	for _, c := range g.connsOf(sessionID) {
		c.resourcesUpdated(ctx)
	}
}

func (c *Conn) resourcesUpdated(ctx context.Context) {
	for _, uri := range []string{DisclosureURI, SessionURI} {
		if err := c.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			c.g.log.WarnContext(ctx, "resource update notification failed", "session", c.sess.ID(), "uri", uri, "err", err)
		}
	}
}

// RegistryChanged brings every open connection up to date after the
// registry changed (a rescan, a skill enabled or disabled): sessions drop
// or remount loaded skills as needed ([session.Manager.Refresh]); a
// connection whose list of loadable skills changed gets a new load_skill
// definition, which sends notifications/tools/list_changed; and every
// connection is told that the disclosure and session resources were
// updated (notifications/resources/updated, to subscribers).
func (g *Gateway) RegistryChanged(ctx context.Context) error {
	_, refreshErr := g.opts.Sessions.Refresh(ctx)
	var errs []error
	if refreshErr != nil {
		errs = append(errs, refreshErr)
	}
	for _, c := range g.connsOf("") {
		desc, err := c.loadSkillDescription(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.mu.Lock()
		changed := desc != c.loadDesc && !c.closed
		c.loadDesc = desc
		c.mu.Unlock()
		if changed {
			c.addLoadSkill(desc) // replaces the tool: tools/list_changed
		}
		if err := c.syncCapabilities(ctx); err != nil {
			errs = append(errs, err)
		}
		c.resourcesUpdated(ctx)
	}
	err := errors.Join(errs...)
	if err != nil {
		g.log.ErrorContext(ctx, "registry change: some sessions could not be refreshed", "err", err)
	}
	return err
}

// Fingerprint summarises what agents can see of the registry (identity,
// digest, state, tiers and catalog fields of every valid skill), so that a
// rescan that changed nothing notifies nobody. It is the catalog snapshot's
// ([registry.Snapshot.Fingerprint]), computed once per registry change: a
// call costs one read of the registry generation. It needs
// Options.Catalog.
func (g *Gateway) Fingerprint(ctx context.Context) (string, error) {
	if g.opts.Catalog == nil {
		return "", errors.New("gateway: Options.Catalog is required for change detection")
	}
	snap, err := g.opts.Catalog.Snapshot(ctx)
	if err != nil {
		return "", fmt.Errorf("gateway: fingerprint: %w", err)
	}
	return snap.Fingerprint(), nil
}

// Rescan runs scan (a registry scan) and, when what agents can see changed,
// calls [Gateway.RegistryChanged]. It reports whether it did.
func (g *Gateway) Rescan(ctx context.Context, scan func(context.Context) error) (bool, error) {
	if _, err := g.SyncRegistry(ctx); err != nil {
		return false, err
	}
	if err := scan(ctx); err != nil {
		return false, err
	}
	return g.SyncRegistry(ctx)
}

// SyncRegistry calls [Gateway.RegistryChanged] when what agents can see of
// the registry ([Gateway.Fingerprint]) changed since the gateway last
// looked: a change made by another process on the same store (the CLI's
// scan, enable, disable) is found by polling it. The first call only
// records what agents see. It reports whether it notified; while nothing
// changed it costs one read of the registry generation. Calls are
// serialised.
func (g *Gateway) SyncRegistry(ctx context.Context) (bool, error) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	fp, err := g.Fingerprint(ctx)
	if err != nil {
		return false, err
	}
	if g.seen == "" || fp == g.seen {
		g.seen = fp
		return false, nil
	}
	g.seen = fp
	return true, g.RegistryChanged(ctx)
}

// maxLoadDescList bounds the list of loadable skills in load_skill's
// description, in bytes.
const maxLoadDescList = 2000

// loadSkillDescription is load_skill's description for this session: what
// it does and the identities of the skills the principal may load, so that
// the tool definition changes (and clients are notified) exactly when that
// list changes.
func (c *Conn) loadSkillDescription(ctx context.Context) (string, error) {
	snap, err := c.sess.Catalog(ctx)
	if err != nil {
		return "", err
	}
	tier := c.sess.Principal().Tier
	var b strings.Builder
	b.WriteString("Load a skill into this session. Its files appear, read-only, under /skills/<name> " +
		"(or /skills/<category>--<name> when another loaded skill already has that name); the result gives the mount path " +
		"and the skill's SKILL.md instructions. Pass the skill's category/name as listed by skill_list.")
	total := snap.Len(tier)
	if total == 0 {
		b.WriteString(" No skills are available to you now.")
		return b.String(), nil
	}
	// The pool is in identity order: only the listed keys are visited.
	b.WriteString(" Skills you can load: ")
	i, n := 0, 0
	snap.Skills(tier, "", func(e registry.Brief) bool {
		if n+len(e.Key) > maxLoadDescList {
			fmt.Fprintf(&b, "… and %d more (see skill_list)", total-i)
			return false
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Key)
		n += len(e.Key) + 2
		i++
		return true
	})
	b.WriteString(".")
	return b.String(), nil
}
