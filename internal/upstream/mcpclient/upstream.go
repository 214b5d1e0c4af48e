package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// maxServerInfoBytes bounds the serverInfo name and version a server reports.
const maxServerInfoBytes = 256

// errPhaseTimeout is the context cause set when a phase limit expires, so a
// phase timeout is told apart from the caller's own deadline.
var errPhaseTimeout = errors.New("mcpclient phase limit")

// timedOut reports whether phaseCtx ended because its phase limit expired.
func timedOut(phaseCtx context.Context) bool {
	return errors.Is(context.Cause(phaseCtx), errPhaseTimeout)
}

// upstream is one connected server: the SDK session plus what this package
// needs to word errors (the process, the fatal recorder).
type upstream struct {
	id    string
	decl  ServerDecl
	o     resolved
	cs    *mcp.ClientSession
	stdio *stdioTransport // nil for HTTP
	fatal *fatalRecorder
	// scrub removes the declared credentials' values from what the
	// server says: every error and report leaves through it.
	scrub  scrubber
	server capability.ServerIdentity
	title  string
	proto  string
	// meta is the params._meta every raw request carries when proto is
	// 2026-07-28 or later (modern.go); nil for the initialize generation.
	meta  json.RawMessage
	tools bool // the server advertised the tools capability
	// skills is the Skills extension's declaration in the server's
	// capabilities; nil when it did not declare the extension.
	skills json.RawMessage
	// http and endpoint are the client and URL of a streamable HTTP
	// server, for raw calls (rawcall.go); nil over stdio.
	http     *http.Client
	endpoint string
	rawIDs   atomic.Uint64

	// abort makes every pending transport operation fail at once (closes the
	// stdio pipes, or cancels in-flight HTTP requests). The SDK waits for
	// pending writes before it closes a session; abort bounds that wait.
	abort func()
	// kill is the last resort of close: SIGKILL the stdio process group.
	kill func()

	mu    sync.Mutex
	pages map[string]json.RawMessage // last raw page per cursor, for SDK cache hits
}

