package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/skillgate/skillgate/internal/edge/admin"
	"github.com/skillgate/skillgate/internal/edge/metrics"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/storage/audit"
)

// readyBucketTimeout bounds the bucket's part of a readiness check.
const readyBucketTimeout = 2 * time.Second

// shutdownGrace is how long a stopping server waits for its requests
// before it closes their connections.
const shutdownGrace = 5 * time.Second

// ServeOptions configure [App.OpenServer]: cmd's serve flags.
type ServeOptions struct {
	// Addr is the address to listen on; port 0 picks a free port.
	Addr string
	// RescanInterval rescans the registry this often (0: only on POST
	// /v1/scan and SIGHUP); on a shared store only the leader does.
	RescanInterval time.Duration
	// CheckpointInterval signs the audit head into
	// DATA/audit-checkpoints.jsonl this often when the log grew (0: never).
	CheckpointInterval time.Duration
	// Roots and Trust are the roots rescans cover (DIR[=scope]) and their
	// trust; none: the roots of the last scan.
	Roots []string
	Trust string
	// Storage is where skill trees and workspaces live.
	Storage *Storage
	// Limits bound the HTTP connections.
	Limits server.Limits
	// PublicURL is the scheme and authority clients reach the server at,
	// for the OAuth protected resource metadata (see
	// [server.Options.PublicURL]); empty: each request's own.
	PublicURL string
	// RescanFailed, when set, is told of every rescan that failed and
	// what triggered it ("SIGHUP", "interval").
	RescanFailed func(trigger string, err error)
	// NoScan turns off the scan at start (see [App.ScanAtBoot]).
	NoScan bool
	// Scanned, when set, is told what the scan at start did, or why it
	// failed (the server then serves the registry as it was).
	Scanned func(*BootScan, error)
}

// Check refuses negative intervals and bounds (0 turns a bound off): a
// usage error naming the flag of 'skillgate serve'.
func (o *ServeOptions) Check() error {
	if o.RescanInterval < 0 {
		return Usagef("--rescan-interval must not be negative")
	}
	if o.CheckpointInterval < 0 {
		return Usagef("--audit-checkpoint-interval must not be negative")
	}
	lim := o.Limits
	for _, b := range []struct {
		flag string
		d    time.Duration
	}{{"--header-timeout", lim.HeaderTimeout}, {"--idle-timeout", lim.IdleTimeout}, {"--body-timeout", lim.BodyTimeout}, {"--write-timeout", lim.WriteTimeout}, {"--stream-ping", lim.StreamPing}} {
		if b.d < 0 {
			return Usagef("%s must not be negative (0 turns it off)", b.flag)
		}
	}
	if lim.MaxClientConns < 0 {
		return Usagef("--max-client-conns must not be negative (0: no limit)")
	}
	if o.PublicURL != "" {
		u, err := url.Parse(o.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return Usagef("--public-url %q: want the scheme and host clients reach the server at, such as https://gw.example.com", o.PublicURL)
		}
	}
	return nil
}

// Server is a serving skillgate: the runtime, the HTTP server on its
// listener, and the background work (capability watch, leader election and
// replica notifications, token reload, session maintenance, audit
// checkpoints). [Server.Run] serves until its context ends.
type Server struct {
	a      *App
	opts   ServeOptions
	rt     *Runtime
	lead   *leadership
	tokens *server.Tokens
	hs     *http.Server
	ln     net.Listener
	rescan func(context.Context) (bool, error)
	// libEvery and libChanged poll the tenant libraries (libpoll.go).
	libEvery   time.Duration
	libChanged func(context.Context) bool
	// stops end the background work and close the runtime, last started
	// first.
	stops []func()
}

