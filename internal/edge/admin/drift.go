package admin

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/registry/discover"
)

// Mirror is a canonical skill folder and its mirror (such as .agents/skills
// and .claude/skills), whose drift the overview shows.
type Mirror struct {
	Canonical, Mirror string
	// Limits bound each walk (discover.DefaultLimits, or the
	// configuration's).
	Limits discover.Limits
}

// driftRefresh is how old a comparison may be before the overview starts
// a new one.
const driftRefresh = time.Minute

// driftCache compares the mirrors in the background, so that the overview
// never waits for a walk of two folders.
type driftCache struct {
	mirrors []Mirror
	log     *slog.Logger
	now     func() time.Time

	mu      sync.Mutex
	results []MirrorDrift
	at      time.Time
	running bool
}

// MirrorDrift is one mirror's last comparison.
type MirrorDrift struct {
	Canonical, Mirror string
	Report            *discover.DriftReport
	Err               string
	// Pending is true before the first comparison ends.
	Pending bool
	At      time.Time
}

// latest returns the last comparisons, and starts a new one (with ctx's
// values, never its cancellation) when they are older than driftRefresh.
func (d *driftCache) latest(ctx context.Context) []MirrorDrift {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.running && d.now().Sub(d.at) > driftRefresh {
		d.running = true
		go d.compare(ctx)
	}
	if d.results == nil {
		out := make([]MirrorDrift, len(d.mirrors))
		for i, m := range d.mirrors {
			out[i] = MirrorDrift{Canonical: m.Canonical, Mirror: m.Mirror, Pending: true}
		}
		return out
	}
	return d.results
}

func (d *driftCache) compare(ctx context.Context) {
	out := make([]MirrorDrift, len(d.mirrors))
	for i, m := range d.mirrors {
		rep, err := discover.Drift(ctx, m.Canonical, m.Mirror, m.Limits)
		out[i] = MirrorDrift{Canonical: m.Canonical, Mirror: m.Mirror, Report: rep, At: d.now()}
		if err != nil {
			d.log.WarnContext(ctx, "admin console: mirror drift", "canonical", m.Canonical, "mirror", m.Mirror, "err", err)
			out[i].Err, out[i].Report = err.Error(), nil
		}
	}
	d.mu.Lock()
	d.results, d.at, d.running = out, d.now(), false
	d.mu.Unlock()
}
