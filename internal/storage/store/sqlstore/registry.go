package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// Refs implements [store.Store].
func (s *DB) Refs(ctx context.Context, root string) (map[string]store.Ref, error) {
	refs, err := QueryRefs(ctx, s.d, s.db, root)
	if err != nil {
		return nil, fmt.Errorf("refs of %s: %w", root, err)
	}
	return refs, nil
}

// QueryRefs reads the refs of root from the versions table, through q in
// dialect d: what [DB.Refs] returns, for a driver that keeps them also
// another way.
func QueryRefs(ctx context.Context, d Dialect, q Querier, root string) (map[string]store.Ref, error) {
	rows, err := q.QueryContext(ctx, d.Rebind(`SELECT dir, fingerprint, key, name, valid,
			CASE WHEN valid = TRUE THEN NULL ELSE diagnostics END
		FROM versions WHERE root = ? AND current = TRUE`), d.EncodeText(root))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]store.Ref{}
	for rows.Next() {
		var r store.Ref
		var dir string
		var diags sql.NullString
		if err := rows.Scan(&dir, &r.Fingerprint, &r.Key, &r.Name, &r.Valid, &diags); err != nil {
			return nil, err
		}
		if diags.Valid {
			r.Diagnostics = json.RawMessage(d.DecodeText(diags.String))
		}
		r.Fingerprint, r.Key, r.Name = d.DecodeText(r.Fingerprint), d.DecodeText(r.Key), d.DecodeText(r.Name)
		out[d.DecodeText(dir)] = r
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

// beginScan starts a scan, through the driver's OpenScan when it has one.
func (s *DB) beginScan(ctx context.Context, roots []string, forget bool) (store.ScanWriter, error) {
	if s.openScan != nil {
		return s.openScan(ctx, roots, forget)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin scan: %w", err)
	}
	return s.StartScan(ctx, conn, roots, forget, ScanHooks{})
}

// ScanHooks are what a driver does at the steps of a scan (see
// [DB.StartScan]); each may be nil.
type ScanHooks struct {
	// RootDone is called, inside the scan's transaction, when the versions
	// of one root are written, with what its scan changed.
	RootDone func(ctx context.Context, tx *sql.Tx, rc *RootChanges) error
	// BeforeCommit is called inside the transaction just before it
	// commits, and AfterCommit once it has committed.
	BeforeCommit func(ctx context.Context, tx *sql.Tx) error
	AfterCommit  func()
	// Release is called when the scan ends, committed or not, before its
	// connection goes back to the pool.
	Release func(conn *sql.Conn)
}

// RootChanges is what one root's scan changed, as [ScanHooks.RootDone]
// gets it.
type RootChanges struct {
	Root string
	// Gone are the directories removed.
	Gone []string
	// Upserts are the versions written, in the batches Upsert got; only
	// the fields [store.ScanWriter.Upsert] keeps are read.
	Upserts [][]store.Version
	// PrevEmpty says the root had no current versions besides the gone
	// ones before its upserts (set at the first upsert).
	PrevEmpty bool
}

// StartScan starts the transaction of a scan of roots on conn, which the
// scan owns until it ends (then it is closed), under [LockScan]: scans by
// several processes apply one after the other. With forget, the roots not
// among roots are forgotten (but the root of store.ScopeImported). hooks
// let the driver take part.
func (s *DB) StartScan(ctx context.Context, conn *sql.Conn, roots []string, forget bool, hooks ScanHooks) (*ScanWriter, error) {
	w := &ScanWriter{s: s, conn: conn, hooks: hooks, roots: roots}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		w.release()
		return nil, fmt.Errorf("begin scan: %w", err)
	}
	w.tx = tx
	if err := s.d.Lock(ctx, tx, LockScan); err != nil {
		w.Rollback()
		return nil, fmt.Errorf("begin scan: %w", err)
	}
	if forget {
		encoded := make([]string, len(roots))
		for i, r := range roots {
			encoded[i] = s.d.EncodeText(r)
		}
		// The root of the installs' skills is never configured: scans
		// leave it to ApplyRoot.
		q := `DELETE FROM roots WHERE scope != ?`
		args := []any{store.ScopeImported}
		if len(roots) > 0 || s.d.Arrays() {
			var cond string
			cond, args = in(s.d, "path", encoded, args)
			q += ` AND NOT (` + cond + `)`
		}
		res, err := tx.ExecContext(ctx, s.q(q), args...)
		if err != nil {
			w.Rollback()
			return nil, fmt.Errorf("forget old roots: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			w.changed = true
		}
	}
	w.now = s.Now().UnixNano()
	return w, nil
}

// ScanWriter is the transaction of one scan ([store.ScanWriter]).
type ScanWriter struct {
	s     *DB
	conn  *sql.Conn
	tx    *sql.Tx
	hooks ScanHooks
	now   int64
	roots []string
	// root is the root being recorded; prev its current versions before
	// its upserts, read at the first one.
	root string
	prev map[string]current
	// full is the upsert of a full batch, prepared once.
	full *sql.Stmt
	args []any
	// changes are the current root's, for hooks.RootDone.
	changes *RootChanges
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

// upsertBatch is how many versions one statement writes: one statement per
// row costs a lock round trip each, which dominated cold scans of
// thousands of skills.
const upsertBatch = 64

// Root implements [store.ScanWriter].
func (w *ScanWriter) Root(ctx context.Context, sc store.RootScan) error {
	if err := w.endRoot(ctx); err != nil {
		return err
	}
	w.root, w.prev = sc.Root, nil
	if err := w.rootScan(ctx, sc); err != nil {
		return fmt.Errorf("apply scan of %s: %w", sc.Root, err)
	}
	if w.hooks.RootDone != nil {
		w.changes = &RootChanges{Root: sc.Root, Gone: sc.Gone}
	}
	return w.Upsert(ctx, sc.Upserts)
}

// endRoot hands the current root's changes to the driver.
func (w *ScanWriter) endRoot(ctx context.Context) error {
	rc := w.changes
	w.changes = nil
	if rc == nil {
		return nil
	}
	if err := w.hooks.RootDone(ctx, w.tx, rc); err != nil {
		return fmt.Errorf("apply scan of %s: %w", rc.Root, err)
	}
	return nil
}

func (w *ScanWriter) rootScan(ctx context.Context, sc store.RootScan) error {
	s, d := w.s, w.s.d
	// A root whose scope or position changed changes precedence; one
	// whose trust changed changes what agents are shown of its skills.
	var scope, was string
	var pos int
	trust := cmpOr(sc.Trust, "imported")
	switch err := w.tx.QueryRowContext(ctx, s.q(`SELECT scope, trust, position FROM roots WHERE path = ?`), d.EncodeText(sc.Root)).Scan(&scope, &was, &pos); {
	case err == nil:
		if d.DecodeText(scope) != sc.Scope || pos != sc.Position || d.DecodeText(was) != trust {
			w.changed = true
		}
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	notes, _ := json.Marshal(nonNil(sc.Notes))
	if _, err := w.tx.ExecContext(ctx, s.q(`INSERT INTO roots (path, scope, trust, position, last_scan, notes) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET scope = excluded.scope, trust = excluded.trust, position = excluded.position, last_scan = excluded.last_scan, notes = excluded.notes`),
		d.EncodeText(sc.Root), d.EncodeText(sc.Scope), d.EncodeText(trust), sc.Position, w.now, d.EncodeText(string(notes))); err != nil {
		return err
	}
	return chunks(sc.Gone, func(gone []string) error {
		encoded := make([]string, len(gone))
		for i, g := range gone {
			encoded[i] = d.EncodeText(g)
		}
		cond, args := in(d, "dir", encoded, nil)
		res, err := w.tx.ExecContext(ctx, s.q(`DELETE FROM versions WHERE `+cond), args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			w.changed = true
		}
		return nil
	})
}

// Upsert implements [store.ScanWriter].
func (w *ScanWriter) Upsert(ctx context.Context, vs []store.Version) error {
	if len(vs) == 0 {
		return nil
	}
	if err := w.upsert(ctx, vs); err != nil {
		return fmt.Errorf("apply scan of %s: %w", w.root, err)
	}
	w.changed = true
	if rc := w.changes; rc != nil {
		rc.Upserts = append(rc.Upserts, vs)
		rc.PrevEmpty = len(w.prev) == 0
	}
	return nil
}

func (w *ScanWriter) upsert(ctx context.Context, vs []store.Version) error {
	if w.prev == nil {
		// One query for the current versions of the root, not one per skill.
		d := w.s.d
		w.prev = map[string]current{}
		rows, err := w.tx.QueryContext(ctx, w.s.q(`SELECT id, dir, digest, enabled FROM versions WHERE root = ? AND current = TRUE`), d.EncodeText(w.root))
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
			c.digest = d.DecodeText(c.digest)
			w.prev[d.DecodeText(dir)] = c
		}
		if err := rows.Close(); err != nil {
			return err
		}
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
func (w *ScanWriter) upsertRows(ctx context.Context, vs []store.Version) error {
	s, d := w.s, w.s.d
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
		cond, args := in(d, "id", retire, []any{w.now})
		if _, err := w.tx.ExecContext(ctx, s.q(`UPDATE versions SET current = FALSE, last_seen = ? WHERE `+cond), args...); err != nil {
			return err
		}
	}
	args := w.args[:0]
	for i, v := range vs {
		inv, _ := json.Marshal(nonNil(v.InvokableBy))
		args = append(args, d.EncodeText(v.Key), d.EncodeText(v.Name), d.EncodeText(v.Description), d.EncodeText(v.Category),
			d.EncodeText(v.Version), v.Tier, d.EncodeText(string(inv)), d.EncodeText(w.root), d.EncodeText(v.Dir), d.EncodeText(v.Rel),
			d.EncodeText(v.File), d.EncodeText(v.Digest), d.EncodeText(v.Fingerprint), v.Valid, enabled[i],
			nullText(d, v.Frontmatter), d.EncodeText(jsonOr(v.Diagnostics, "[]")), nullText(d, v.Files), w.now, w.now)
	}
	w.args = args
	if len(vs) < upsertBatch {
		_, err := w.tx.ExecContext(ctx, s.q(upsertSQL(len(vs))), args...)
		return err
	}
	// The statement of a full batch is prepared once: SQLite's parser costs
	// about as much per statement as binding its 1,280 values.
	if w.full == nil {
		st, err := w.tx.PrepareContext(ctx, s.q(upsertSQL(upsertBatch)))
		if err != nil {
			return err
		}
		w.full = st
	}
	_, err := w.full.ExecContext(ctx, args...)
	return err
}

// nullText stores an absent JSON value as NULL, and a present one
// encoded for a text column.
func nullText(d Dialect, b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return d.EncodeText(string(b))
}

// upsertSQL is the insert-or-update of n versions in one statement.
func upsertSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO versions
		(key, name, description, category, version, tier, invokable_by, root, dir, rel, file, digest, fingerprint,
		 valid, enabled, frontmatter, diagnostics, files, current, first_seen, last_seen) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, TRUE, ?, ?)")
	}
	b.WriteString(` ON CONFLICT (dir, digest) DO UPDATE SET
			key = excluded.key, name = excluded.name, description = excluded.description,
			category = excluded.category, version = excluded.version, tier = excluded.tier,
			invokable_by = excluded.invokable_by, root = excluded.root, rel = excluded.rel,
			file = excluded.file, fingerprint = excluded.fingerprint, valid = excluded.valid,
			frontmatter = excluded.frontmatter, diagnostics = excluded.diagnostics,
			files = excluded.files, current = TRUE, last_seen = excluded.last_seen`)
	return b.String()
}

