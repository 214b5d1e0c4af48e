package upstream_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skillgate/skillgate/mcpclient"
	"github.com/skillgate/skillgate/upstream"
)

// TestErrNotSent: errors after which a call certainly never reached the
// server (no credential, server not started, a tool not pinned) match
// ErrNotSent, through Call and CallRaw, and keep their own kind and
// message; a call the server ran and failed does not match.
func TestErrNotSent(t *testing.T) {
	ctx := context.Background()
	ok := target(t, "ok")
	noCred := ok
	noCred.Server.Env = map[string]string{envMode: "ok", "TOKEN": "${MISSING_TOKEN}"}
	noCred.Digest = "sha256:nocred"
	broken := ok
	broken.Server = decl(t, "broken")
	broken.Digest = "sha256:broken"
	lim := limits()
	lim.CallTimeout = 300 * time.Millisecond
	p := upstream.New(upstream.Options{Limits: lim, RetryAfter: time.Nanosecond})
	defer p.Close()
	tests := []struct {
		name    string
		tg      upstream.Target
		tool    string
		kind    error
		notSent bool
	}{
		{"missing credential", noCred, "echo", mcpclient.ErrMissingCredential, true},
		{"server does not start", broken, "echo", nil, true},
		{"tool not pinned", ok, "nope", mcpclient.ErrToolBlocked, true},
		{"server ran it and timed out", ok, "slow", mcpclient.ErrTimeout, false},
	}
	for _, tt := range tests {
		_, err := p.Call(ctx, tt.tg, tt.tool, map[string]any{})
		_, rawErr := callRaw(ctx, p, tt.tg, tt.tool, `{}`)
		for _, e := range []error{err, rawErr} {
			if e == nil || errors.Is(e, upstream.ErrNotSent) != tt.notSent || tt.kind != nil && !errors.Is(e, tt.kind) {
				t.Errorf("%s: %v (not sent: %v)", tt.name, e, errors.Is(e, upstream.ErrNotSent))
			}
			if e != nil && e.Error() == upstream.ErrNotSent.Error() {
				t.Errorf("%s: the message is the marker's, not the error's", tt.name)
			}
		}
	}
}
