package vfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/bucket"
)

// Defaults for [Options].
const (
	// DefaultMaxFileSize bounds reads, edits and writes (deepagents'
	// FilesystemBackend uses 10 MB too).
	DefaultMaxFileSize = 10 << 20
	// DefaultMaxGrepMatches bounds the matches one grep returns.
	DefaultMaxGrepMatches = 1000
	// DefaultMaxGrepFiles bounds the files one grep or glob examines.
	DefaultMaxGrepFiles = 50_000
	// DefaultMaxListEntries bounds the entries one ls or glob returns.
	DefaultMaxListEntries = 10_000
	// DefaultGrepWorkers is how many files grep reads at once. Reads from
	// object storage are latency-bound, so this is more than the core count.
	DefaultGrepWorkers = 8
)

// SkillsPath is the directory under which loaded skills appear.
const SkillsPath = "/skills"

// Mount attaches a store (under a key prefix) at a virtual path. /workspace
// is an ordinary read-write Mount; configured extras such as the seed's
// /ticket are Mounts too.
type Mount struct {
	// Path is the canonical virtual path, e.g. "/workspace" or "/ticket".
	// Mounts may nest ("/workspace/shared"): the longest matching Path wins.
	// "/" and anything under /skills are reserved.
	Path string
	// Store holds the files.
	Store blob.Store
	// Prefix is prepended to the path below Path to form the storage key,
	// e.g. "acme/sessions/s1/workspace/". It is "" or ends in "/".
	Prefix string
	// ReadOnly refuses Write and Edit under Path.
	ReadOnly bool
	// Quotas bound what writes under Path may keep, narrowest first (the
	// session's, then its tenant's); see [Quota].
	Quotas []*Quota
}

// SkillMount is one loaded skill: it appears, read-only, at
// /skills/<Name>. Only an exact Name resolves; /skills/<other> reads exactly
// as a missing file does, so an agent cannot learn that an unloaded skill
// exists.
//
// Names are chosen by the session layer, which guarantees they are unique
// within a session (two loaded skills with the same leaf name in different
// categories get different names there); [FS.SetSkills] refuses duplicates
// rather than guess.
type SkillMount struct {
	// Name is the directory name under /skills: one path segment.
	Name string
	// Store holds the skill tree.
	Store blob.Store
	// Prefix is the key prefix of the tree, e.g. from
	// bucket.SkillPrefix(tenant, category, name).
	Prefix string
}

// Options configures an [FS]. Zero values mean the defaults.
type Options struct {
	// Mounts are the session's fixed mounts (/workspace, extras).
	Mounts []Mount
	// Skills are the skills loaded initially; see [FS.SetSkills].
	Skills []SkillMount
	// MaxFileSize bounds the size of a file read, edited or written, and of
	// files grep searches (larger ones are skipped), in bytes.
	MaxFileSize int64
	// MaxGrepMatches bounds the matches returned by one grep.
	MaxGrepMatches int
	// MaxGrepFiles bounds the files one grep or glob examines.
	MaxGrepFiles int
	// MaxListEntries bounds the entries one ls or glob returns.
	MaxListEntries int
	// GrepWorkers is how many files grep reads concurrently.
	GrepWorkers int
	// Logger receives storage failures (with their causes, which agents never
	// see). Nil discards them.
	Logger *slog.Logger
}

// FS is one session's agent filesystem: a composite of mounts routed by
// longest path prefix, plus the loaded skills under /skills. It is safe for
// concurrent use; [FS.SetSkills] swaps the skill list atomically, and every
// operation sees one consistent mount table.
type FS struct {
	opts    Options
	fixed   []*mount
	tbl     atomic.Pointer[table]
	writeMu sync.Mutex // serialises Write/Edit so create-only and edit are atomic within the session
	log     *slog.Logger
}

// mount is a resolved mount point.
type mount struct {
	path     string
	store    blob.Store
	prefix   string
	readOnly bool
	skill    bool
	quotas   []*Quota
}

// table is an immutable snapshot of the mount points.
type table struct {
	mounts   []*mount // longest path first
	skills   []string // loaded skill names, sorted
	prefixes []string // visible top-level prefixes for the "must start with" message
}

// New returns the filesystem described by opts. It validates every mount
// and skill; the error names the offending one.
func New(opts Options) (*FS, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.MaxGrepMatches <= 0 {
		opts.MaxGrepMatches = DefaultMaxGrepMatches
	}
	if opts.MaxGrepFiles <= 0 {
		opts.MaxGrepFiles = DefaultMaxGrepFiles
	}
	if opts.MaxListEntries <= 0 {
		opts.MaxListEntries = DefaultMaxListEntries
	}
	if opts.GrepWorkers <= 0 {
		opts.GrepWorkers = DefaultGrepWorkers
	}
	f := &FS{opts: opts, log: opts.Logger}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	seen := map[string]bool{}
	for _, m := range opts.Mounts {
		if m.Store == nil {
			return nil, fmt.Errorf("vfs: mount %q: store is nil", m.Path)
		}
		clean, err := CleanPath(m.Path)
		if err != nil || clean != m.Path || !strings.HasPrefix(m.Path, "/") {
			return nil, fmt.Errorf("vfs: mount %q: path must be canonical and absolute (e.g. /workspace)", m.Path)
		}
		if m.Path == "/" || m.Path == SkillsPath || strings.HasPrefix(m.Path, SkillsPath+"/") {
			return nil, fmt.Errorf("vfs: mount %q: path is reserved", m.Path)
		}
		if seen[m.Path] {
			return nil, fmt.Errorf("vfs: mount %q: mounted twice", m.Path)
		}
		seen[m.Path] = true
		if err := blob.ValidatePrefix(m.Prefix); err != nil {
			return nil, fmt.Errorf("vfs: mount %q: prefix: %w", m.Path, err)
		}
		f.fixed = append(f.fixed, &mount{path: m.Path, store: m.Store, prefix: m.Prefix, readOnly: m.ReadOnly, quotas: slices.Clone(m.Quotas)})
	}
	if err := f.SetSkills(opts.Skills); err != nil {
		return nil, err
	}
	return f, nil
}

