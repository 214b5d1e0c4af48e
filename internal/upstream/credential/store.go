package credential

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"filippo.io/age"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/atomicfile"
	"github.com/skillgate/skillgate/internal/platform/fileinfo"
)

// Options configures [Open].
type Options struct {
	// Identity is an age X25519 identity ("AGE-SECRET-KEY-1…"). When
	// empty the key file DATA/credentials.key is used, created with mode
	// 0600 the first time a credential is set. skillgate passes
	// SKILLGATE_CREDENTIAL_KEY here.
	Identity string
	// IdentitySource names where Identity came from, for errors
	// ("SKILLGATE_CREDENTIAL_KEY"); default "the supplied identity".
	IdentitySource string
	// Environ is the last step of resolution: the process environment.
	// An empty value counts as unset. Nil means no fallback.
	Environ func(name string) string
	// FromEnvironment names the only variables Environ may answer: those
	// the operator listed in the configuration
	// (credentials.from_environment). Any other name resolves from the
	// store or not at all, so that a skill cannot ask for PGPASSWORD or
	// AWS_SECRET_ACCESS_KEY just because skillgate happens to run with it.
	FromEnvironment []string
	// Shared, when set, keeps the encrypted store as the shared file
	// [StoreFile] there (the PostgreSQL store: every process on it sees
	// the same credentials) instead of in the data directory. The key is
	// still Identity or the key file: every process needs the same one.
	Shared SharedFile
	// Now is the clock that stamps connections' created and refreshed
	// times; nil means time.Now.
	Now func() time.Time
}

// SharedFile is a document kept in storage that several processes, on
// several hosts, share; store/postgres implements it. Revisions increase
// with every write; a document never written reads as (nil, 0).
type SharedFile interface {
	// ReadFile returns the content and revision of the document name.
	ReadFile(ctx context.Context, name string) ([]byte, int64, error)
	// FileRevision returns the revision of the document name: a cheap
	// read, to notice a change.
	FileRevision(ctx context.Context, name string) (int64, error)
	// UpdateFile replaces the document name with what change returns for
	// its content, atomically against concurrent updates in any process;
	// change's error aborts it and is returned wrapped.
	UpdateFile(ctx context.Context, name string, change func(old []byte) ([]byte, error)) (int64, error)
}

// Store is the credential store of one data directory. Lookups read an
// in-memory snapshot and do no I/O; [Store.Reload] brings the snapshot up
// to date with the file when another process changed it. It is safe for
// concurrent use.
type Store struct {
	dir      string
	path     string
	opts     Options
	identity *age.X25519Identity // nil until the key file exists

	mu    sync.Mutex // serialises reloads and writes within the process
	stamp fileStamp
	rev   int64 // the shared file's revision as loaded (Options.Shared)
	snap  atomic.Pointer[snapshot]
}

// snapshot is one immutable view of the store.
type snapshot struct {
	gen uint64
	c   *contents
}

// fileStamp identifies one version of the store file cheaply.
type fileStamp struct {
	info  os.FileInfo
	mtime time.Time
	size  int64
}

func (a fileStamp) same(b fileStamp) bool {
	if a.info == nil || b.info == nil {
		return a.info == nil && b.info == nil
	}
	return os.SameFile(a.info, b.info) && a.mtime.Equal(b.mtime) && a.size == b.size
}

// Open opens the credential store of dir, creating dir (mode 0700) if
// needed, and reads it. A store file that cannot be decrypted with the
// identity, or whose content is not a valid store, is an error wrapping
// [ErrUnreadable] that names the file; a missing or unsafe key is an error
// wrapping [ErrKey].
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("credential store: %w", err)
	}
	s := &Store{dir: dir, path: filepath.Join(dir, StoreFile), opts: opts}
	if opts.Shared != nil {
		s.path = "shared " + StoreFile
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	if s.opts.IdentitySource == "" {
		s.opts.IdentitySource = "the supplied identity"
	}
	if err := s.loadIdentity(false); err != nil {
		return nil, err
	}
	s.snap.Store(&snapshot{c: newContents()})
	if _, err := s.Reload(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the store file's path ("shared credentials.age" when it is kept
// in shared storage).
func (s *Store) Path() string { return s.path }

// loadIdentity parses Options.Identity or reads the key file; with create
// set, a missing key file is created.
func (s *Store) loadIdentity(create bool) error {
	if s.identity != nil {
		return nil
	}
	if s.opts.Identity != "" {
		id, err := age.ParseX25519Identity(strings.TrimSpace(s.opts.Identity))
		if err != nil {
			return fmt.Errorf("%w: %s is not an age X25519 identity (AGE-SECRET-KEY-1…); generate one with skillgate credential keygen --out FILE or unset it to use %s", ErrKey, s.opts.IdentitySource, filepath.Join(s.dir, KeyFile))
		}
		s.identity = id
		return nil
	}
	keyPath := filepath.Join(s.dir, KeyFile)
	b, err := fileinfo.ReadRegular(keyPath, 4096)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
		id, err := newKey(keyPath)
		if err != nil {
			return err
		}
		s.identity = id
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return nil // created by the first Set
	case err != nil:
		return fmt.Errorf("%w: %w", ErrKey, err)
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(keyPath); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("%w: %s is readable by other users (mode %04o); run: chmod 600 %s", ErrKey, keyPath, fi.Mode().Perm(), keyPath)
		}
	}
	id, err := age.ParseX25519Identity(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("%w: %s does not hold an age X25519 identity; restore the key file that encrypted %s", ErrKey, keyPath, s.path)
	}
	s.identity = id
	return nil
}

