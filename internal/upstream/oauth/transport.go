package oauth

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// nonPublic are the ranges netip's predicates miss that must not be
// reached from a server-controlled URL.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64, may map to private IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
}

// forbidden reports whether ip is not a public unicast address: loopback,
// private (RFC 1918, ULA), link-local, multicast, unspecified, CGNAT,
// NAT64 and the reserved ranges.
func forbidden(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// recorderKey is the context key of an operation's [recorder].
type recorderKey struct{}

// recorder keeps the first bound an operation's requests broke. The
// libraries this package drives (oauthex, x/oauth2) flatten some errors
// to text; the recorder lets the package still wrap the right sentinel.
type recorder struct {
	mu  sync.Mutex
	err error
}

// withRecorder returns ctx carrying a fresh recorder.
func withRecorder(ctx context.Context) (context.Context, *recorder) {
	r := &recorder{}
	return context.WithValue(ctx, recorderKey{}, r), r
}

// note records err for the operation in ctx, if it is the first.
func note(ctx context.Context, err error) {
	if r, ok := ctx.Value(recorderKey{}).(*recorder); ok {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	}
}

// broken returns the first bound broken, or nil.
func (r *recorder) broken() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// endpoint names a request in messages and logs: method and URL without
// its query (a query may carry state or a code).
func endpoint(req *http.Request) string {
	u := *req.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return req.Method + " " + u.String()
}

// transport bounds every request of a [Client]: a deadline over the
// whole exchange (body included), a cap on the body, and the address
// check of its dialer. It records what it refused in the operation's
// recorder and logs each request without headers or bodies.
type transport struct {
	base    http.RoundTripper
	timeout time.Duration
	max     int64
	log     *slog.Logger
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		switch {
		case errors.Is(err, ErrForbiddenAddress):
			note(req.Context(), forbiddenErr(err))
		case req.Context().Err() == nil && (errors.Is(ctx.Err(), context.DeadlineExceeded) || isTimeout(err)):
			note(req.Context(), t.timeoutErr())
		}
		t.log.DebugContext(req.Context(), "oauth request failed", "endpoint", endpoint(req), "duration", time.Since(start))
		return nil, err
	}
	t.log.DebugContext(req.Context(), "oauth request", "endpoint", endpoint(req), "status", resp.StatusCode, "duration", time.Since(start))
	if resp.ContentLength > t.max {
		resp.Body.Close()
		cancel()
		err := t.tooLargeErr()
		note(req.Context(), err)
		return nil, err
	}
	resp.Body = &boundedBody{rc: resp.Body, left: t.max, ctx: ctx, outer: req.Context(), cancel: cancel, t: t}
	return resp, nil
}

func (t *transport) tooLargeErr() error {
	return fmt.Errorf("%w: the body exceeds %d bytes (raise Options.MaxResponseBytes only for a server you trust)", ErrResponseTooLarge, t.max)
}

func (t *transport) timeoutErr() error {
	return fmt.Errorf("%w: no complete answer within %s (raise Options.Timeout only for a server you trust)", ErrTimeout, t.timeout)
}

// isTimeout reports whether err is a network timeout (a dial or TLS
// handshake deadline), as opposed to a refusal.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// forbiddenErr keeps the dialler's wording (it names the address) under
// the sentinel.
func forbiddenErr(err error) error {
	var fa *forbiddenAddr
	if errors.As(err, &fa) {
		return fa
	}
	return fmt.Errorf("%w", ErrForbiddenAddress)
}

// boundedBody reads at most left bytes and fails beyond them; it ends the
// request's deadline on Close.
type boundedBody struct {
	rc     io.ReadCloser
	left   int64
	ctx    context.Context
	outer  context.Context
	cancel context.CancelFunc
	t      *transport
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.t.tooLargeErr()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		e := b.t.tooLargeErr()
		note(b.outer, e)
		return n - int(-b.left), e
	}
	if err != nil && err != io.EOF && errors.Is(b.ctx.Err(), context.DeadlineExceeded) && b.outer.Err() == nil {
		e := b.t.timeoutErr()
		note(b.outer, e)
		return n, e
	}
	return n, err
}

func (b *boundedBody) Close() error {
	b.cancel()
	return b.rc.Close()
}

// forbiddenAddr is the dialler's refusal of one address.
type forbiddenAddr struct{ addr string }

func (e *forbiddenAddr) Error() string {
	return fmt.Sprintf("%s: %s is not a public address (set Options.AllowPrivateNetworks only in tests)", ErrForbiddenAddress, e.addr)
}

func (e *forbiddenAddr) Unwrap() error { return ErrForbiddenAddress }

// newHTTPClient builds the one HTTP client every request of a [Client]
// goes through.
func newHTTPClient(o *Options) *http.Client {
	dialer := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}
	if !o.AllowPrivateNetworks {
		// Control runs after name resolution, on the address about to be
		// dialled: a public name that resolves to 10.0.0.1 is refused here.
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || forbidden(ip) {
				return &forbiddenAddr{addr: host}
			}
			return nil
		}
	}
	base := &http.Transport{
		Proxy: nil, // a proxy would be dialled instead of the destination, defeating the address check
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil && errors.Is(err, ErrForbiddenAddress) {
				note(ctx, forbiddenErr(err))
			}
			return c, err
		},
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: o.RootCAs},
		TLSHandshakeTimeout:    o.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
	}
	t := &transport{base: base, timeout: o.Timeout, max: o.MaxResponseBytes, log: o.Logger}
	return &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			var err error
			switch {
			case len(via) > o.MaxRedirects:
				err = fmt.Errorf("%w: more than %d redirects from %s", ErrForbiddenRedirect, o.MaxRedirects, endpoint(via[0]))
			case origin(req.URL) != origin(via[0].URL):
				err = fmt.Errorf("%w: %s redirected to another origin, %s (an endpoint must answer at its own origin)", ErrForbiddenRedirect, endpoint(via[0]), origin(req.URL))
			default:
				return nil
			}
			note(req.Context(), err)
			return err
		},
	}
}

// origin is scheme://host:port of u, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// checkURL validates a URL the client is about to fetch: absolute, https
// (or http when allowed), no user info, no fragment, and, when it is an
// address literal, a public one unless private networks are allowed.
// field names where the URL came from, for the message.
func (c *Client) checkURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q does not parse: %v", ErrInvalidURL, field, quote(raw), err)
	}
	switch {
	case u.Scheme != "https" && !(u.Scheme == "http" && c.opts.AllowInsecureHTTP):
		return nil, fmt.Errorf("%w: %s %q must use https", ErrInvalidURL, field, quote(raw))
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("%w: %s %q has no host", ErrInvalidURL, field, quote(raw))
	case u.User != nil:
		return nil, fmt.Errorf("%w: %s %q must not carry user info", ErrInvalidURL, field, quote(raw))
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, fmt.Errorf("%w: %s %q must not have a fragment", ErrInvalidURL, field, quote(raw))
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !c.opts.AllowPrivateNetworks && forbidden(ip) {
		return nil, fmt.Errorf("%s %q: %w", field, quote(raw), &forbiddenAddr{addr: ip.String()})
	}
	return u, nil
}
