package policy

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Buckets keeps rate-limit token buckets in storage that every process
// serving the registry shares, so that a limit of 3 an hour is 3 an hour
// whether calls come through one `skillgate mcp`, several, or `serve`
// (store/sqlite and store/postgres implement it). Without it, each engine keeps its own
// buckets in memory.
type Buckets interface {
	// TakeTokens refills the bucket key (at most burst tokens, perSecond
	// added per second, full when new) to time now and takes up to want
	// whole tokens from it. It returns how many it took and how many the
	// bucket held before taking.
	TakeTokens(ctx context.Context, key string, perSecond float64, burst, want int, now time.Time) (taken int, available float64, err error)
}

// leaseWindow is how much of a bucket's refill a process takes at once from
// shared Buckets: the tokens of about a second, at most a tenth of the
// bucket. Leased tokens are already gone from the shared bucket, so no
// process can overspend; a process that leases and stops calling leaves at
// most a lease unused.
const leaseWindow = time.Second

// lease is the number of tokens taken from shared Buckets at once.
func lease(perSecond float64, burst int) int {
	n := int(math.Ceil(perSecond * leaseWindow.Seconds()))
	return max(1, min(n, burst/10))
}

// sharedBucket is this process's unspent lease of a shared bucket.
type sharedBucket struct {
	mu     sync.Mutex
	leased int
}

// allowRate takes a token for key (or, when dry, only checks that one is
// there). Errors of shared Buckets deny: a limit that cannot be checked is
// not lifted.
func (e *Engine) allowRate(ctx context.Context, k limiterKey, dry bool) (bool, error) {
	if e.opts.Buckets == nil {
		l := e.limiter(k)
		if dry {
			return l.Tokens() >= 1, nil
		}
		return l.Allow(), nil
	}
	b := e.sharedBucket(k)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.leased > 0 {
		if !dry {
			b.leased--
		}
		return true, nil
	}
	key := k.principal + "\x00" + k.ref + "\x00" + k.rate.String()
	want := lease(k.rate.PerSecond(), k.rate.N)
	if dry {
		want = 0
	}
	taken, available, err := e.opts.Buckets.TakeTokens(ctx, key, k.rate.PerSecond(), k.rate.N, want, e.now())
	if err != nil {
		return false, err
	}
	if dry {
		return available >= 1, nil
	}
	if taken == 0 {
		return false, nil
	}
	b.leased = taken - 1
	return true, nil
}

func (e *Engine) sharedBucket(k limiterKey) *sharedBucket {
	e.lmu.Lock()
	defer e.lmu.Unlock()
	b := e.shared[k]
	if b == nil {
		b = &sharedBucket{}
		e.shared[k] = b
	}
	return b
}

func (e *Engine) limiter(k limiterKey) *rate.Limiter {
	e.lmu.RLock()
	l := e.limiters[k]
	e.lmu.RUnlock()
	if l != nil {
		return l
	}
	e.lmu.Lock()
	defer e.lmu.Unlock()
	if l = e.limiters[k]; l == nil {
		l = rate.NewLimiter(rate.Limit(k.rate.PerSecond()), k.rate.N)
		e.limiters[k] = l
	}
	return l
}