// Reload re-reads the store file when it changed since the last read (a
// stat when it did not) and reports whether it did. A store that cannot be
// read keeps the previous snapshot and returns the error.
func (s *Store) Reload(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reloadLocked()
}

func (s *Store) reloadLocked() (bool, error) {
	if sh := s.opts.Shared; sh != nil {
		rev, err := sh.FileRevision(context.Background(), StoreFile)
		if err != nil {
			return false, fmt.Errorf("credential store: %w", err)
		}
		if rev == s.rev {
			return false, nil
		}
		b, rev, err := sh.ReadFile(context.Background(), StoreFile)
		if err != nil {
			return false, fmt.Errorf("credential store: %w", err)
		}
		c, err := s.decrypt(b)
		if err != nil {
			return false, err
		}
		s.rev = rev
		s.snap.Store(&snapshot{gen: s.snap.Load().gen + 1, c: c})
		return true, nil
	}
	st, err := s.statFile()
	if err != nil {
		return false, err
	}
	if st.same(s.stamp) {
		return false, nil
	}
	c, err := s.read()
	if err != nil {
		return false, err
	}
	s.stamp = st
	s.snap.Store(&snapshot{gen: s.snap.Load().gen + 1, c: c})
	return true, nil
}

func (s *Store) statFile() (fileStamp, error) {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, fmt.Errorf("credential store: %w", err)
	}
	return fileStamp{info: fi, mtime: fi.ModTime(), size: fi.Size()}, nil
}

