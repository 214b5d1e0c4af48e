package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/pipe"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// MaintainSessions runs the session manager's background pass (heartbeat
// of attached sessions and, while prune reports true, pruning of expired
// ones) while the
// command runs; the returned stop ends it and waits.
func (d *Runtime) MaintainSessions(ctx context.Context, prune func() bool) (stop func()) {
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Sessions.Maintain(mctx, 0, prune)
	}()
	return func() { cancel(); <-done }
}

// OpenSessions opens the session manager of the data directory for the
// operator commands; close releases it.
func (a *App) OpenSessions(ctx context.Context, sf *Storage) (mgr *session.Manager, idle time.Duration, close func(), err error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, 0, nil, err
	}
	if idle, err = cfg.idleExpiry(); err != nil {
		return nil, 0, nil, err
	}
	var closers []func() error
	close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	db, err := a.OpenStore(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	closers = append(closers, db.Close)
	log := a.log
	src, ws, err := a.openSkillStorage(sf, cfg, log, &closers)
	if err != nil {
		close()
		return nil, 0, nil, err
	}
	mgr, err = session.NewManager(session.Options{
		Catalog: registry.New(db, registry.Options{Logger: log}), Versions: db, Store: db,
		Source: src, Workspace: ws, IdleExpiry: idle, Logger: log,
	})
	if err != nil {
		close()
		return nil, 0, nil, err
	}
	return mgr, idle, close, nil
}

// DiscloseRequest says whose progressive disclosure [App.Disclose] renders.
type DiscloseRequest struct {
	// Tier is the agent tier of the discovery fragment; with Session, it
	// must be the session's (or empty).
	Tier skill.AgentTier
	// Tenant adds that tenant's library to the discovery fragment.
	Tenant string
	// Session renders that session's view instead.
	Session string
	session.DiscloseOptions
}

// Disclosure is what an agent sees of skills, as 'skillgate disclose'
// prints it (--json prints this document).
type Disclosure struct {
	// Tier is the agent tier the text is for: --tier, or the session's.
	Tier skill.AgentTier `json:"tier"`
	// Tenant is --tenant (discovery fragment only).
	Tenant string `json:"tenant,omitempty"`
	// Session is --session.
	Session string `json:"session,omitempty"`
	// Category is --category (discovery fragment only).
	Category string `json:"category,omitempty"`
	// Budget is the discovery fragment's character budget applied.
	Budget int `json:"budget"`
	// View is "discovery" (the skills the agent may load) or "loaded"
	// (a session's loaded skills' bodies).
	View string `json:"view"`
	// Loaded lists a session's loaded skills, in load order; empty
	// without a session.
	Loaded []session.Loaded `json:"loaded"`
	// Text is the disclosure itself, as the MCP prompt 'skills' holds it.
	Text string `json:"text"`
}

// Disclosure views.
const (
	ViewDiscovery = "discovery"
	ViewLoaded    = "loaded"
)

// Disclose renders what an agent sees of skills (the MCP prompt 'skills'
// and the resource skillgate://disclosure): without a session, the
// discovery fragment for an agent of the tier; with one, that session's
// view. A bad tenant, session id or tier is a usage error; an unknown
// session is an error naming the data directory.
func (a *App) Disclose(ctx context.Context, sf *Storage, req DiscloseRequest) (*Disclosure, error) {
	d, err := a.OpenRuntime(ctx, sf)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	out := &Disclosure{Tier: req.Tier, Tenant: req.Tenant, Session: req.Session, Category: req.Category,
		Budget: req.Budget, View: ViewDiscovery, Loaded: []session.Loaded{}}
	if out.Budget == 0 {
		out.Budget = session.DefaultBudget
	}
	if req.Session == "" {
		var cat session.Catalog = d.Registry
		if req.Tenant != "" {
			if err := capability.CheckID("tenant", req.Tenant); err != nil {
				return nil, Usagef("--tenant: %v", err)
			}
			cat = session.ForTenant(d.Registry, req.Tenant)
		}
		out.Text, err = session.Discovery(ctx, cat, req.Tier, req.DiscloseOptions)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	p, err := d.Sessions.PrincipalOf(ctx, req.Session)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("no session %q in %s", req.Session, a.Data())
	case errors.Is(err, session.ErrInvalidSessionID):
		return nil, Usagef("--session: %v", err)
	case err != nil:
		return nil, err
	}
	if req.Tier != "" && req.Tier != p.Tier {
		return nil, Usagef("--tier %s does not match session %s, whose agent is %s", req.Tier, req.Session, p.Tier)
	}
	out.Tier = p.Tier
	s, err := d.Sessions.Open(ctx, p, req.Session)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if out.Text, err = s.Disclose(ctx, req.DiscloseOptions); err != nil {
		return nil, err
	}
	if l := s.Loaded(); len(l) > 0 {
		out.View, out.Loaded = ViewLoaded, l
	}
	return out, nil
}

// StdioOptions configure [App.ServeStdio].
type StdioOptions struct {
	// Principal is the agent served; Session the session to resume or
	// start ("" starts a new one).
	Principal capability.Principal
	Session   string
	// Storage is where skill trees and workspaces live.
	Storage *Storage
	// Prepare, when set, runs on the opened runtime before the session
	// connects (a sub-agent's delegation).
	Prepare func(*Runtime) error
	// Started, when set, is told the connected session's id.
	Started func(id string)
	// In and Out are the MCP stdio stream.
	In  io.Reader
	Out io.Writer
	// NoScan turns off the scan at start (see [App.ScanAtBoot]).
	NoScan bool
	// Scanned, when set, is told what the scan at start did, or why it
	// failed (the session then sees the registry as it was).
	Scanned func(*BootScan, error)
}

