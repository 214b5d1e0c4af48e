package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/edge/server"
)

func (m *Main) serveCommand() *cobra.Command {
	var addr string
	var interval, checkpointInterval time.Duration
	var roots []string
	var trust string
	var noScan bool
	var publicURL string
	var sf storageFlags
	lim := server.DefaultLimits()
	c := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7777] [--rescan-interval D] [--root DIR]...",
		Short: "Serve agents over MCP (streamable HTTP at /mcp) with bearer tokens",
		Long: `Serve agents over MCP, streamable HTTP at http://ADDR/mcp (loopback by
default). Every request except GET /v1/health (for load balancers: it says
only {"status":"ok"} without a token) needs 'Authorization: Bearer <token>';
a missing or unknown token gets 401 with 'WWW-Authenticate: Bearer
realm="skillgate", resource_metadata="…"', which names the OAuth protected
resource metadata (RFC 9728) served at /.well-known/oauth-protected-resource
and /.well-known/oauth-protected-resource/mcp: MCP clients learn from it
that a bearer token is wanted and that no authorization server issues one.
Its URLs are those each request reached the server with, or --public-url
behind a proxy that changes them. Tokens map to principals and are managed with
'skillgate token' (DATA/tokens.json, or the store when it is PostgreSQL;
re-read when they change). Send 'Skillgate-Session: ID' on the initialize request to
resume a session; new connections get their id in that response header.

At start the roots are scanned when the registry is empty or older than
them (--no-scan: serve it as it is). The registry is rescanned on POST /v1/scan (a T0 or T1 token), on SIGHUP,
and every --rescan-interval when set; connected clients are notified
(tools/list_changed, resources/updated) when what they may load changed.
Rescans cover --root, else the roots the registry was last scanned with.

Several 'skillgate serve' replicas may share one PostgreSQL store (and one
bucket): tokens and credentials are kept in the store, a change made
through any replica reaches the others within a second, and the periodic
work (--rescan-interval, audit checkpoints, pruning idle sessions) is done
by one leader, elected with an advisory lock (see docs/deploy.md).

Sessions unused for 'sessions: idle_expiry' (24h by default; 0 or never
keeps them) are pruned with their workspaces (see 'skillgate session').

Connections are bounded: a keep-alive connection idle for --idle-timeout is
closed; a request body not received within --body-timeout gets 408; each write
of a response must finish within --write-timeout (a client that stops reading
is dropped), while event streams (the MCP standalone stream, streamed calls)
last as long as the session and get an SSE comment every --stream-ping; one
client address holds at most --max-client-conns connections (the next gets
429). 0 turns a bound off. Behind a reverse proxy every client shares the
proxy's address: raise --max-client-conns or bound clients at the proxy.

With OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set,
MCP requests, REST calls and forwarded capability calls are traced with
OpenTelemetry (OTEL_* variables; arguments and results only with
SKILLGATE_TRACE_PAYLOADS=1; see docs/deploy.md).

Exit codes: 0 stopped by a signal, 1 failure, 2 usage error.`,
		Example: "  skillgate token add --agent drafter --tier T3 --tenant acme\n  skillgate serve --addr 127.0.0.1:7777 --rescan-interval 1m",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			opts := app.ServeOptions{
				Addr: addr, RescanInterval: interval, CheckpointInterval: checkpointInterval,
				Roots: roots, Trust: trust, Storage: &sf, Limits: lim, PublicURL: publicURL,
				RescanFailed: func(why string, err error) {
					fmt.Fprintf(m.Stderr, "skillgate serve: rescan (%s): %v\n", why, err)
				},
				NoScan: noScan, Scanned: m.bootScanned("skillgate serve"),
			}
			if err := opts.Check(); err != nil {
				return err
			}
			srv, err := m.app().OpenServer(ctx, opts)
			if err != nil {
				return err
			}
			srv.WriteStarted(m.Stderr)
			if err := srv.Run(ctx); err != nil {
				return err
			}
			if ctx.Err() != nil {
				fmt.Fprintln(m.Stderr, "skillgate serve: stopped")
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&addr, "addr", envOr(m.Getenv("SKILLGATE_ADDR"), "127.0.0.1:7777"), "address to listen on ($SKILLGATE_ADDR); port 0 picks a free port")
	f.DurationVar(&interval, "rescan-interval", 0, "rescan the registry this often (0: only on POST /v1/scan and SIGHUP)")
	f.DurationVar(&checkpointInterval, "audit-checkpoint-interval", time.Hour, "sign the audit head into DATA/"+app.AuditCheckpointFile+" this often when the log grew (0: never)")
	f.StringVar(&publicURL, "public-url", m.Getenv("SKILLGATE_PUBLIC_URL"), "scheme and host clients reach the server at, such as https://gw.example.com behind a TLS proxy, for the OAuth resource metadata ($SKILLGATE_PUBLIC_URL; default: each request's)")
	f.StringArrayVar(&roots, "root", nil, "root to rescan, DIR[=scope] (default: the roots of the last scan); repeatable")
	f.BoolVar(&noScan, "no-scan", false, "do not scan the roots at start, even when the registry is empty or older than them")
	f.StringVar(&trust, "trust", "", "trust of the --root roots: imported (default) or first_party")
	f.DurationVar(&lim.HeaderTimeout, "header-timeout", lim.HeaderTimeout, "close a connection whose request headers take longer (0: no bound)")
	f.DurationVar(&lim.IdleTimeout, "idle-timeout", lim.IdleTimeout, "close a keep-alive connection idle this long between requests (0: never)")
	f.DurationVar(&lim.BodyTimeout, "body-timeout", lim.BodyTimeout, "answer 408 and close when a request body takes longer to arrive (0: no bound)")
	f.DurationVar(&lim.WriteTimeout, "write-timeout", lim.WriteTimeout, "drop a client when one write of a response takes longer; event streams stay open as long as they write (0: no bound)")
	f.DurationVar(&lim.StreamPing, "stream-ping", lim.StreamPing, "write an SSE comment on event streams this often (0: never)")
	f.IntVar(&lim.MaxClientConns, "max-client-conns", lim.MaxClientConns, "open connections per client IP address; more get 429 (0: no limit)")
	m.addStorageFlags(c, &sf)
	return c
}
