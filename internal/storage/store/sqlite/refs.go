package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"

	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlstore"
)

// The packed refs of each root (table root_refs, migration 7): its refs
// (Store.Refs) packed into one value (packRefs), so a rescan reads one row
// instead of a row per skill. They go with their root, and are rewritten
// in the transaction of every scan that changes the root's versions
// (nothing else changes what they hold), so they always agree with the
// versions table; roots below one another keep none.

// refsFormat is the first byte of packed refs; another value is a format
// this build does not read, so the refs are read from the versions table.
const refsFormat = 1

// packedRefs reads the packed refs of root, if any. They are read into a
// string (database/sql copies the driver's bytes once either way) so that
// the refs unpackRefs makes of them can share its memory.
func packedRefs(ctx context.Context, q sqlstore.Querier, root string) (string, bool, error) {
	var s string
	err := q.QueryRowContext(ctx, `SELECT data FROM root_refs WHERE root = ?`, root).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return s, true, nil
}

// writeRefs brings the packed refs of a root up to date with the changes
// of its scan, once the root's versions are written in tx.
func (w *scanWriter) writeRefs(ctx context.Context, tx *sql.Tx, rc *sqlstore.RootChanges) error {
	if w.nested {
		_, err := tx.ExecContext(ctx, `DELETE FROM root_refs WHERE root = ?`, rc.Root)
		return err
	}
	changed := len(rc.Gone) > 0 || len(rc.Upserts) > 0
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM root_refs WHERE root = ?`, rc.Root).Scan(&have); err != nil {
		return err
	}
	if have > 0 && !changed {
		return nil
	}
	var refs map[string]store.Ref
	ok := false
	if have > 0 {
		packed, _, err := packedRefs(ctx, tx, rc.Root)
		if err != nil {
			return err
		}
		refs, ok = unpackRefs(rc.Root, packed)
	}
	switch {
	case ok:
		for _, dir := range rc.Gone {
			delete(refs, dir)
		}
		addRefs(refs, rc.Upserts)
	case len(rc.Upserts) > 0 && rc.PrevEmpty:
		// Every current version is an upsert (a first scan).
		n := 0
		for _, vs := range rc.Upserts {
			n += len(vs)
		}
		refs = make(map[string]store.Ref, n)
		addRefs(refs, rc.Upserts)
	default:
		// No packed refs yet: read them once from the versions table.
		var err error
		if refs, err = queryRefs(ctx, tx, rc.Root); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO root_refs (root, data) VALUES (?, ?)
		ON CONFLICT (root) DO UPDATE SET data = excluded.data`, rc.Root, packRefs(rc.Root, refs))
	return err
}

// addRefs sets the refs of upserted versions, as the versions table has
// them once written.
func addRefs(refs map[string]store.Ref, upserts [][]store.Version) {
	for _, vs := range upserts {
		for i := range vs {
			v := &vs[i]
			r := store.Ref{Fingerprint: v.Fingerprint, Key: v.Key, Name: v.Name, Valid: v.Valid}
			if !v.Valid {
				r.Diagnostics = v.Diagnostics
				if len(r.Diagnostics) == 0 {
					r.Diagnostics = json.RawMessage("[]")
				}
			}
			refs[v.Dir] = r
		}
	}
}

// packRefs encodes the refs of root: the format byte, their number, then
// per directory its path (after root when below it: a byte 0 then the
// rest; else a byte 1 then the path), fingerprint, key and name, a valid
// byte, and the diagnostics of a rejected version. Strings are a uvarint
// length and bytes.
func packRefs(root string, refs map[string]store.Ref) []byte {
	size := 1 + binary.MaxVarintLen64
	for dir, r := range refs {
		size += len(dir) + len(r.Fingerprint) + len(r.Key) + len(r.Name) + len(r.Diagnostics) + 2 + 5*binary.MaxVarintLen64
	}
	b := make([]byte, 0, size)
	b = append(b, refsFormat)
	b = binary.AppendUvarint(b, uint64(len(refs)))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for dir, r := range refs {
		if rest, ok := strings.CutPrefix(dir, root); ok {
			b = append(b, 0)
			str(rest)
		} else {
			b = append(b, 1)
			str(dir)
		}
		str(r.Fingerprint)
		str(r.Key)
		str(r.Name)
		if r.Valid {
			b = append(b, 1)
		} else {
			b = append(b, 0)
			str(string(r.Diagnostics))
		}
	}
	return b
}

// unpackRefs decodes what packRefs made; ok is false when packed is not
// in a format this build reads, or malformed. The refs share the memory of
// packed.
func unpackRefs(root string, packed string) (map[string]store.Ref, bool) {
	if len(packed) < 2 || packed[0] != refsFormat {
		return nil, false
	}
	s := packed[1:]
	bad := false
	uv := func() uint64 {
		// The conversion of at most MaxVarintLen64 bytes does not escape:
		// it is made on the stack.
		x, n := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
		if n <= 0 {
			bad = true
			return 0
		}
		s = s[n:]
		return x
	}
	str := func() string {
		n := uv()
		if bad || n > uint64(len(s)) {
			bad = true
			return ""
		}
		v := s[:n]
		s = s[n:]
		return v
	}
	byt := func() byte {
		if bad || len(s) == 0 {
			bad = true
			return 0
		}
		c := s[0]
		s = s[1:]
		return c
	}
	count := uv()
	if bad || count > uint64(len(s)/6) { // a ref takes 6 bytes at least
		return nil, false
	}
	out := make(map[string]store.Ref, count)
	// The directories below root are made in one buffer: a string taken
	// from a Builder stays valid as it grows, and it has room for all.
	var dirs strings.Builder
	dirs.Grow(int(count) * (len(root) + 48))
	for i := uint64(0); i < count && !bad; i++ {
		var dir string
		switch byt() {
		case 0:
			rest := str()
			start := dirs.Len()
			dirs.WriteString(root)
			dirs.WriteString(rest)
			dir = dirs.String()[start:]
		case 1:
			dir = str()
		default:
			bad = true
		}
		r := store.Ref{Fingerprint: str(), Key: str(), Name: str()}
		r.Valid = byt() == 1
		if !r.Valid {
			r.Diagnostics = json.RawMessage(str())
		}
		out[dir] = r
	}
	if bad || len(s) != 0 {
		return nil, false
	}
	return out, true
}