// ServeStdio serves one agent session over MCP on opts.In and opts.Out
// (after the scan at start, see [App.ScanAtBoot], unless opts.NoScan)
// until the stream ends or ctx does, with the capability runtime's watch
// and session maintenance (no pruning: a stdio process is never the
// replicas' leader) running meanwhile. A refused session
// (session.ErrSessionUnavailable, ErrInvalidSessionID, ErrInvalidPrincipal)
// is returned as the session manager's error.
func (a *App) ServeStdio(ctx context.Context, opts StdioOptions) error {
	d, err := a.OpenRuntime(ctx, opts.Storage)
	if err != nil {
		return err
	}
	defer d.Close()
	if !opts.NoScan {
		bs, err := a.ScanAtBoot(ctx, d, nil, "")
		if opts.Scanned != nil {
			opts.Scanned(bs, err)
		}
	}
	if opts.Prepare != nil {
		if err := opts.Prepare(d); err != nil {
			return err
		}
	}
	defer d.StartWatch(ctx, time.Second)()
	defer d.MaintainSessions(ctx, nil)()
	conn, err := d.Gateway.Connect(ctx, opts.Principal, opts.Session, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	if opts.Started != nil {
		opts.Started(conn.Session().ID())
	}
	// The pipe results go to the agent in: a result of tens of kilobytes
	// in one write.
	if f, ok := opts.Out.(*os.File); ok {
		pipe.Grow(f)
	}
	in := opts.In
	if f, ok := in.(*os.File); ok {
		in = pipe.Poll(f) // no thread parked in a read between messages
	}
	if err := conn.Server().Run(ctx, conn.StdioTransport(in, opts.Out)); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		return err
	}
	return nil
}

// ListSessions lists the stored sessions, least recently used first.
func (a *App) ListSessions(ctx context.Context, sf *Storage) ([]session.Info, error) {
	mgr, _, closeAll, err := a.OpenSessions(ctx, sf)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	return mgr.List(ctx)
}

// RemoveSessions removes the sessions ids (each checked first: a usage
// error for a malformed one) with their workspaces, calling removed for
// each one removed and refused for each that does not exist or is in use;
// it stops at any other error.
func (a *App) RemoveSessions(ctx context.Context, sf *Storage, ids []string, removed func(session.Info), refused func(error)) error {
	for _, id := range ids {
		if err := session.ValidID(id); err != nil {
			return Usagef("%v", err)
		}
	}
	mgr, _, closeAll, err := a.OpenSessions(ctx, sf)
	if err != nil {
		return err
	}
	defer closeAll()
	for _, id := range ids {
		in, err := mgr.Remove(ctx, id)
		switch {
		case errors.Is(err, session.ErrNoSession) || errors.Is(err, session.ErrSessionInUse):
			refused(err)
		case err != nil:
			return err
		default:
			removed(in)
		}
	}
	return nil
}

// PruneSessions removes (or, with dryRun, only lists) the sessions unused
// for longer than idle (a duration as the configuration writes it; empty:
// sessions.idle_expiry of the configuration) and returns them with the
// idle time applied. A malformed or missing idle time is a usage error.
func (a *App) PruneSessions(ctx context.Context, sf *Storage, idleFlag string, dryRun bool) ([]session.Info, time.Duration, error) {
	var idle time.Duration
	if idleFlag != "" {
		d, err := ParseIdle(idleFlag)
		if err != nil {
			return nil, 0, Usagef("--idle: %v", err)
		}
		idle = d
	}
	mgr, configured, closeAll, err := a.OpenSessions(ctx, sf)
	if err != nil {
		return nil, 0, err
	}
	defer closeAll()
	if idle == 0 {
		idle = configured
	}
	if idle == 0 {
		return nil, 0, Usagef("prune needs --idle DURATION (e.g. --idle 30d), or sessions.idle_expiry in the configuration file")
	}
	pruned, err := mgr.Prune(ctx, idle, dryRun)
	return pruned, idle, err
}

// Delegate registers child as a sub-agent of parent (TENANT/AGENT, of the
// agent tier parentTier) with the capabilities forward, and returns how
// many of them its scope holds. A malformed parent or tier, or a
// delegation the decider refuses, is a usage error.
func (d *Runtime) Delegate(child capability.Principal, parent, parentTier string, forward []string) (int, error) {
	tenant, agent, err := policy.ParsePrincipalID(parent)
	if err != nil {
		return 0, Usagef("--parent: %v", err)
	}
	t, err := TierFlag("--parent-tier", parentTier)
	if err != nil {
		return 0, err
	}
	scope, err := d.Caps.Decider.Delegate(capability.Principal{Tenant: tenant, Agent: agent, Tier: t}, child, forward)
	if err != nil {
		return 0, Usagef("delegation refused: %v", err)
	}
	return len(scope.Entries), nil
}

// DiscloseFlags reads the flags of 'skillgate disclose' into a request:
// --tier or --session is needed, a tier must be T0–T4 and the budget not
// negative; usage errors otherwise.
func DiscloseFlags(tier, tenant, sessionID, category string, budget int) (DiscloseRequest, error) {
	if tier == "" && sessionID == "" {
		return DiscloseRequest{}, Usagef("disclose needs --tier or --session (see 'skillgate disclose --help')")
	}
	var t skill.AgentTier
	if tier != "" {
		var err error
		if t, err = skill.ParseAgentTier(tier); err != nil {
			return DiscloseRequest{}, Usagef("--tier: %v", err)
		}
	}
	if budget < 0 {
		return DiscloseRequest{}, Usagef("--budget must be positive (0: the default of %d)", session.DefaultBudget)
	}
	return DiscloseRequest{Tier: t, Tenant: tenant, Session: sessionID,
		DiscloseOptions: session.DiscloseOptions{Category: category, Budget: budget}}, nil
}
