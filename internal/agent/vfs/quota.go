package vfs

import (
	"context"
	"fmt"
	"sync"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// Quota bounds what writes may keep under the writable mounts that share
// it: total bytes and number of files. A session's /workspace has its own
// quota, and every workspace of a tenant shares the tenant's, so neither one
// session nor many fresh ones can fill the disk. Usage is measured once, by
// listing the quota's prefix in its store on the first write, and then kept
// up to date by the writes of this process; writes from another process to
// the same prefix are seen at the next measurement only (a new Quota), so
// several processes serving one tenant may each admit up to the limit.
//
// A Quota is safe for concurrent use. The zero limits mean unlimited.
type Quota struct {
	// What names the quota in messages: "this session's workspace".
	What string
	// MaxBytes and MaxFiles are the limits; 0 means unlimited.
	MaxBytes, MaxFiles int64
	// Store and Prefix are what is measured.
	Store  blob.Store
	Prefix string

	mu       sync.Mutex
	measured bool
	bytes    int64
	files    int64
}

// ErrQuota: a write would take a workspace over its quota.
var ErrQuota = fmt.Errorf("vfs: workspace quota exceeded")

// measureLocked lists the quota's prefix once. q.mu is held.
func (q *Quota) measureLocked(ctx context.Context) error {
	if q.measured {
		return nil
	}
	limit := 0
	if q.MaxFiles > 0 {
		limit = int(q.MaxFiles) + 1
	}
	infos, err := q.Store.List(ctx, q.Prefix, limit)
	if err != nil {
		return err
	}
	for _, in := range infos {
		q.bytes += in.Size
	}
	q.files = int64(len(infos))
	q.measured = true
	return nil
}

// Release gives back bytes and files deleted outside the filesystem (a
// removed session's workspace). A quota not yet measured ignores it: its
// first measurement lists what is left. Usage never drops below zero.
func (q *Quota) Release(bytes, files int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.measured {
		return
	}
	q.bytes = max(q.bytes-bytes, 0)
	q.files = max(q.files-files, 0)
}

// Usage returns the bytes and files counted so far (measuring first).
func (q *Quota) Usage(ctx context.Context) (bytes, files int64, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.measureLocked(ctx); err != nil {
		return 0, 0, err
	}
	return q.bytes, q.files, nil
}

// charge takes dBytes and dFiles from every quota of qs, or from none of
// them: it fails when one would go over its limit (a charge that does not
// grow usage always passes). Negative amounts give back. qs are locked in
// order, so every mount lists its quotas narrowest first (the session's,
// then the tenant's). The error is the agent-facing refusal, or a failed
// measurement (not an *Error).
func charge(ctx context.Context, qs []*Quota, verb, path string, dBytes, dFiles int64) error {
	for _, q := range qs {
		q.mu.Lock()
		defer q.mu.Unlock()
	}
	for _, q := range qs {
		if err := q.measureLocked(ctx); err != nil {
			return err
		}
		switch {
		case dFiles > 0 && q.MaxFiles > 0 && q.files+dFiles > q.MaxFiles:
			return &Error{Kind: ErrQuota, Msg: fmt.Sprintf("Error %s file '%s': the file limit of %s (%d) is reached; ask an operator to raise it, or continue in a new session", verb, path, q.What, q.MaxFiles)}
		case dBytes > 0 && q.MaxBytes > 0 && q.bytes+dBytes > q.MaxBytes:
			return &Error{Kind: ErrQuota, Msg: fmt.Sprintf("Error %s file '%s': the byte limit of %s (%d) would be exceeded (%d bytes); ask an operator to raise it, or continue in a new session", verb, path, q.What, q.MaxBytes, q.bytes+dBytes)}
		}
	}
	for _, q := range qs {
		q.bytes += dBytes
		q.files += dFiles
	}
	return nil
}
