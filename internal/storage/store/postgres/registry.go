package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// Refs implements [store.Store].
func (s *DB) Refs(ctx context.Context, root string) (map[string]store.Ref, error) {
	refs, err := queryRefs(ctx, s.pool, txt(root))
	if err != nil {
		return nil, fmt.Errorf("refs of %s: %w", root, err)
	}
	return refs, nil
}

// queryRefs reads the refs of the root whose encoded path (txt) is root.
func queryRefs(ctx context.Context, q querier, root string) (map[string]store.Ref, error) {
	rows, err := q.Query(ctx, `SELECT dir, fingerprint, key, name, valid,
			CASE WHEN valid THEN NULL ELSE diagnostics END
		FROM versions WHERE root = $1 AND current`, root)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]store.Ref{}
	for rows.Next() {
		var r store.Ref
		var dir string
		var diags *string
		if err := rows.Scan(&dir, &r.Fingerprint, &r.Key, &r.Name, &r.Valid, &diags); err != nil {
			return nil, err
		}
		if diags != nil {
			r.Diagnostics = json.RawMessage(untxt(*diags))
		}
		r.Fingerprint, r.Key, r.Name = untxt(r.Fingerprint), untxt(r.Key), untxt(r.Name)
		out[untxt(dir)] = r
	}
	return out, rows.Err()
}

// ApplyScans implements [store.Store].
func (s *DB) ApplyScans(ctx context.Context, scans []store.RootScan) error {
	roots := make([]string, 0, len(scans))
	for _, sc := range scans {
		roots = append(roots, sc.Root)
	}
	w, err := s.beginScan(ctx, roots, true)
	if err != nil {
		return err
	}
	for _, sc := range scans {
		if err := w.Root(ctx, sc); err != nil {
			w.Rollback()
			return err
		}
	}
	return w.Commit()
}

// BeginScan implements [store.ScanStreamer].
func (s *DB) BeginScan(ctx context.Context, roots []string) (store.ScanWriter, error) {
	return s.beginScan(ctx, roots, true)
}

// ApplyRoot implements [store.RootApplier].
func (s *DB) ApplyRoot(ctx context.Context, sc store.RootScan) error {
	w, err := s.beginScan(ctx, nil, false)
	if err != nil {
		return err
	}
	if err := w.Root(ctx, sc); err != nil {
		w.Rollback()
		return err
	}
	return w.Commit()
}

// beginScan starts a scan of roots under the scan lock, so that scans by
// several processes apply one after the other; with forget, the roots not
// among them are forgotten (but the root of store.ScopeImported).
func (s *DB) beginScan(ctx context.Context, roots []string, forget bool) (*scanWriter, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin scan: %w", err)
	}
	if err := lock(ctx, tx, lockScan); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("begin scan: %w", err)
	}
	var forgot int64
	if forget {
		tag, err := tx.Exec(ctx, `DELETE FROM roots WHERE scope != $1 AND NOT (path = ANY($2))`, store.ScopeImported, txts(roots))
		if err != nil {
			tx.Rollback(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("forget old roots: %w", err)
		}
		forgot = tag.RowsAffected()
	}
	return &scanWriter{tx: tx, now: s.Now().UnixNano(), roots: roots, changed: forgot > 0, keepRoots: !forget}, nil
}

// scanWriter is the transaction of one scan (store.ScanWriter).
type scanWriter struct {
	tx  pgx.Tx
	now int64
	// root is the root being recorded; prev its current versions before
	// its upserts, read at the first one.
	root string
	prev map[string]current
	args []any
	// roots are the scan's (BeginScan's); the scan cache records of the
	// others go with the commit, unless keepRoots (ApplyRoot).
	roots     []string
	keepRoots bool
	// changed says the scan changed what the registry serves: the commit
	// then bumps the registry generation.
	changed bool
}

// current is what an upsert needs to know of a directory's current version.
type current struct {
	id      int64
	digest  string
	enabled bool
}

// upsertBatch is how many versions one statement writes.
const upsertBatch = 64

// Root implements [store.ScanWriter].
func (w *scanWriter) Root(ctx context.Context, sc store.RootScan) error {
	w.root, w.prev = sc.Root, nil
	if err := w.rootScan(ctx, sc); err != nil {
		return fmt.Errorf("apply scan of %s: %w", sc.Root, err)
	}
	return w.Upsert(ctx, sc.Upserts)
}

