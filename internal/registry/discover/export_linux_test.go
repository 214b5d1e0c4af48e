package discover

import (
	"context"

	"golang.org/x/sys/unix"
)

// VerifyStatsForTest verifies the state of rec (a record of root made
// with DefaultLimits) as a rescan does: based says whether blocks are
// stat'ed from their base directory (the fast path) or from the root.
// based also returns how many blocks have a base.
func VerifyStatsForTest(ctx context.Context, rec, root string, useBase bool) (ok bool, based int, err error) {
	_, state := recordListingsForTest(rec, root)
	ps, ok, err := parseState(state, DefaultLimits)
	if err != nil || !ok {
		return false, 0, err
	}
	blocks, err := statBlocks(ps.stats)
	if err != nil {
		return false, 0, err
	}
	rootfd, err := openRoot(root)
	if err == nil {
		v := statVerifier{rootfd: rootfd}
		for _, b := range blocks {
			if fd, _ := v.base(b); fd >= 0 {
				based++
				_ = unix.Close(fd)
			}
		}
		_ = unix.Close(rootfd)
	}
	ok, err = verifyStatsWith(ctx, root, ps.stats, useBase)
	return ok, based, err
}