// open connects to decl and performs the initialize handshake within
// Limits.InitializeTimeout. onListChanged, when non-nil, is called on
// notifications/tools/list_changed. On error nothing is left running.
func open(ctx context.Context, decl ServerDecl, o resolved, onListChanged func()) (*upstream, error) {
	u := &upstream{id: decl.ID, decl: decl, o: o, fatal: &fatalRecorder{}, scrub: newScrubber(scrubbed(decl), o.Credentials)}
	var transport mcp.Transport
	switch decl.Transport {
	case capability.TransportStdio:
		env, err := expandTemplates("env", decl.Env, o.Credentials)
		if err != nil {
			return nil, &ServerError{ServerID: decl.ID, Phase: "credentials", Err: err}
		}
		command, args := decl.Command, decl.Args
		if decl.Exec != nil {
			command, args = decl.Exec.Program, decl.Exec.Args
		}
		u.stdio = &stdioTransport{
			command: command,
			args:    args,
			env:     buildEnv(o, env),
			dir:     o.Dir,
			limits:  o.limits,
			fatal:   u.fatal,
			confine: o.Confine,
		}
		u.abort, u.kill = u.stdio.abort, u.stdio.kill
		transport = u.stdio
	case capability.TransportHTTP:
		headers, err := expandTemplates("headers", decl.Headers, o.Credentials)
		if err != nil {
			return nil, &ServerError{ServerID: decl.ID, Phase: "credentials", Err: err}
		}
		if o.Credentials != nil && BearerTarget(decl) {
			if tok, ok := o.Credentials(BearerCredential); ok {
				if strings.ContainsAny(tok, "\r\n\x00") {
					return nil, &ServerError{ServerID: decl.ID, Phase: "credentials", Err: fmt.Errorf("%w: the connection's access token contains a line break or NUL", ErrInvalidConfig)}
				}
				headers["Authorization"] = "Bearer " + tok
			}
		}
		base := o.HTTPClient
		if base == nil {
			base = &http.Client{}
		}
		rt := base.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		aborted, abort := context.WithCancel(context.Background())
		u.abort, u.kill = abort, abort
		endpoint, err := url.Parse(decl.URL)
		if err != nil {
			return nil, &ServerError{ServerID: decl.ID, Phase: "start", Err: fmt.Errorf("%w: url is not a valid URL", ErrInvalidConfig)}
		}
		hc := *base
		hc.Transport = &httpTransport{
			base: rt, headers: headers, origin: endpoint.Scheme + "://" + endpoint.Host,
			maxFrame: o.limits.MaxFrameBytes, fatal: u.fatal, aborted: aborted, declaredAuth: !BearerTarget(decl),
		}
		// An MCP endpoint has no reason to redirect, and following one
		// could carry the declared credentials elsewhere.
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		u.http, u.endpoint = &hc, decl.URL
		transport = &mcp.StreamableClientTransport{
			Endpoint:             decl.URL,
			HTTPClient:           &hc,
			DisableStandaloneSSE: onListChanged == nil,
			// Our own per-line limit (MaxFrameBytes) trips first and names
			// the cause; the SDK's event cap stays as a second bound.
			MaxEventSize: o.limits.MaxFrameBytes + 64<<10,
		}
	default:
		return nil, &ServerError{ServerID: decl.ID, Phase: "start", Err: fmt.Errorf("%w: unknown transport %q", ErrInvalidConfig, decl.Transport)}
	}

	copts := &mcp.ClientOptions{
		Logger: o.logger,
		// No roots, sampling or elicitation: skillgate exposes nothing to an
		// upstream server. (Advertising roots would, for example, make the
		// filesystem server replace its configured directories with ours.)
		// The MCP Skills extension is the one thing skillgate declares: it
		// reads (and verifies) the skills a server publishes.
		Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{SkillsExtension: map[string]any{}}},
	}
	if onListChanged != nil {
		copts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { onListChanged() }
	}
	client := mcp.NewClient(&mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}, copts)

	start := time.Now()
	ictx, cancel := context.WithTimeoutCause(ctx, o.limits.InitializeTimeout, errPhaseTimeout)
	defer cancel()
	// If the phase ends before Connect returns, abort the transport: on
	// failure Connect closes the session itself, and that close would
	// otherwise wait for the cancellation notice sent to a hung server.
	stopAbort := context.AfterFunc(ictx, u.abort)
	cs, err := client.Connect(ictx, transport, nil)
	if !stopAbort() && err == nil {
		_ = cs.Close()
		err = ictx.Err()
	}
	if err != nil {
		err = u.classify(timedOut(ictx), ctx, "initialize", o.limits.InitializeTimeout, err)
		u.abort()
		u.closeTransport()
		return nil, err
	}
	u.cs = cs
	if err := u.readInitialize(); err != nil {
		_ = u.close()
		return nil, err
	}
	o.logger.Debug("mcpclient: connected", "server", decl, "serverInfo", u.server.String(),
		"protocol", u.proto, "elapsed", time.Since(start))
	return u, nil
}