func (w *scanWriter) rootScan(ctx context.Context, sc store.RootScan) error {
	// A root whose scope or position changed changes precedence; one
	// whose trust changed changes what agents are shown of its skills.
	var scope, was string
	var pos int
	trust := cmpOr(sc.Trust, "imported")
	switch err := w.tx.QueryRow(ctx, `SELECT scope, trust, position FROM roots WHERE path = $1`, txt(sc.Root)).Scan(&scope, &was, &pos); {
	case err == nil:
		if untxt(scope) != sc.Scope || pos != sc.Position || untxt(was) != trust {
			w.changed = true
		}
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	notes, _ := json.Marshal(nonNil(sc.Notes))
	if _, err := w.tx.Exec(ctx, `INSERT INTO roots (path, scope, trust, position, last_scan, notes) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (path) DO UPDATE SET scope = excluded.scope, trust = excluded.trust, position = excluded.position, last_scan = excluded.last_scan, notes = excluded.notes`,
		txt(sc.Root), txt(sc.Scope), txt(trust), sc.Position, w.now, txt(string(notes))); err != nil {
		return err
	}
	if len(sc.Gone) > 0 {
		tag, err := w.tx.Exec(ctx, `DELETE FROM versions WHERE dir = ANY($1)`, txts(sc.Gone))
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			w.changed = true
		}
	}
	return nil
}

// Upsert implements [store.ScanWriter].
func (w *scanWriter) Upsert(ctx context.Context, vs []store.Version) error {
	if len(vs) == 0 {
		return nil
	}
	if err := w.upsert(ctx, vs); err != nil {
		return fmt.Errorf("apply scan of %s: %w", w.root, err)
	}
	w.changed = true
	return nil
}