// OpenServer opens everything 'skillgate serve' serves with, scans the
// roots when the registry is older than them (unless opts.NoScan; see
// [App.ScanAtBoot]) and then listens on opts.Addr, so that no agent is
// answered before; the background work runs until ctx ends or Run returns.
// On an error nothing stays open.
func (a *App) OpenServer(ctx context.Context, opts ServeOptions) (_ *Server, err error) {
	s := &Server{a: a, opts: opts}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	var d *Runtime
	mx := metrics.New(metrics.Sources{
		Upstreams: func() (alive, total int) {
			for _, st := range d.Caps.PoolStats() {
				total++
				if st.Alive {
					alive++
				}
			}
			return alive, total
		},
		Connections: func() int { return d.Gateway.Connections() },
		Leader:      func() bool { return s.lead != nil && s.lead.Leading() },
	})
	d, err = a.OpenRuntime(ctx, opts.Storage, Observers{Observe: mx.Observe, Changed: mx.Changed})
	if err != nil {
		return nil, err
	}
	s.rt = d
	s.stops = append(s.stops, d.Close)
	if !opts.NoScan {
		bs, err := a.ScanAtBoot(ctx, d, opts.Roots, opts.Trust)
		if opts.Scanned != nil {
			opts.Scanned(bs, err)
		}
	}
	s.stops = append(s.stops, d.StartWatch(ctx, time.Second))
	ts, err := a.TokenSet(ctx, d.DB)
	if err != nil {
		return nil, err
	}
	s.tokens, err = server.OpenTokenSet(ctx, ts)
	if err != nil {
		return nil, err
	}
	// On a store replicas share, one of them is elected to do the
	// periodic work, and each wakes its caches when another commits a
	// change.
	lead, stopReplica := d.startReplica(ctx, s.tokens.Reload)
	s.lead = lead
	s.stops = append(s.stops, stopReplica, d.MaintainSessions(ctx, lead.Leading),
		a.checkpointEvery(ctx, audit.NewLog(d.DB), opts.CheckpointInterval, lead.Leading, d.Log))
	s.rescan = func(ctx context.Context) (bool, error) {
		rs, err := a.rescanRoots(ctx, d.Registry, opts.Roots, opts.Trust)
		if err != nil {
			return false, err
		}
		cfg, err := a.Config()
		if err != nil {
			return false, err
		}
		return d.Gateway.Rescan(ctx, func(ctx context.Context) error {
			_, err := a.ScanAll(ctx, d.Registry, rs, cfg, ScanOptions{Storage: opts.Storage}, nil)
			return err
		})
	}
	ready := func(ctx context.Context) error {
		if err := d.DB.Ping(ctx); err != nil {
			mx.StoreError()
			return fmt.Errorf("store: %w", err)
		}
		if d.Bucket != nil {
			// A listing of one key: the bucket exists and the
			// credentials are good. Bounded, so that a load
			// balancer's probe gets its answer in time.
			bctx, cancel := context.WithTimeout(ctx, readyBucketTimeout)
			defer cancel()
			if _, err := d.Bucket.List(bctx, "", 1); err != nil {
				return fmt.Errorf("bucket: %w", err)
			}
		}
		return nil
	}
	srv, err := server.New(server.Options{Gateway: d.Gateway, Tokens: s.tokens, Rescan: s.rescan, Logger: d.Log, Version: a.opts.Version, Ready: ready,
		Delegate: d.delegateToken, PublicURL: opts.PublicURL, Tracer: d.Tracer})
	if err != nil {
		return nil, err
	}
	srv.MountInstalls(d.Installs)
	srv.MountPolicy(d.Caps.Engine)
	changes, err := a.newChanges(d.DB, d.Installs)
	if err != nil {
		return nil, err
	}
	srv.MountChanges(changes)
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	if s.libEvery, s.libChanged, err = a.libraryPoll(cfg, ScanOptions{Storage: opts.Storage}); err != nil {
		return nil, err
	}
	var mirrors []admin.Mirror
	for _, mr := range cfg.Mirrors {
		mirrors = append(mirrors, admin.Mirror{Canonical: expandHome(mr.Canonical, a.getenv("HOME")), Mirror: expandHome(mr.Mirror, a.getenv("HOME")),
			Limits: Limits(cfg, 0, 0)})
	}
	conns, stopConns, err := a.startConnections(ctx, d)
	if err != nil {
		return nil, err
	}
	s.stops = append(s.stops, stopConns)
	console, err := admin.New(admin.Options{Verify: srv.VerifyToken, Token: srv.CurrentToken, Installs: d.Installs, Policy: d.Caps.Engine, Registry: d.Registry, SkillFiles: d.Sessions,
		Changes: changes, Mirrors: mirrors, Audit: audit.NewLog(d.DB), Logger: d.Log, Connections: conns, PublicURL: opts.PublicURL})
	if err != nil {
		return nil, err
	}
	srv.MountAdmin(console)
	srv.MountMetrics(mx.Handler())
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	lim := opts.Limits
	hs, err := server.NewHTTPServer(srv, &lim, d.Log)
	if err != nil {
		ln.Close()
		return nil, Usagef("%v", err)
	}
	hs.BaseContext = func(net.Listener) context.Context { return ctx }
	s.hs, s.ln = hs, ln
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Tokens returns how many bearer tokens the server accepts now and where
// they are kept.
func (s *Server) Tokens() (n int, where string) { return s.tokens.Len(), s.tokens.Path() }

// WriteStarted writes what 'skillgate serve' says once it listens: a
// warning when the address is not loopback, where MCP and the admin
// console are with the tokens accepted, and a hint when there are none.
func (s *Server) WriteStarted(w io.Writer) {
	a := s.Addr()
	if ip, ok := a.(*net.TCPAddr); ok && !ip.IP.IsLoopback() {
		fmt.Fprintf(w, "skillgate serve: warning: %s is not a loopback address; bearer tokens cross the network in clear text unless a TLS proxy is in front\n", a)
	}
	n, where := s.Tokens()
	fmt.Fprintf(w, "skillgate serve: MCP at http://%s/mcp (%s in %s); admin console at http://%s/admin/\n", a, plural.Of(n, "token", "tokens"), where, a)
	if n == 0 {
		fmt.Fprintf(w, "skillgate serve: no tokens yet: every request gets 401 until you run 'skillgate token add --agent ID --tier T3'\n")
	}
}

// Runtime is what the server serves agents with.
func (s *Server) Runtime() *Runtime { return s.rt }

// Leading reports whether this process does the periodic work of the
// replicas on its store now (always, on a store no other process shares).
func (s *Server) Leading() bool { return s.lead.Leading() }

// Run serves until ctx ends, rescanning on SIGHUP and every
// RescanInterval (the leader only), then shuts the HTTP server down
// (closing connections still open after a grace period) and stops the
// background work. It returns nil when stopped by ctx; a Server runs once.
func (s *Server) Run(ctx context.Context) error {
	defer s.close()
	served := make(chan error, 1)
	go func() { served <- s.hs.Serve(s.ln) }()

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var tick, poll <-chan time.Time
	if s.opts.RescanInterval > 0 {
		t := time.NewTicker(s.opts.RescanInterval)
		defer t.Stop()
		tick = t.C
	}
	if s.libEvery > 0 {
		t := time.NewTicker(s.libEvery)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case err := <-served:
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		case <-hup:
			s.Rescan(ctx, "SIGHUP")
		case <-tick:
			// Replicas on one store rescan once: the leader does.
			if s.lead.Leading() {
				s.Rescan(ctx, "interval")
			}
		case <-poll:
			// Uploads to the tenant libraries: a rescan only when the
			// bucket's listings changed since the last sync.
			if s.lead.Leading() && s.libChanged(ctx) {
				s.Rescan(ctx, "tenant library")
			}
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			err := s.hs.Shutdown(sctx)
			cancel()
			if err != nil {
				s.hs.Close()
			}
			return nil
		}
	}
}

// Rescan rescans the registry as a SIGHUP does, notifying the connected
// clients of what changed; trigger says why, for the log. A failure goes
// to ServeOptions.RescanFailed.
func (s *Server) Rescan(ctx context.Context, trigger string) {
	changed, err := s.rescan(ctx)
	if err != nil {
		if s.opts.RescanFailed != nil {
			s.opts.RescanFailed(trigger, err)
		}
		return
	}
	s.rt.Log.InfoContext(ctx, "rescan", "trigger", trigger, "changed", changed)
}

// close stops the background work and closes the runtime, last started
// first.
func (s *Server) close() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	s.stops = nil
}