// buildEnv returns the environment of a stdio server: the inherited
// variables, then the declared (expanded) ones, which win. It is never nil:
// a nil Env would make exec inherit skillgate's whole environment.
func buildEnv(o resolved, declared map[string]string) []string {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	env := make([]string, 0, len(o.InheritEnv)+len(declared))
	for _, k := range o.InheritEnv {
		if _, ok := declared[k]; ok {
			continue
		}
		if v, ok := getenv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range sortedKeys(declared) {
		env = append(env, k+"="+declared[k])
	}
	return env
}

// readInitialize records and bounds what the server reported in initialize.
func (u *upstream) readInitialize() error {
	res := u.cs.InitializeResult()
	bad := func(format string, args ...any) error {
		return &ServerError{ServerID: u.id, Phase: "initialize", Err: fmt.Errorf("%w: "+format, append([]any{ErrMalformedResponse}, args...)...)}
	}
	if res == nil || res.ServerInfo == nil {
		return bad("no serverInfo")
	}
	si := res.ServerInfo
	switch {
	case si.Name == "":
		return bad("serverInfo.name is empty")
	case len(si.Name) > maxServerInfoBytes:
		return bad("serverInfo.name is %d bytes; the limit is %d", len(si.Name), maxServerInfoBytes)
	case len(si.Version) > maxServerInfoBytes:
		return bad("serverInfo.version is %d bytes; the limit is %d", len(si.Version), maxServerInfoBytes)
	}
	u.server = capability.ServerIdentity{Name: si.Name, Version: si.Version}
	if len(si.Title) <= maxServerInfoBytes {
		u.title = si.Title
	}
	u.proto = res.ProtocolVersion
	u.meta = requestMeta(u.proto, u.o.ClientName, u.o.ClientVersion)
	u.tools = res.Capabilities != nil && res.Capabilities.Tools != nil
	if res.Capabilities != nil {
		if v, ok := res.Capabilities.Extensions[SkillsExtension]; ok {
			b, err := json.Marshal(v)
			if err != nil || len(b) > maxServerInfoBytes || b[0] != '{' {
				return bad("capabilities.extensions[%q] is not a small JSON object", SkillsExtension)
			}
			u.skills = b
		}
	}
	return nil
}

// close ends the session; for stdio it returns once the process group is
// gone. It is bounded: if the SDK's close has not finished after
// TerminateTimeout (it waits for pending writes), the transport is aborted,
// and if it still has not finished, the process group is killed.
func (u *upstream) close() error {
	done := make(chan error, 1)
	go func() { done <- u.cs.Close() }()
	wait := func(d time.Duration) (error, bool) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case err := <-done:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	terminate := u.o.limits.TerminateTimeout
	err, ok := wait(terminate)
	if !ok {
		u.abort()
		// The process shutdown itself may take two terminate periods.
		if err, ok = wait(2*terminate + 5*time.Second); !ok {
			u.kill()
			err = fmt.Errorf("%w: closing the session did not finish", ErrConnection)
		}
	}
	u.closeTransport() // in case the SDK did not close the connection
	u.abort()          // ends anything left (a standalone SSE stream)
	return err
}

// closeTransport closes the stdio connection (and so the process) if one was
// created. It is idempotent.
func (u *upstream) closeTransport() {
	if u.stdio == nil {
		return
	}
	if _, conn := u.stdio.current(); conn != nil {
		_ = conn.Close()
	}
}

// classify turns an SDK error from one phase into a ServerError that names
// the cause, with the server's credentials scrubbed from its message.
// phaseCtx carries the phase limit; callerCtx is the caller's.
func (u *upstream) classify(timedOut bool, callerCtx context.Context, phase string, limit time.Duration, err error) error {
	return u.scrub.err(u.classifyCause(timedOut, callerCtx, phase, limit, err))
}

// classifyCause is classify before the credentials are scrubbed from the
// message.
func (u *upstream) classifyCause(timedOut bool, callerCtx context.Context, phase string, limit time.Duration, err error) error {
	se := func(cause error) error { return &ServerError{ServerID: u.id, Phase: phase, Err: cause} }
	if errors.Is(err, ErrServerStart) {
		return &ServerError{ServerID: u.id, Phase: "start", Err: err}
	}
	if f := u.fatal.get(); f != nil {
		return se(f)
	}
	if callerCtx.Err() != nil {
		return se(fmt.Errorf("%w: %w", ErrConnection, callerCtx.Err()))
	}
	if timedOut {
		return se(fmt.Errorf("%w (limit %s)", ErrTimeout, limit))
	}
	if errors.Is(err, ErrUnauthorized) {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // not the request's URL and method again
		}
		return se(err)
	}
	var opErr *net.OpError
	if u.stdio == nil && errors.As(err, &opErr) && opErr.Op == "dial" {
		return &ServerError{ServerID: u.id, Phase: "start", Err: fmt.Errorf("%w: cannot reach %s: %w", ErrServerStart, redactURL(u.decl.URL), opErr.Err)}
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return se(fmt.Errorf("%w: code %d: %s", ErrServerError, werr.Code, strictjson.Quote(werr.Message, 512)))
	}
	if u.stdio != nil {
		if p, _ := u.stdio.current(); p != nil {
			if status, crashed := p.crashStatus(u.o.limits.TerminateTimeout); crashed {
				return se(p.exitError(status))
			}
		}
	}
	return se(fmt.Errorf("%w: %w", ErrConnection, err))
}