// Commit implements [store.ScanWriter].
func (w *ScanWriter) Commit() error {
	ctx := context.Background()
	if err := w.endRoot(ctx); err != nil {
		w.Rollback()
		return err
	}
	if w.changed {
		if err := w.s.bumpRegistry(ctx, w.tx); err != nil {
			w.Rollback()
			return err
		}
	}
	if w.hooks.BeforeCommit != nil {
		if err := w.hooks.BeforeCommit(ctx, w.tx); err != nil {
			w.Rollback()
			return err
		}
	}
	w.closeStmt()
	err := w.tx.Commit()
	w.release()
	if err != nil {
		return fmt.Errorf("commit scan: %w", err)
	}
	if w.hooks.AfterCommit != nil {
		w.hooks.AfterCommit()
	}
	return nil
}

// Rollback implements [store.ScanWriter].
func (w *ScanWriter) Rollback() error {
	w.closeStmt()
	err := w.tx.Rollback()
	w.release()
	return err
}

// release hands the connection to the driver's Release, then back to the
// pool.
func (w *ScanWriter) release() {
	if w.conn == nil {
		return
	}
	if w.hooks.Release != nil {
		w.hooks.Release(w.conn)
	}
	w.conn.Close()
	w.conn = nil
}

func (w *ScanWriter) closeStmt() {
	if w.full != nil {
		w.full.Close()
		w.full = nil
	}
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
	d := s.d
	bulky := `v.frontmatter, v.diagnostics, v.files`
	if f.Brief || f.Summary {
		bulky = `NULL, CASE WHEN v.valid = TRUE THEN '[]' ELSE v.diagnostics END, NULL`
	}
	q := `SELECT v.id, v.key, v.name, v.description, v.category, v.version, v.tier, v.invokable_by,
			v.root, r.scope, r.trust, v.dir, v.rel, v.file, v.digest, v.fingerprint, v.valid, v.enabled,
			` + bulky + `, v.current, v.first_seen,
			CASE WHEN v.current = TRUE THEN r.last_scan ELSE v.last_seen END
		FROM versions v JOIN roots r ON r.path = v.root WHERE TRUE`
	var args []any
	if !f.History {
		q += ` AND v.current = TRUE`
	}
	for _, c := range []struct{ col, val string }{{"v.key", f.Key}, {"v.name", f.Name}, {"v.dir", f.Dir}, {"v.category", f.Category}, {"r.scope", f.Scope}, {"r.trust", f.Trust}} {
		if c.val != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, d.EncodeText(c.val))
		}
	}
	q += ` ORDER BY v.key, r.position, v.dir, v.first_seen`
	var qr Querier = s.db
	if f.Brief && f.Key == "" && f.Name == "" && f.Dir == "" && s.wholeRead != nil {
		conn, done, err := s.wholeRead(ctx)
		if err != nil {
			return fmt.Errorf("query versions: %w", err)
		}
		defer done()
		qr = conn
	}
	rows, err := qr.QueryContext(ctx, s.q(q), args...)
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
		var fm, files sql.NullString
		var first, last int64
		if err := rows.Scan(&v.ID, &v.Key, &v.Name, &v.Description, &v.Category, &v.Version, &v.Tier, &inv,
			&v.Root, &v.Scope, &v.Trust, &v.Dir, &v.Rel, &v.File, &v.Digest, &v.Fingerprint, &v.Valid, &v.Enabled,
			&fm, &diags, &files, &v.Current, &first, &last); err != nil {
			return fmt.Errorf("query versions: %w", err)
		}
		for _, p := range []*string{&v.Key, &v.Name, &v.Description, &v.Category, &v.Version, &v.Root, &v.Scope, &v.Trust,
			&v.Dir, &v.Rel, &v.File, &v.Digest, &v.Fingerprint, &inv, &diags} {
			*p = d.DecodeText(*p)
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
		if fm.Valid {
			v.Frontmatter = json.RawMessage(d.DecodeText(fm.String))
		}
		if files.Valid {
			v.Files = json.RawMessage(d.DecodeText(files.String))
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
	d := s.d
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT v.key, v.name, v.root, r.scope, r.trust, v.dir, v.rel, v.valid, v.enabled,
			CASE WHEN v.valid = TRUE THEN '[]' ELSE v.diagnostics END
		FROM versions v JOIN roots r ON r.path = v.root WHERE v.current = TRUE
		ORDER BY v.key, r.position, v.dir, v.first_seen`))
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
			*p = d.DecodeText(*p)
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
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE versions SET enabled = ? WHERE key = ? AND current = TRUE AND enabled != ?`), enabled, s.d.EncodeText(key), enabled)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return s.bumpRegistry(ctx, tx)
		}
		var found bool
		if err := tx.QueryRowContext(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM versions WHERE key = ? AND current = TRUE)`), s.d.EncodeText(key)).Scan(&found); err != nil {
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
	d := s.d
	rows, err := s.db.QueryContext(ctx, `SELECT path, scope, trust, position, last_scan, notes FROM roots ORDER BY position`)
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
		r.Path, r.Scope, r.Trust = d.DecodeText(r.Path), d.DecodeText(r.Scope), d.DecodeText(r.Trust)
		r.LastScan = time.Unix(0, last).UTC()
		if err := json.Unmarshal([]byte(d.DecodeText(notes)), &r.Notes); err != nil {
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
// transaction of every change of what the registry serves (current
// versions, their enabled state, the roots' scope and order), so that a
// process holding a catalog built from the store knows, with one read of
// one row, whether it is still current, also after a change another
// process made.
func (s *DB) RegistryGeneration(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT n FROM registry_generation WHERE id = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("registry generation: %w", err)
	}
	return n, nil
}

// bumpRegistry increases the registry generation inside tx.
func (s *DB) bumpRegistry(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `UPDATE registry_generation SET n = n + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("registry generation: %w", err)
	}
	return nil
}