func (w *scanWriter) upsert(ctx context.Context, vs []store.Version) error {
	if w.prev == nil {
		// One query for the current versions of the root, not one per skill.
		w.prev = map[string]current{}
		rows, err := w.tx.Query(ctx, `SELECT id, dir, digest, enabled FROM versions WHERE root = $1 AND current`, txt(w.root))
		if err != nil {
			return err
		}
		for rows.Next() {
			var c current
			var dir string
			if err := rows.Scan(&c.id, &dir, &c.digest, &c.enabled); err != nil {
				rows.Close()
				return err
			}
			c.digest = untxt(c.digest)
			w.prev[untxt(dir)] = c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	for start := 0; start < len(vs); start += upsertBatch {
		end := min(start+upsertBatch, len(vs))
		if err := w.upsertRows(ctx, vs[start:end]); err != nil {
			return fmt.Errorf("record skills %s…: %w", vs[start].Dir, err)
		}
	}
	return nil
}

// upsertRows writes at most upsertBatch versions in one statement.
func (w *scanWriter) upsertRows(ctx context.Context, vs []store.Version) error {
	// Retire replaced versions first: the partial unique index allows one
	// current version per directory.
	enabled := make([]bool, len(vs))
	var retire []int64
	for i, v := range vs {
		enabled[i] = true
		if p, ok := w.prev[v.Dir]; ok {
			enabled[i] = p.enabled
			if p.digest != v.Digest {
				retire = append(retire, p.id)
			}
		}
	}
	if len(retire) > 0 {
		if _, err := w.tx.Exec(ctx, `UPDATE versions SET current = false, last_seen = $1 WHERE id = ANY($2)`, w.now, retire); err != nil {
			return err
		}
	}
	args := w.args[:0]
	for i, v := range vs {
		inv, _ := json.Marshal(nonNil(v.InvokableBy))
		args = append(args, txt(v.Key), txt(v.Name), txt(v.Description), txt(v.Category), txt(v.Version), v.Tier, txt(string(inv)),
			txt(w.root), txt(v.Dir), txt(v.Rel), txt(v.File), txt(v.Digest), txt(v.Fingerprint), v.Valid, enabled[i],
			nullTxt(v.Frontmatter), txt(jsonOr(v.Diagnostics, "[]")), nullTxt(v.Files), w.now, w.now)
	}
	w.args = args
	_, err := w.tx.Exec(ctx, upsertSQL(len(vs)), args...)
	return err
}

// upsertSQL is the insert-or-update of n versions in one statement.
func upsertSQL(n int) string {
	const cols = 20
	var b strings.Builder
	b.WriteString(`INSERT INTO versions
		(key, name, description, category, version, tier, invokable_by, root, dir, rel, file, digest, fingerprint,
		 valid, enabled, frontmatter, diagnostics, files, first_seen, last_seen, current) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := 1; c <= cols; c++ {
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(i*cols + c))
			b.WriteString(", ")
		}
		b.WriteString("true)")
	}
	b.WriteString(` ON CONFLICT (dir, digest) DO UPDATE SET
			key = excluded.key, name = excluded.name, description = excluded.description,
			category = excluded.category, version = excluded.version, tier = excluded.tier,
			invokable_by = excluded.invokable_by, root = excluded.root, rel = excluded.rel,
			file = excluded.file, fingerprint = excluded.fingerprint, valid = excluded.valid,
			frontmatter = excluded.frontmatter, diagnostics = excluded.diagnostics,
			files = excluded.files, current = true, last_seen = excluded.last_seen`)
	return b.String()
}

// Commit implements [store.ScanWriter].
func (w *scanWriter) Commit() error {
	ctx := context.Background()
	if w.changed {
		if err := bumpRegistry(ctx, w.tx); err != nil {
			w.Rollback()
			return err
		}
	}
	if !w.keepRoots {
		// The scan cache records of roots no longer configured go with
		// the scan that dropped them.
		if _, err := w.tx.Exec(ctx, `DELETE FROM scan_cache WHERE NOT (root = ANY($1))`, txts(w.roots)); err != nil {
			w.Rollback()
			return fmt.Errorf("scan cache: %w", err)
		}
	}
	if err := w.tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit scan: %w", err)
	}
	return nil
}

// Rollback implements [store.ScanWriter].
func (w *scanWriter) Rollback() error {
	return w.tx.Rollback(context.Background())
}

// Versions implements [store.Store].
func (s *DB) Versions(ctx context.Context, f store.Filter) ([]store.Version, error) {
	if f.Summary {
		return s.summaries(ctx)
	}
	var out []store.Version
	err := s.EachVersion(ctx, f, func(v store.Version) error {
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachVersion implements [store.VersionStreamer]. Filter.Summary is
// ignored (Brief applies).
func (s *DB) EachVersion(ctx context.Context, f store.Filter, fn func(store.Version) error) error {
	bulky := `v.frontmatter, v.diagnostics, v.files`
	if f.Brief || f.Summary {
		bulky = `NULL, CASE WHEN v.valid THEN '[]' ELSE v.diagnostics END, NULL`
	}
	q := `SELECT v.id, v.key, v.name, v.description, v.category, v.version, v.tier, v.invokable_by,
			v.root, r.scope, r.trust, v.dir, v.rel, v.file, v.digest, v.fingerprint, v.valid, v.enabled,
			` + bulky + `, v.current, v.first_seen,
			CASE WHEN v.current THEN r.last_scan ELSE v.last_seen END
		FROM versions v JOIN roots r ON r.path = v.root WHERE true`
	var args []any
	if !f.History {
		q += ` AND v.current`
	}
	for _, c := range []struct{ col, val string }{{"v.key", f.Key}, {"v.name", f.Name}, {"v.dir", f.Dir}, {"v.category", f.Category}, {"r.scope", f.Scope}, {"r.trust", f.Trust}} {
		if c.val != "" {
			args = append(args, txt(c.val))
			q += ` AND ` + c.col + ` = $` + strconv.Itoa(len(args))
		}
	}
	q += ` ORDER BY v.key, r.position, v.dir, v.first_seen`
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("query versions: %w", err)
	}
	defer rows.Close()
	// Invokable_by lists repeat across skills: each distinct one is decoded
	// once and shared (callers never modify them).
	invs := map[string][]string{}
	for rows.Next() {
		var v store.Version
		var inv, diags string
		var fm, files *string
		var first, last int64
		if err := rows.Scan(&v.ID, &v.Key, &v.Name, &v.Description, &v.Category, &v.Version, &v.Tier, &inv,
			&v.Root, &v.Scope, &v.Trust, &v.Dir, &v.Rel, &v.File, &v.Digest, &v.Fingerprint, &v.Valid, &v.Enabled,
			&fm, &diags, &files, &v.Current, &first, &last); err != nil {
			return fmt.Errorf("query versions: %w", err)
		}
		for _, p := range []*string{&v.Key, &v.Name, &v.Description, &v.Category, &v.Version, &v.Root, &v.Scope, &v.Trust,
			&v.Dir, &v.Rel, &v.File, &v.Digest, &v.Fingerprint, &inv, &diags} {
			*p = untxt(*p)
		}
		if shared, ok := invs[inv]; ok {
			v.InvokableBy = shared
		} else {
			if err := json.Unmarshal([]byte(inv), &v.InvokableBy); err != nil {
				return fmt.Errorf("version %d: invokable_by: %w", v.ID, err)
			}
			if len(invs) < 64 {
				invs[inv] = slices.Clip(v.InvokableBy)
			}
		}
		if fm != nil {
			v.Frontmatter = json.RawMessage(untxt(*fm))
		}
		if files != nil {
			v.Files = json.RawMessage(untxt(*files))
		}
		v.Diagnostics = json.RawMessage(diags)
		v.FirstSeen, v.LastSeen = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		if err := fn(v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query versions: %w", err)
	}
	return nil
}

// summaries is Versions with Filter.Summary: current versions, few columns.
func (s *DB) summaries(ctx context.Context) ([]store.Version, error) {
	rows, err := s.pool.Query(ctx, `SELECT v.key, v.name, v.root, r.scope, r.trust, v.dir, v.rel, v.valid, v.enabled,
			CASE WHEN v.valid THEN '[]' ELSE v.diagnostics END
		FROM versions v JOIN roots r ON r.path = v.root WHERE v.current
		ORDER BY v.key, r.position, v.dir, v.first_seen`)
	if err != nil {
		return nil, fmt.Errorf("query versions: %w", err)
	}
	defer rows.Close()
	var out []store.Version
	for rows.Next() {
		var v store.Version
		var diags string
		if err := rows.Scan(&v.Key, &v.Name, &v.Root, &v.Scope, &v.Trust, &v.Dir, &v.Rel, &v.Valid, &v.Enabled, &diags); err != nil {
			return nil, fmt.Errorf("query versions: %w", err)
		}
		for _, p := range []*string{&v.Key, &v.Name, &v.Root, &v.Scope, &v.Trust, &v.Dir, &v.Rel, &diags} {
			*p = untxt(*p)
		}
		v.Current = true
		v.Diagnostics = json.RawMessage(diags)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query versions: %w", err)
	}
	return out, nil
}

// SetEnabled implements [store.Store]. The registry generation is bumped
// when a version's state changed.
func (s *DB) SetEnabled(ctx context.Context, key string, enabled bool) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE versions SET enabled = $1 WHERE key = $2 AND current AND enabled != $1`, enabled, txt(key))
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			return bumpRegistry(ctx, tx)
		}
		var found bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM versions WHERE key = $1 AND current)`, txt(key)).Scan(&found); err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("skill %q: %w", key, store.ErrNotFound)
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("set enabled %s: %w", key, err)
	}
	return err
}

// Roots implements [store.Store].
func (s *DB) Roots(ctx context.Context) ([]store.Root, error) {
	rows, err := s.pool.Query(ctx, `SELECT path, scope, trust, position, last_scan, notes FROM roots ORDER BY position`)
	if err != nil {
		return nil, fmt.Errorf("query roots: %w", err)
	}
	defer rows.Close()
	var out []store.Root
	for rows.Next() {
		var r store.Root
		var last int64
		var notes string
		if err := rows.Scan(&r.Path, &r.Scope, &r.Trust, &r.Position, &last, &notes); err != nil {
			return nil, fmt.Errorf("query roots: %w", err)
		}
		r.Path, r.Scope, r.Trust = untxt(r.Path), untxt(r.Scope), untxt(r.Trust)
		r.LastScan = time.Unix(0, last).UTC()
		if err := json.Unmarshal([]byte(untxt(notes)), &r.Notes); err != nil {
			return nil, fmt.Errorf("root %s notes: %w", r.Path, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query roots: %w", err)
	}
	return out, nil
}

// RegistryGeneration implements [store.Store]: one row, bumped in the
// transaction of every change of what the registry serves, so every
// process sees the changes of the others.
func (s *DB) RegistryGeneration(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT n FROM registry_generation WHERE id = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("registry generation: %w", err)
	}
	return n, nil
}

// bumpRegistry increases the registry generation inside tx.
func bumpRegistry(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `UPDATE registry_generation SET n = n + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("registry generation: %w", err)
	}
	return nil
}
