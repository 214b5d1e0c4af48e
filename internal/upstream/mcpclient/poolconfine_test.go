package mcpclient_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// countingConfiner records the servers it confines, and confines nothing.
type countingConfiner struct {
	mu    sync.Mutex
	seen  []string
	calls int
}

func (c *countingConfiner) Confine(cmd *exec.Cmd) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	return nil
}

var _ mcpclient.Confiner = (*countingConfiner)(nil)

// TestPoolConfines: the pool asks PoolOptions.Confine for each start, with
// the target's trust and egress; a refusal fails the call before any
// server starts; a new approval that changes the egress restarts the
// server under the new terms.
func TestPoolConfines(t *testing.T) {
	ctx := context.Background()
	tg := target(t, testserver.ModeProcess)
	conf := &countingConfiner{}
	refuse := errors.New("bwrap not found")
	p := mcpclient.NewPool(mcpclient.PoolOptions{Limits: testLimits(), RetryAfter: time.Millisecond,
		Confine: func(t mcpclient.Target) (mcpclient.Confiner, error) {
			conf.mu.Lock()
			conf.seen = append(conf.seen, string(t.Trust)+" network="+map[bool]string{true: "yes", false: "no"}[t.Network])
			conf.mu.Unlock()
			if t.Skill == "tools/refused" {
				return nil, refuse
			}
			return conf, nil
		}})
	defer p.Close()

	tg.Trust = capability.TrustImported
	res, err := call(t, ctx, p, tg, "echo", `{"text":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	first := text(t, res)
	if res, err = call(t, ctx, p, tg, "echo", `{"text":"hi"}`); err != nil || text(t, res) != first {
		t.Fatalf("second call: %v %v", res, err)
	}
	// Approved again, now with network egress: a new server.
	tg.Network = true
	if res, err = call(t, ctx, p, tg, "echo", `{"text":"hi"}`); err != nil || text(t, res) == first {
		t.Fatalf("after the egress changed: %v %v (was %q)", res, err, first)
	}
	conf.mu.Lock()
	if got := strings.Join(conf.seen, "; "); got != "imported network=no; imported network=yes" || conf.calls != 2 {
		t.Errorf("confinements asked %q, applied %d", got, conf.calls)
	}
	conf.mu.Unlock()

	refused := tg
	refused.Skill = "tools/refused"
	_, err = call(t, ctx, p, refused, "echo", `{"text":"hi"}`)
	if !errors.Is(err, refuse) || !errors.Is(err, mcpclient.ErrServerStart) || !errors.Is(err, mcpclient.ErrNotSent) ||
		err.Error() != `mcpclient: server "echo": start: server did not start: bwrap not found` {
		t.Fatalf("refused confinement: %v", err)
	}
}
