package mcpclient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestErrNotSent: errors after which a call certainly never reached the
// server (no credential, server not started, a tool not pinned) match
// ErrNotSent, and keep their own kind and
// message; a call the server ran and failed does not match.
func TestErrNotSent(t *testing.T) {
	ctx := context.Background()
	ok := target(t, testserver.ModeProcess)
	noCred := ok
	noCred.Server.Env = map[string]string{testserver.EnvMode: testserver.ModeProcess, "TOKEN": "${MISSING_TOKEN}"}
	noCred.Digest = "sha256:nocred"
	broken := ok
	broken.Server = poolDecl(t, testserver.ModeExit)
	broken.Digest = "sha256:broken"
	lim := testLimits()
	lim.CallTimeout = 300 * time.Millisecond
	p := mcpclient.NewPool(mcpclient.PoolOptions{Limits: lim, RetryAfter: time.Nanosecond})
	defer p.Close()
	tests := []struct {
		name    string
		tg      mcpclient.Target
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
		_, e := callRaw(ctx, p, tt.tg, tt.tool, `{}`)
		if e == nil || errors.Is(e, mcpclient.ErrNotSent) != tt.notSent || tt.kind != nil && !errors.Is(e, tt.kind) {
			t.Errorf("%s: %v (not sent: %v)", tt.name, e, errors.Is(e, mcpclient.ErrNotSent))
		}
		if e != nil && e.Error() == mcpclient.ErrNotSent.Error() {
			t.Errorf("%s: the message is the marker's, not the error's", tt.name)
		}
	}
}
