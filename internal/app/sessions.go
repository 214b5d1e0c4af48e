package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/registry"
	"github.com/skillgate/skillgate/session"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
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

// Disclose renders what an agent sees of skills (the MCP prompt 'skills'
// and the resource skillgate://disclosure): without a session, the
// discovery fragment for an agent of the tier; with one, that session's
// view. A bad tenant, session id or tier is a usage error; an unknown
// session is an error naming the data directory.
func (a *App) Disclose(ctx context.Context, sf *Storage, req DiscloseRequest) (string, error) {
	d, err := a.OpenRuntime(ctx, sf)
	if err != nil {
		return "", err
	}
	defer d.Close()
	if req.Session == "" {
		var cat session.Catalog = d.Registry
		if req.Tenant != "" {
			if err := capability.CheckID("tenant", req.Tenant); err != nil {
				return "", Usagef("--tenant: %v", err)
			}
			cat = session.ForTenant(d.Registry, req.Tenant)
		}
		return session.Discovery(ctx, cat, req.Tier, req.DiscloseOptions)
	}
	p, err := d.Sessions.PrincipalOf(ctx, req.Session)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("no session %q in %s", req.Session, a.Data())
	case errors.Is(err, session.ErrInvalidSessionID):
		return "", Usagef("--session: %v", err)
	case err != nil:
		return "", err
	}
	if req.Tier != "" && req.Tier != p.Tier {
		return "", Usagef("--tier %s does not match session %s, whose agent is %s", req.Tier, req.Session, p.Tier)
	}
	s, err := d.Sessions.Open(ctx, p, req.Session)
	if err != nil {
		return "", err
	}
	defer s.Close()
	return s.Disclose(ctx, req.DiscloseOptions)
}