// listTools fetches every tools/list page within Limits.ListTimeout and
// returns the raw pages and the raw tool objects in server order.
func (u *upstream) listTools(ctx context.Context) (pages, tools []json.RawMessage, err error) {
	if !u.tools {
		return nil, nil, nil
	}
	l := u.o.limits
	lctx, cancel := context.WithTimeoutCause(ctx, l.ListTimeout, errPhaseTimeout)
	defer cancel()
	se := func(cause error) error { return &ServerError{ServerID: u.id, Phase: "tools/list", Err: cause} }
	var (
		cursor string
		seen   = map[string]bool{}
		total  int
	)
	for page := 1; ; page++ {
		if page > l.MaxPages {
			return nil, nil, se(fmt.Errorf("%w: the server returns more than the limit of %d pages", ErrTooManyTools, l.MaxPages))
		}
		slot := &rawCapture{}
		_, callErr := u.cs.ListTools(withCapture(lctx, slot), &mcp.ListToolsParams{Cursor: cursor})
		raw := slot.get()
		switch {
		case raw != nil:
			// The raw result is authoritative; an SDK decoding error on it is
			// reported per tool by our own parser instead.
			if callErr != nil {
				u.o.logger.Debug("mcpclient: SDK could not decode tools/list; using the raw result", "server", u.id, "error", callErr)
			}
			u.rememberPage(cursor, raw)
		case callErr != nil:
			return nil, nil, u.classify(timedOut(lctx), ctx, "tools/list", l.ListTimeout, callErr)
		default:
			// Served from the SDK's cache (the server set ttlMs): the bytes
			// are the ones received for this cursor before.
			raw = u.cachedPage(cursor)
			if raw == nil {
				return nil, nil, se(fmt.Errorf("%w: page %d: the raw result was not captured", ErrMalformedResponse, page))
			}
		}
		total += len(raw)
		if total > l.MaxListBytes {
			return nil, nil, se(fmt.Errorf("%w: tools/list pages exceeded %d bytes in total", ErrResponseTooLarge, l.MaxListBytes))
		}
		items, next, perr := parsePage(raw)
		if perr != nil {
			return nil, nil, se(fmt.Errorf("%w: page %d: %w", ErrMalformedResponse, page, perr))
		}
		pages = append(pages, raw)
		tools = append(tools, items...)
		if len(tools) > l.MaxTools {
			return nil, nil, se(fmt.Errorf("%w: the server offers more than the limit of %d", ErrTooManyTools, l.MaxTools))
		}
		if next == "" {
			return pages, tools, nil
		}
		if seen[next] || next == cursor {
			return nil, nil, se(fmt.Errorf("%w: page %d repeats cursor %s", ErrMalformedResponse, page, strictjson.Quote(next, 128)))
		}
		seen[next] = true
		cursor = next
	}
}

func (u *upstream) rememberPage(cursor string, raw json.RawMessage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pages == nil {
		u.pages = make(map[string]json.RawMessage)
	}
	u.pages[cursor] = raw
}

func (u *upstream) cachedPage(cursor string) json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.pages[cursor]
}

// parsePage splits a raw tools/list result into its tool objects and the
// next cursor.
func parsePage(raw json.RawMessage) (tools []json.RawMessage, next string, err error) {
	return parseListPage(raw, "tools")
}

// parseListPage splits a paginated list result (tools/list, skills/list)
// into the objects of its array member list and the next cursor.
func parseListPage(raw json.RawMessage, list string) (items []json.RawMessage, next string, err error) {
	members, err := strictjson.Object(raw)
	if err != nil {
		return nil, "", fmt.Errorf("the result: %s", describeObjectErr(err, "the result"))
	}
	var listRaw json.RawMessage
	for _, m := range members {
		switch m.Key {
		case list:
			listRaw = m.Value
		case "nextCursor":
			if strictjson.Kind(m.Value) == "null" {
				continue
			}
			s, ok := strictjson.String(m.Value)
			if !ok {
				return nil, "", fmt.Errorf("nextCursor is %s; want a string", strictjson.Kind(m.Value))
			}
			next = s
		}
	}
	if listRaw == nil {
		return nil, "", fmt.Errorf("the result has no %q array", list)
	}
	if strictjson.Kind(listRaw) != "an array" {
		return nil, "", fmt.Errorf("%q is %s; want an array", list, strictjson.Kind(listRaw))
	}
	if items, err = strictjson.Array(listRaw); err != nil {
		return nil, "", fmt.Errorf("%q: %w", list, err)
	}
	for i, t := range items {
		if strictjson.Kind(t) != "an object" {
			return nil, "", fmt.Errorf("%s[%d] is %s; want an object", list, i, strictjson.Kind(t))
		}
	}
	return items, next, nil
}