// read decrypts and parses the store file; a missing file is the empty
// store.
func (s *Store) read() (*contents, error) {
	b, err := fileinfo.ReadRegular(s.path, MaxStoreBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return newContents(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	return s.decrypt(b)
}

// decrypt decrypts and parses the store's content b; empty content is the
// empty store.
func (s *Store) decrypt(b []byte) (*contents, error) {
	if len(b) == 0 {
		return newContents(), nil
	}
	if err := s.loadIdentity(false); err != nil {
		return nil, err
	}
	if s.identity == nil {
		return nil, fmt.Errorf("%w: %s exists but there is no key to decrypt it: restore %s, or set SKILLGATE_CREDENTIAL_KEY to the identity that encrypted it", ErrKey, s.path, filepath.Join(s.dir, KeyFile))
	}
	r, err := age.Decrypt(bytes.NewReader(b), s.identity)
	if err != nil {
		var nomatch *age.NoIdentityMatchError
		if errors.As(err, &nomatch) {
			return nil, fmt.Errorf("%w: %s was encrypted with another key than %s: restore the key that encrypted it (or set SKILLGATE_CREDENTIAL_KEY to it); to start over, move the file away and set the credentials again", ErrUnreadable, s.path, s.keyName())
		}
		return nil, fmt.Errorf("%w: %s is corrupted (%v): restore it from a backup, or move it away and set the credentials again; skillgate will not overwrite it", ErrUnreadable, s.path, err)
	}
	plain, err := io.ReadAll(io.LimitReader(r, MaxStoreBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s is corrupted (%v): restore it from a backup, or move it away and set the credentials again; skillgate will not overwrite it", ErrUnreadable, s.path, err)
	}
	t, err := decode(plain)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v: restore it from a backup, or move it away and set the credentials again; skillgate will not overwrite it", ErrUnreadable, s.path, err)
	}
	return t, nil
}

func (s *Store) keyName() string {
	if s.opts.Identity != "" {
		return s.opts.IdentitySource
	}
	return filepath.Join(s.dir, KeyFile)
}

// Set stores value as name for scope, replacing an entry with the same name
// and scope. It re-reads the file under the cross-process lock, so an entry
// another process set meanwhile is kept; an unreadable store is refused,
// never overwritten.
func (s *Store) Set(ctx context.Context, name string, scope Scope, value string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := scope.Check(); err != nil {
		return err
	}
	if err := checkValue(value); err != nil {
		return err
	}
	return s.update(ctx, func(c *contents) error {
		t := c.creds
		if _, ok := t[entryKey{name, scope.Tenant, scope.Agent}]; !ok && len(t) >= MaxEntries {
			return fmt.Errorf("credential store: %d entries; the limit is %d (remove some with skillgate credential rm)", len(t), MaxEntries)
		}
		t[entryKey{name, scope.Tenant, scope.Agent}] = value
		return nil
	})
}

// Remove deletes the entry name of scope; an absent entry is
// [ErrNotFound].
func (s *Store) Remove(ctx context.Context, name string, scope Scope) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := scope.Check(); err != nil {
		return err
	}
	return s.update(ctx, func(c *contents) error {
		t := c.creds
		k := entryKey{name, scope.Tenant, scope.Agent}
		if _, ok := t[k]; !ok {
			return fmt.Errorf("%w: no %s for %s (list them with skillgate credential ls)", ErrNotFound, name, scope)
		}
		delete(t, k)
		return nil
	})
}

// update applies change to the store's current content under the
// cross-process lock and writes the result atomically.
func (s *Store) update(ctx context.Context, change func(*contents) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.Shared != nil {
		return s.updateShared(ctx, change)
	}
	lock, err := os.OpenFile(filepath.Join(s.dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("credential store lock: %w", err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return fmt.Errorf("credential store lock: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.loadIdentity(true); err != nil {
		return err
	}
	c, err := s.read()
	if err != nil {
		return err
	}
	if err := change(c); err != nil {
		return err
	}
	sealed, err := s.encrypt(c)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.path, sealed, 0o600); err != nil {
		return fmt.Errorf("credential store: writing %s: %w", s.path, err)
	}
	// The snapshot follows the file now; the stamp is the new file's.
	if st, err := s.statFile(); err == nil {
		s.stamp = st
	}
	s.snap.Store(&snapshot{gen: s.snap.Load().gen + 1, c: c})
	return nil
}

// updateShared is update on Options.Shared: the shared file is read,
// changed and written in one transaction of the shared storage.
func (s *Store) updateShared(ctx context.Context, change func(*contents) error) error {
	if err := s.loadIdentity(true); err != nil {
		return err
	}
	var next *contents
	var refused error // the change's own error, returned as it is
	rev, err := s.opts.Shared.UpdateFile(ctx, StoreFile, func(old []byte) ([]byte, error) {
		c, err := s.decrypt(old)
		if err == nil {
			err = change(c)
		}
		if err != nil {
			refused = err
			return nil, err
		}
		next = c
		return s.encrypt(c)
	})
	if refused != nil {
		return refused
	}
	if err != nil {
		return fmt.Errorf("credential store: %w", err)
	}
	s.rev = rev
	s.snap.Store(&snapshot{gen: s.snap.Load().gen + 1, c: next})
	return nil
}

// encrypt encodes c and encrypts it to the store's identity. A document
// larger than MaxStoreBytes is refused: it could not be read back.
func (s *Store) encrypt(c *contents) ([]byte, error) {
	plain, err := c.encode()
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	if len(plain) > MaxStoreBytes {
		return nil, fmt.Errorf("credential store: the document would be %d bytes; the limit is %d (remove some credentials or connections)", len(plain), MaxStoreBytes)
	}
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, s.identity.Recipient())
	if err != nil {
		return nil, fmt.Errorf("credential store: encrypting: %w", err)
	}
	if _, err := w.Write(plain); err != nil {
		return nil, fmt.Errorf("credential store: encrypting: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("credential store: encrypting: %w", err)
	}
	return buf.Bytes(), nil
}

// List returns the names and scopes of every entry, sorted by tenant,
// agent and name, after reloading a changed file; never a value.
func (s *Store) List(ctx context.Context) ([]Entry, error) {
	if _, err := s.Reload(ctx); err != nil {
		return nil, err
	}
	return s.snap.Load().c.creds.entries(), nil
}

// Generation changes whenever the in-memory snapshot does (a reload that
// found a change, or a write). It is an atomic read: callers compare it on
// every call to know when resolutions they cached are stale.
func (s *Store) Generation() uint64 { return s.snap.Load().gen }

// Resolve returns the value name resolves to for p: p's agent entry, else
// p's tenant entry, else the process environment (Options.Environ). It
// reads the in-memory snapshot only.
func (s *Store) Resolve(p capability.Principal, name string) (string, bool) {
	t := s.snap.Load().c.creds
	if v, ok := t[entryKey{name, p.Tenant, p.Agent}]; ok && p.Agent != "" {
		return v, true
	}
	if v, ok := t[entryKey{name, p.Tenant, ""}]; ok {
		return v, true
	}
	return Environment(s.opts.Environ, s.opts.FromEnvironment)(name)
}

// ReservedPrefix starts the names of skillgate's own configuration and
// secrets (SKILLGATE_CREDENTIAL_KEY, the S3 and LLM keys): the environment
// step of resolution never answers them, so a skill's ${SKILLGATE_…}
// cannot read them, and [CheckFromEnvironment] refuses them.
const ReservedPrefix = "SKILLGATE_"

// Environment returns the environment step of resolution over getenv: a
// set, non-empty variable whose name is in allowed (the operator's
// credentials.from_environment), never one starting with
// [ReservedPrefix]. Every other name answers nothing, so skillgate's own
// environment (PGPASSWORD, AWS_SECRET_ACCESS_KEY, …) is not one
// `--credential` away from a third-party server. Nil getenv or an empty
// allowed answers nothing.
func Environment(getenv func(string) string, allowed []string) func(name string) (string, bool) {
	set := make(map[string]bool, len(allowed))
	for _, n := range allowed {
		if !strings.HasPrefix(n, ReservedPrefix) {
			set[n] = true
		}
	}
	return func(name string) (string, bool) {
		if getenv == nil || !set[name] {
			return "", false
		}
		v := getenv(name)
		return v, v != ""
	}
}

// CheckFromEnvironment validates the configuration's
// credentials.from_environment list: each entry a credential name
// ([CheckName]), none of skillgate's own ([ReservedPrefix]), no
// duplicates. field names the list in errors.
func CheckFromEnvironment(field string, names []string) error {
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if err := CheckName(n); err != nil {
			return fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		if strings.HasPrefix(n, ReservedPrefix) {
			return fmt.Errorf("%w: %s[%d]: %s is skillgate's own configuration, never a skill's credential; remove it", ErrInvalidName, field, i, n)
		}
		if seen[n] {
			return fmt.Errorf("%w: %s[%d]: %s is listed twice; remove one", ErrInvalidName, field, i, n)
		}
		seen[n] = true
	}
	return nil
}

// Lookup returns p's credential lookup, the shape mcpclient expands
// ${NAME} with (see [Store.Resolve]). Each call reads the current
// snapshot.
func (s *Store) Lookup(p capability.Principal) func(name string) (string, bool) {
	return func(name string) (string, bool) { return s.Resolve(p, name) }
}

// Missing returns, in the order given, the names that resolve to nothing
// for p: a server needing them cannot start for p.
func (s *Store) Missing(p capability.Principal, names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := s.Resolve(p, n); !ok {
			out = append(out, n)
		}
	}
	return out
}

// String describes the store without any value.
func (s *Store) String() string { return "credential.Store(" + s.path + ")" }

// NewKey makes a new key for a credential store, an age X25519 identity,
// and writes it to path (mode 0600, atomically) as the store reads it: the
// AGE-SECRET-KEY-1… line, which is also the value SKILLGATE_CREDENTIAL_KEY
// takes. It refuses (ErrKey) a path that exists: that key may encrypt a
// store, and replacing it would lose every credential. It returns the
// key's public recipient (age1…). `skillgate credential keygen` runs it;
// a store without a key makes its own the same way at the first Set.
func NewKey(path string) (recipient string, err error) {
	id, err := newKey(path)
	if err != nil {
		return "", err
	}
	return id.Recipient().String(), nil
}

func newKey(path string) (*age.X25519Identity, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%w: %s already exists: it may be the key of a credential store, and replacing it loses every credential it encrypts; move it away first if it is not", ErrKey, path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	if err := atomicfile.Write(path, []byte(id.String()+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("%w: creating %s: %w", ErrKey, path, err)
	}
	return id, nil
}
