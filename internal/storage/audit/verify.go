package audit

import (
	"context"
	"errors"
	"fmt"
)

// ErrTampered means the log is not the chain it claims to be: a record was
// edited, deleted, inserted, reordered or cut off. The error says where.
var ErrTampered = errors.New("audit log tampered")

// Report is the outcome of a successful [Verify].
type Report struct {
	// Records is how many records were checked.
	Records int64 `json:"records"`
	// Head is the last record's head.
	Head Head `json:"head"`
}

// Verify walks the whole log and checks the chain: sequence numbers run
// from 1 without gaps, each Prev is the previous Hash (Genesis first), and
// each Hash is the record's recomputed hash. When want is not the zero
// Head, the log must also still hold that record unchanged, which detects
// records cut off the end since want was taken.
//
// A broken chain returns an error wrapping [ErrTampered] naming the first
// bad record; an I/O error is returned as is.
func Verify(ctx context.Context, log Log, want Head) (Report, error) {
	var rep Report
	prev := Head{Hash: Genesis}
	sawWant := want.Seq == 0
	err := log.Scan(ctx, 0, func(r Record) error {
		if r.Seq != prev.Seq+1 {
			if r.Seq > prev.Seq+1 {
				return fmt.Errorf("%w: records %d to %d are missing (deleted)", ErrTampered, prev.Seq+1, r.Seq-1)
			}
			return fmt.Errorf("%w: record %d follows record %d (out of order)", ErrTampered, r.Seq, prev.Seq)
		}
		if r.Prev != prev.Hash {
			return fmt.Errorf("%w: record %d does not chain to record %d (prev %s, want %s): one of them was edited or replaced", ErrTampered, r.Seq, prev.Seq, short(r.Prev), short(prev.Hash))
		}
		h, err := r.ComputeHash()
		if err != nil {
			return fmt.Errorf("%w: record %d: %v", ErrTampered, r.Seq, err)
		}
		if h != r.Hash {
			return fmt.Errorf("%w: record %d (%s %s) was edited: its content hashes to %s, not the recorded %s", ErrTampered, r.Seq, r.Action, r.Subject, short(h), short(r.Hash))
		}
		if r.Seq == want.Seq {
			if r.Hash != want.Hash {
				return fmt.Errorf("%w: record %d differs from the head %s you kept", ErrTampered, r.Seq, want)
			}
			sawWant = true
		}
		prev = Head{Seq: r.Seq, Hash: r.Hash}
		rep.Records++
		return nil
	})
	if err != nil {
		return rep, err
	}
	if !sawWant {
		return rep, fmt.Errorf("%w: the log ends at record %d, before the head %s you kept: records were cut off the end", ErrTampered, prev.Seq, want)
	}
	if prev.Seq > 0 {
		rep.Head = prev
	}
	return rep, nil
}

// short abbreviates a hash for messages.
func short(h string) string {
	const n = len("sha256:") + 12
	if len(h) > n {
		return h[:n] + "…"
	}
	return h
}
