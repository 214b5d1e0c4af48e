package app

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store/postgres"
)

// replicaStore is a store that several `skillgate serve` replicas share
// (store/postgres): it announces committed changes and elects one leader.
type replicaStore interface {
	sharedFiles
	// Listen calls fn with what changed until ctx ends.
	Listen(ctx context.Context, fn func(what string), log *slog.Logger)
	// Campaign calls lead when this process becomes, and stops being,
	// the leader, until ctx ends.
	Campaign(ctx context.Context, lead func(bool), log *slog.Logger)
}

var _ replicaStore = (*postgres.DB)(nil)

// leadership says whether this process does the work only one process on
// the store may do at a time (periodic rescans, audit checkpoints, pruning
// idle sessions). On a store replicas share it is decided by
// [replicaStore.Campaign]; on any other store every process leads, as
// before replicas existed.
type leadership struct {
	elected bool
	leading atomic.Bool
}

// Leading reports whether this process is the leader now.
func (l *leadership) Leading() bool { return !l.elected || l.leading.Load() }

// startReplica runs what a serving process on a replicated store does in
// the background until the returned stop is called: the leader election,
// and the listener that wakes the capability runtime's watch (and reloads
// the tokens) when another process commits a change. Tokens are also
// re-read every second, whatever the notifications. On another store it
// does nothing and the process leads.
func (d *Runtime) startReplica(ctx context.Context, reloadTokens func(context.Context) (bool, error)) (lead *leadership, stop func()) {
	lead = &leadership{}
	rs, ok := d.DB.(replicaStore)
	if !ok {
		return lead, func() {}
	}
	lead.elected = true
	rctx, cancel := context.WithCancel(ctx)
	tokens := make(chan struct{}, 1)
	wakeTokens := func() {
		select {
		case tokens <- struct{}{}:
		default:
		}
	}
	var done [3]chan struct{}
	for i := range done {
		done[i] = make(chan struct{})
	}
	go func() {
		defer close(done[0])
		rs.Campaign(rctx, func(leading bool) {
			lead.leading.Store(leading)
			if leading {
				d.Log.Info("leader: this process now runs the periodic work of the replicas")
			} else {
				d.Log.Info("leader: no longer the leader")
			}
		}, d.Log)
	}()
	go func() {
		defer close(done[1])
		rs.Listen(rctx, func(what string) {
			d.Caps.Wake()
			wakeTokens()
		}, d.Log)
	}()
	go func() {
		defer close(done[2])
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
			case <-tokens:
			}
			if _, err := reloadTokens(rctx); err != nil && rctx.Err() == nil {
				d.Log.Error("token reload failed; keeping the tokens last loaded", "err", err)
			}
		}
	}()
	return lead, func() {
		cancel()
		for _, c := range done {
			<-c
		}
	}
}
