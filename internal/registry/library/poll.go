package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillgate/skillgate/internal/platform/atomicfile"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/bucket"
)

// stampFile holds, in the cache directory, the stamp of the bucket's
// listings as the last sync saw them: a dot-name, which scans skip.
const stampFile = ".library-stamp"

// maxStampFile bounds the stamp file read back.
const maxStampFile = 256

// stamp hashes what the bucket listed for every tenant, in tenant order.
type stamp struct{ h hash.Hash }

func newStamp(tenants []string) *stamp {
	s := &stamp{h: sha256.New()}
	fmt.Fprintf(s.h, "tenants %d\n", len(tenants))
	return s
}

// add records tenant's listing.
func (s *stamp) add(tenant, listing string) {
	s.h.Write([]byte(tenant))
	s.h.Write([]byte{0})
	s.h.Write([]byte(listing))
	s.h.Write([]byte{'\n'})
}

func (s *stamp) String() string { return hex.EncodeToString(s.h.Sum(nil)) }

// write records the stamp in dir.
func (s *stamp) write(dir string) error {
	return atomicfile.Write(filepath.Join(dir, stampFile), []byte(s.String()), 0o600)
}

// listingOf identifies a tenant's listing, as the stamp records it: the
// fingerprint of its objects, or why it could not be used.
func (l *Library) listingOf(objs []blob.Info, err error) string {
	switch {
	case err != nil:
		return "error" // never equal to a fingerprint: the next poll syncs again
	case len(objs) > l.opts.MaxObjects:
		return "over"
	}
	return fingerprint(objs)
}

// Changed reports whether the tenant libraries in the bucket differ from
// what the last sync of this cache (by any process) copied: a skill
// uploaded, replaced or deleted, a tenant's library added or emptied, or
// a listing the last sync could not make. It lists the bucket as a sync
// does (the top level, then one listing per tenant, 1,000 objects a
// request) and downloads nothing, so a server can poll it often and sync
// (rescan) only when it is true. A listing error is returned, with true.
func (l *Library) Changed(ctx context.Context) (bool, error) {
	b, err := os.ReadFile(filepath.Join(l.opts.Dir, stampFile))
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil // never synced
	}
	if err != nil {
		return true, fmt.Errorf("library: %w", err)
	}
	if len(b) > maxStampFile {
		return true, nil
	}
	tenants, err := l.tenants(ctx, &Report{})
	if err != nil {
		return true, err
	}
	st := newStamp(tenants)
	for _, t := range tenants {
		prefix, err := bucket.TenantSkillsPrefix(t)
		if err != nil {
			st.add(t, "invalid")
			continue
		}
		objs, err := l.opts.Store.List(ctx, prefix, l.opts.MaxObjects+1)
		if err != nil {
			return true, fmt.Errorf("library: list %s: %w", prefix, err)
		}
		st.add(t, l.listingOf(objs, nil))
	}
	return st.String() != strings.TrimSpace(string(b)), nil
}