// WorkspaceMount returns the read-write /workspace mount of one session,
// stored under bucket.WorkspacePrefix(tenant, sessionID).
func WorkspaceMount(store blob.Store, tenant, sessionID string) (Mount, error) {
	prefix, err := bucket.WorkspacePrefix(tenant, sessionID)
	if err != nil {
		return Mount{}, fmt.Errorf("vfs: workspace: %w", err)
	}
	return Mount{Path: "/workspace", Store: store, Prefix: prefix}, nil
}

// SetSkills replaces the loaded skills with skills, atomically: an operation
// in flight sees either the old or the new list, never a mix. The session
// layer calls it on load and unload. It fails, changing nothing, when a name
// is not a single valid segment, appears twice, or a store is nil.
func (f *FS) SetSkills(skills []SkillMount) error {
	t := &table{mounts: slices.Clone(f.fixed)}
	seen := map[string]bool{}
	for _, s := range skills {
		p := SkillsPath + "/" + s.Name
		if clean, err := CleanPath(p); err != nil || clean != p || strings.Contains(s.Name, "/") || s.Name == "" {
			return fmt.Errorf("vfs: skill %q: name must be one path segment", s.Name)
		}
		if s.Store == nil {
			return fmt.Errorf("vfs: skill %q: store is nil", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("vfs: skill %q: loaded twice (the session layer must give each loaded skill a unique name)", s.Name)
		}
		seen[s.Name] = true
		if err := blob.ValidatePrefix(s.Prefix); err != nil {
			return fmt.Errorf("vfs: skill %q: prefix: %w", s.Name, err)
		}
		t.mounts = append(t.mounts, &mount{path: p, store: s.Store, prefix: s.Prefix, readOnly: true, skill: true})
		t.skills = append(t.skills, s.Name)
	}
	slices.Sort(t.skills)
	slices.SortStableFunc(t.mounts, func(a, b *mount) int { return len(b.path) - len(a.path) })
	top := map[string]bool{}
	for _, m := range t.mounts {
		top["/"+firstSegment(m.path[1:])+"/"] = true
	}
	for p := range top {
		t.prefixes = append(t.prefixes, p)
	}
	slices.Sort(t.prefixes)
	f.tbl.Store(t)
	return nil
}

// Skills returns the names of the loaded skills, sorted.
func (f *FS) Skills() []string { return slices.Clone(f.tbl.Load().skills) }

func firstSegment(s string) string {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i]
	}
	return s
}

// location is a resolved virtual path.
type location struct {
	path   string // canonical virtual path
	m      *mount // owning mount; nil for "/", synthesized directories and hidden paths
	rel    string // path below m.path ("" for the mount root)
	hidden bool   // under /skills with no loaded skill: behaves as missing
}

// key returns the storage key of a location with rel != "".
func (l location) key() string { return l.m.prefix + l.rel }

// dirPrefix returns the listing prefix of the location as a directory.
func (l location) dirPrefix() string {
	if l.rel == "" {
		return l.m.prefix
	}
	return l.m.prefix + l.rel + "/"
}

// vpath returns the virtual path of a key relative to the mount's prefix.
func (m *mount) vpath(key string) string { return m.path + "/" + key[len(m.prefix):] }

// under reports whether p is strictly below dir ("/" contains everything).
func under(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// resolve validates p and finds what it names. Paths outside every mount
// are refused; paths under /skills never are (they read as missing).
func (f *FS) resolve(t *table, p string) (location, error) {
	clean, err := CleanPath(p)
	if err != nil {
		return location{}, err
	}
	for _, m := range t.mounts {
		if clean == m.path {
			return location{path: clean, m: m}, nil
		}
		if under(clean, m.path) {
			loc := location{path: clean, m: m, rel: clean[len(m.path)+1:]}
			if err := blob.ValidateKey(loc.key()); err != nil {
				return location{}, newErr(ErrInvalidPath, "Error: Path is too long for storage: %s", clean)
			}
			return loc, nil
		}
	}
	if clean == "/" {
		return location{path: clean}, nil
	}
	for _, m := range t.mounts {
		if under(m.path, clean) {
			return location{path: clean}, nil // a directory above a mount
		}
	}
	if clean == SkillsPath || under(clean, SkillsPath) {
		return location{path: clean, hidden: true}, nil
	}
	return location{}, errOutside(clean, t.prefixes)
}

// storeErr turns a blob error met while handling the virtual path p into the
// agent-facing error. verb is "reading", "writing" or "editing".
func (f *FS) storeErr(verb, p string, err error) *Error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The caller gave up: not a storage fault, not logged.
		e := newErr(ErrIO, "Error %s file '%s': request canceled", verb, p)
		e.Err = err
		return e
	case errors.Is(err, blob.ErrNotFound):
		return errNotFound(p)
	case errors.Is(err, blob.ErrEscape):
		return errEscape(p)
	case errors.Is(err, blob.ErrInvalidKey):
		return newErr(ErrInvalidPath, "Error: Path is not a valid storage name: %s", p)
	}
	f.log.Error("vfs: storage error", "op", verb, "path", p, "err", err)
	return errIO(verb, p, err)
}
