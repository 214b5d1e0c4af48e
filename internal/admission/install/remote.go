package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/model/lockfile"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/signature"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// Source is what `skillgate install` is given: a local directory or
// archive, an archive URL, or a git repository.
type Source struct {
	// Location is a path, an http(s):// URL of a .tar.gz/.tgz/.zip
	// archive, or a git repository: git+https://…, git+http://… (loopback
	// hosts only), file://… (a local repository).
	Location string
	// Ref is the git branch, tag or commit (default HEAD).
	Ref string
	// Path is the skill's directory inside the repository (default its
	// top level).
	Path string
	// SHA256 is the expected SHA-256 (hex) of an archive; required for an
	// archive URL, checked for a local archive when given.
	SHA256 string
	// Commit and Digest, when set, are what a lock file recorded: the
	// commit Ref must still resolve to (a ref that moved is refused) and
	// the content digest the skill must have.
	Commit, Digest string
	// Packages, when set, pins the package each server launches to the
	// exact version a lock file recorded, by server id.
	Packages map[string]string

	// current is the approved version an update compares with: the same
	// version fetched again is ErrUpToDate.
	current *store.Install
}

// version is the digest of the version p was recorded for.
func (p Provenance) version() string {
	if p.Version != "" {
		return p.Version
	}
	return p.Digest
}

// Provenance records where an installed version came from. It is bound
// to the content digest of the version it was recorded for.
type Provenance struct {
	// Kind is "directory", "archive", "url" or "git".
	Kind string `json:"kind"`
	// Source is the location as given, without credentials.
	Source string `json:"source"`
	// Ref and Commit: the git ref asked for and the commit it resolved to.
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Path is the skill's directory inside the repository.
	Path string `json:"path,omitempty"`
	// SHA256 is the archive's digest, checked against the one expected.
	SHA256 string `json:"archiveSha256,omitempty"`
	// FetchedAt is when the source was read.
	FetchedAt time.Time `json:"fetchedAt"`
	// Digest is the content digest of what was read.
	Digest string `json:"digest"`
	// Packages are the packages its servers launch (npx PKG, uvx PKG),
	// fetched and pinned at install, by server.
	Packages []launch.Package `json:"packages,omitempty"`
	// Version is the version's digest when it differs from Digest: that
	// of the content and the packages together (see launch.VersionDigest).
	Version string `json:"version,omitempty"`
	// Signature is what the skill's own signature established, when it
	// carried one.
	Signature *SignatureRecord `json:"signature,omitempty"`
}

// SignatureRecord is the verdict on an imported skill's signature.
type SignatureRecord struct {
	// Status is "verified" (by a key trusted for imported skills) or
	// "unverified" (by a key not trusted here; Reason says which).
	Status   string    `json:"status"`
	Signer   string    `json:"signer,omitempty"`
	KeyName  string    `json:"keyName,omitempty"`
	KeyID    string    `json:"keyId,omitempty"`
	SignedAt time.Time `json:"signedAt,omitzero"`
	Reason   string    `json:"reason,omitempty"`
}

// Bounds of fetching a remote source.
const (
	fetchTimeout = 2 * time.Minute
	maxRedirects = 3
)

var (
	hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// gitRef is a branch, tag or commit name: no option, no "..", no
	// control characters or spaces (git's check-ref-format, roughly, and
	// never something git would read as a flag).
	gitRef = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$`)
)

// isRemote reports whether loc names a source to fetch rather than a path.
func isRemote(loc string) bool {
	for _, p := range []string{"https://", "http://", "git+https://", "git+http://", "file://"} {
		if strings.HasPrefix(loc, p) {
			return true
		}
	}
	return false
}

// Fetch reads src into memory within lim, and says where it came from.
func Fetch(ctx context.Context, src Source, lim SourceLimits, now time.Time) (*Tree, Provenance, error) {
	lim = lim.withDefaults()
	if src.SHA256 != "" && !hexSHA256.MatchString(src.SHA256) {
		return nil, Provenance{}, fmt.Errorf("%w: --sha256 %q: give 64 lower-case hexadecimal digits", ErrInvalidSource, src.SHA256)
	}
	loc := src.Location
	switch {
	case strings.HasPrefix(loc, "git+") || strings.HasPrefix(loc, "file://"):
		return fetchGit(ctx, src, lim, now)
	case strings.HasPrefix(loc, "https://") || strings.HasPrefix(loc, "http://"):
		if src.Ref != "" || src.Path != "" {
			return nil, Provenance{}, fmt.Errorf("%w: --ref and --path are for git sources (git+https://…, file://…)", ErrInvalidSource)
		}
		return fetchArchive(ctx, src, lim, now)
	}
	if src.Ref != "" || src.Path != "" {
		return nil, Provenance{}, fmt.Errorf("%w: --ref and --path are for git sources (git+https://…, file://…)", ErrInvalidSource)
	}
	t, err := ReadSource(ctx, loc, lim)
	if err != nil {
		return nil, Provenance{}, err
	}
	p := Provenance{Kind: "directory", Source: loc, FetchedAt: now.UTC()}
	if fi, err := os.Stat(loc); err == nil && !fi.IsDir() {
		p.Kind = "archive"
		sum, err := fileSHA256(loc)
		if err != nil {
			return nil, Provenance{}, fmt.Errorf("%w: %s: %w", ErrInvalidSource, loc, err)
		}
		if src.SHA256 != "" && sum != src.SHA256 {
			return nil, Provenance{}, fmt.Errorf("%w: %s has SHA-256 %s, not the expected %s", ErrInvalidSource, loc, sum, src.SHA256)
		}
		p.SHA256 = sum
	} else if src.SHA256 != "" {
		return nil, Provenance{}, fmt.Errorf("%w: --sha256 is for archives, and %s is a directory", ErrInvalidSource, loc)
	}
	return t, p, nil
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fetchArchive downloads an archive URL, checks its SHA-256 before
// reading a byte of it, and reads it as a local archive would be.
func fetchArchive(ctx context.Context, src Source, lim SourceLimits, now time.Time) (*Tree, Provenance, error) {
	u, err := remoteURL(src.Location, "http", "https")
	if err != nil {
		return nil, Provenance{}, err
	}
	if src.SHA256 == "" {
		return nil, Provenance{}, fmt.Errorf("%w: %s: an archive URL needs --sha256 HEX, the SHA-256 you expect of it (sha256sum prints it)", ErrInvalidSource, redact(u))
	}
	kind := ""
	switch p := strings.ToLower(u.Path); {
	case strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz"):
		kind = "tar.gz"
	case strings.HasSuffix(p, ".zip"):
		kind = "zip"
	default:
		return nil, Provenance{}, fmt.Errorf("%w: %s: the URL must name a .tar.gz, .tgz or .zip archive", ErrInvalidSource, redact(u))
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("%w: %w", ErrInvalidSource, err)
	}
	client := &http.Client{CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return errors.New("too many redirects")
		}
		if _, err := remoteURL(r.URL.String(), "http", "https"); err != nil {
			return err
		}
		return nil
	}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("%w: fetching %s: %w", ErrInvalidSource, redact(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, Provenance{}, fmt.Errorf("%w: fetching %s: %s", ErrInvalidSource, redact(u), resp.Status)
	}
	if resp.ContentLength > lim.MaxArchiveBytes {
		return nil, Provenance{}, fmt.Errorf("%w: %s: archive larger than %d bytes (%d)", ErrInvalidSource, redact(u), lim.MaxArchiveBytes, resp.ContentLength)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, lim.MaxArchiveBytes+1))
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("%w: fetching %s: %w", ErrInvalidSource, redact(u), err)
	}
	if int64(len(data)) > lim.MaxArchiveBytes {
		return nil, Provenance{}, fmt.Errorf("%w: %s: archive larger than %d bytes", ErrInvalidSource, redact(u), lim.MaxArchiveBytes)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != src.SHA256 {
		return nil, Provenance{}, fmt.Errorf("%w: %s has SHA-256 %s, not the expected %s; nothing was installed", ErrInvalidSource, redact(u), got, src.SHA256)
	}
	t, err := ReadArchiveBytes(ctx, path.Base(u.Path), kind, data, lim)
	if err != nil {
		return nil, Provenance{}, err
	}
	return t, Provenance{Kind: "url", Source: redact(u), SHA256: src.SHA256, FetchedAt: now.UTC()}, nil
}

// remoteURL parses loc and checks its scheme (one of schemes): no user
// information, and plain http only to a loopback host.
func remoteURL(loc string, schemes ...string) (*url.URL, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a URL: %w", ErrInvalidSource, loc, err)
	}
	ok := false
	for _, s := range schemes {
		ok = ok || u.Scheme == s
	}
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %s: use %s", ErrInvalidSource, redact(u), strings.Join(schemes, " or "))
	case u.User != nil:
		return nil, fmt.Errorf("%w: %s: credentials in a source URL are not accepted", ErrInvalidSource, redact(u))
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return nil, fmt.Errorf("%w: %s: plain http is only for loopback hosts; use https", ErrInvalidSource, redact(u))
	case (u.Scheme == "http" || u.Scheme == "https") && u.Host == "":
		return nil, fmt.Errorf("%w: %s: no host", ErrInvalidSource, redact(u))
	}
	return u, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redact is u without user information, for messages and records.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// fetchGit reads the skill at src.Path of src.Ref of a git repository,
// with the git binary: a shallow fetch of the ref into a temporary
// repository, then `git archive` of the resolved commit's subtree, read
// as any archive is (links and other non-regular entries refused).
func fetchGit(ctx context.Context, src Source, lim SourceLimits, now time.Time) (*Tree, Provenance, error) {
	if src.SHA256 != "" {
		return nil, Provenance{}, fmt.Errorf("%w: --sha256 is for archives; a git source is pinned by its commit", ErrInvalidSource)
	}
	loc := strings.TrimPrefix(src.Location, "git+")
	u, err := remoteURL(loc, "https", "http", "file")
	if err != nil {
		return nil, Provenance{}, err
	}
	if u.Scheme == "file" && (u.Host != "" && u.Host != "localhost") {
		return nil, Provenance{}, fmt.Errorf("%w: %s: a file:// URL names a local path (file:///path/to/repo)", ErrInvalidSource, redact(u))
	}
	ref := src.Ref
	if ref == "" {
		ref = "HEAD"
	}
	if !gitRef.MatchString(ref) || strings.Contains(ref, "..") {
		return nil, Provenance{}, fmt.Errorf("%w: --ref %q is not a branch, tag or commit name", ErrInvalidSource, ref)
	}
	sub := strings.Trim(src.Path, "/")
	if sub != "" && (!validRepoPath(sub)) {
		return nil, Provenance{}, fmt.Errorf("%w: --path %q: give a relative path inside the repository, without . or .. components", ErrInvalidSource, src.Path)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("%w: git sources need the git command: %w", ErrInvalidSource, err)
	}
	tmp, err := os.MkdirTemp("", "skillgate-git-*")
	if err != nil {
		return nil, Provenance{}, err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	runCtx := func(ctx context.Context, stdout io.Writer, args ...string) error {
		// No user or system configuration, no prompts, only the
		// protocols a source may use.
		full := append([]string{"-c", "protocol.allow=never", "-c", "protocol.https.allow=always", "-c", "protocol.http.allow=always",
			"-c", "protocol.file.allow=always", "-c", "core.hooksPath=/dev/null", "-C", tmp}, args...)
		cmd := exec.CommandContext(ctx, git, full...)
		cmd.Env = []string{"HOME=" + tmp, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false", "PATH=" + os.Getenv("PATH")}
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = stdout, &limitedBuffer{b: &stderr, max: 4096}
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			return errors.New(msg)
		}
		return nil
	}
	run := func(stdout io.Writer, args ...string) error { return runCtx(ctx, stdout, args...) }
	if err := run(io.Discard, "init", "-q", "--bare"); err != nil {
		return nil, Provenance{}, fmt.Errorf("%w: git init: %w", ErrInvalidSource, err)
	}
	if err := run(io.Discard, "fetch", "-q", "--depth=1", "--no-tags", "--", u.String(), ref); err != nil {
		return nil, Provenance{}, fmt.Errorf("%w: fetching %s of %s: %w", ErrInvalidSource, ref, redact(u), err)
	}
	var out bytes.Buffer
	if err := run(&out, "rev-parse", "--verify", "FETCH_HEAD^{commit}"); err != nil {
		return nil, Provenance{}, fmt.Errorf("%w: %s of %s: %w", ErrInvalidSource, ref, redact(u), err)
	}
	commit := strings.TrimSpace(out.String())
	// COMMIT:PATH names a tree; COMMIT: the repository's top-level tree.
	treeish := commit + ":" + sub
	out.Reset()
	if err := run(&out, "cat-file", "-t", treeish); err != nil || strings.TrimSpace(out.String()) != "tree" {
		return nil, Provenance{}, fmt.Errorf("%w: %s has no directory %q at %s", ErrInvalidSource, redact(u), sub, commit)
	}
	name := path.Base(sub)
	if sub == "" {
		name = strings.TrimSuffix(path.Base(u.Path), ".git")
	}
	// git archive's tar is read as it streams: never more than the bounds
	// in memory, and git is stopped at the first entry over them.
	actx, stop := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	archived := make(chan error, 1)
	go func() {
		err := runCtx(actx, pw, "archive", "--format=tar", treeish)
		pw.CloseWithError(err)
		archived <- err
	}()
	t, err := readTarStreamBounded(ctx, fmt.Sprintf("%s at %s", redact(u), commit), pr, lim)
	if err == nil {
		// The tar ended: what git still writes is the record's padding.
		_, _ = io.Copy(io.Discard, io.LimitReader(pr, 1<<20))
	} else {
		stop()
	}
	pr.CloseWithError(errArchiveBound)
	gitErr := <-archived
	stop()
	if err != nil {
		return nil, Provenance{}, err
	}
	if gitErr != nil {
		return nil, Provenance{}, fmt.Errorf("%w: git archive of %s: %w", ErrInvalidSource, redact(u), gitErr)
	}
	t.Name = name
	recorded := redact(u)
	if strings.HasPrefix(src.Location, "git+") {
		recorded = "git+" + recorded // as given: fetchable again
	}
	return t, Provenance{Kind: "git", Source: recorded, Ref: ref, Commit: commit, Path: sub, FetchedAt: now.UTC()}, nil
}

// validRepoPath reports whether p is a clean relative slash path.
func validRepoPath(p string) bool {
	if len(p) > 1024 || strings.HasPrefix(p, "-") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "\x00\n\r:") {
			return false
		}
	}
	return true
}

// limitedBuffer keeps at most max bytes and notes when more came.
type limitedBuffer struct {
	b    *bytes.Buffer
	max  int
	over bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); len(p) > room {
		l.over = true
		if room > 0 {
			l.b.Write(p[:room])
		}
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *limitedBuffer) String() string { return l.b.String() }

// Text is p on one line: kind, source, ref and commit, path, archive
// digest, fetch time.
func (p Provenance) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", p.Kind, p.Source)
	if p.Ref != "" {
		fmt.Fprintf(&b, " ref %s", p.Ref)
	}
	if p.Commit != "" {
		fmt.Fprintf(&b, " commit %s", p.Commit)
	}
	if p.Path != "" {
		fmt.Fprintf(&b, " path %s", p.Path)
	}
	if p.SHA256 != "" {
		fmt.Fprintf(&b, " sha256 %s", p.SHA256)
	}
	fmt.Fprintf(&b, ", fetched %s", p.FetchedAt.Format(time.RFC3339))
	if sig := p.Signature; sig != nil {
		if sig.Status == "verified" {
			fmt.Fprintf(&b, "; signed by %s with key %s (%s) at %s", sig.Signer, sig.KeyName, sig.KeyID, sig.SignedAt.Format(time.RFC3339))
		} else {
			fmt.Fprintf(&b, "; signature unverified: %s", sig.Reason)
		}
	}
	return b.String()
}

// LockEntries returns the lock file entries of the enabled imported
// skills: source, ref and commit or archive digest, content digest, the
// verified signer, the approved pin-set digest of each server and the
// resource-set digest of each approved published skill.
func (s *Service) LockEntries(ctx context.Context) ([]lockfile.Entry, error) {
	rows, err := s.st.Installs(ctx, store.InstallFilter{States: []store.InstallState{store.StateEnabled}})
	if err != nil {
		return nil, err
	}
	out := make([]lockfile.Entry, 0, len(rows))
	for _, in := range rows {
		e := lockfile.Entry{Key: in.Key, Origin: lockfile.OriginInstall, Trust: signature.TrustImported, Source: in.Source, Digest: in.Digest}
		if len(in.Provenance) > 0 {
			var p Provenance
			if err := json.Unmarshal(in.Provenance, &p); err != nil {
				return nil, fmt.Errorf("%w: %s: provenance: %w", ErrStorage, in.Key, err)
			}
			if p.version() == in.Digest { // evidence for another digest is not this version's
				e.Source, e.Ref, e.Commit, e.Path, e.ArchiveSHA256 = p.Source, p.Ref, p.Commit, p.Path, p.SHA256
				if p.Signature != nil && p.Signature.Status == "verified" {
					e.Signer = p.Signature.Signer
				}
				for _, pk := range p.Packages {
					if e.Packages == nil {
						e.Packages = map[string]lockfile.Package{}
					}
					e.Packages[pk.Server] = lockfile.Package{Ecosystem: string(pk.Ecosystem), Name: pk.Name, Version: pk.Version, Integrity: pk.Integrity}
				}
			}
		}
		if m, err := manifest.Parse(in.Manifest); err == nil {
			for _, pr := range m.Providers {
				if pr.PinDigest != "" {
					if e.Pins == nil {
						e.Pins = map[string]string{}
					}
					e.Pins[pr.ServerID] = pr.PinDigest
				}
			}
			for _, ps := range m.PublishedSkills {
				if e.PublishedSkills == nil {
					e.PublishedSkills = map[string]string{}
				}
				d := ps.SetDigest
				if ps.Dynamic {
					d = "dynamic"
				}
				e.PublishedSkills[ps.Ref()] = d
			}
		} else if len(in.Manifest) > 0 {
			return nil, fmt.Errorf("%w: %s: %w", ErrStorage, in.Key, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// UpdateOptions change what [Service.Update] fetches.
type UpdateOptions struct {
	// Ref replaces the recorded git ref (a new tag, say).
	Ref string
	// Source replaces the recorded location (an archive's new URL);
	// SHA256 is then the new archive's digest.
	Source, SHA256 string
}

// ErrUpToDate is returned by [Service.Update] when the source still holds
// the version that is approved.
var ErrUpToDate = errors.New("up to date")

// Update fetches the source the approved version of name came from again
// (its recorded URL, ref and path; opts may change them). The same content
// is ErrUpToDate, with the approved version's review. New content goes
// through the whole install analysis as a new version, whose review shows
// what changed against the approved one; the approved version keeps
// serving until a human approves the update, which is consent to that
// comparison (the audit record of the approval carries its digest).
func (s *Service) Update(ctx context.Context, name string, opts UpdateOptions, actor string, intro Introspection) (*Review, error) {
	cur, err := s.resolve(ctx, name, store.StateEnabled, store.StateInstalled, store.StateDisabled)
	if err != nil {
		return nil, err
	}
	src := Source{Location: cur.Source}
	var p Provenance
	if len(cur.Provenance) > 0 && json.Unmarshal(cur.Provenance, &p) == nil && p.version() == cur.Digest {
		src = Source{Location: p.Source, Ref: p.Ref, Path: p.Path, SHA256: p.SHA256}
		if p.Kind == "directory" || p.Kind == "archive" {
			src.Location = cur.Source
		}
	}
	if opts.Ref != "" {
		src.Ref = opts.Ref
	}
	if opts.Source != "" {
		src.Location = opts.Source
	}
	if opts.SHA256 != "" {
		src.SHA256 = opts.SHA256
	}
	tree, prov, err := Fetch(ctx, src, s.lim, s.now())
	if err != nil {
		return nil, err
	}
	if content := skill.DigestBytes(tree.Files); (content == cur.Digest || content == p.Digest && p.version() == cur.Digest) && !launchesIn(tree) {
		r, rerr := s.review(ctx, cur)
		if rerr != nil {
			return nil, rerr
		}
		return r, fmt.Errorf("%w: %s %s is what %s holds", ErrUpToDate, cur.Key, cur.Digest, prov.Source)
	}
	// A skill whose servers launch packages is fetched anew: the same
	// content with a newer package is a new version.
	src.current = &cur
	r, err := s.installFetched(ctx, src, tree, prov, actor, intro)
	if errors.Is(err, ErrUpToDate) {
		r, rerr := s.review(ctx, cur)
		if rerr != nil {
			return nil, rerr
		}
		return r, err
	}
	return r, err
}

// redactLocation is loc without credentials, when it is a URL.
func redactLocation(loc string) string {
	if !isRemote(loc) {
		return loc
	}
	prefix := ""
	if rest, ok := strings.CutPrefix(loc, "git+"); ok {
		prefix, loc = "git+", rest
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "(an unreadable URL)"
	}
	return prefix + redact(u)
}

// ProvenanceOf returns how the installed version with this content digest
// was fetched, or nil when no install has it or none was recorded. A
// record made for another digest is never returned for this one.
func (s *Service) ProvenanceOf(ctx context.Context, digest string) (*Provenance, error) {
	rows, err := s.st.Installs(ctx, store.InstallFilter{Digest: digest})
	if err != nil || len(rows) == 0 || len(rows[0].Provenance) == 0 {
		return nil, err
	}
	var p Provenance
	if err := json.Unmarshal(rows[0].Provenance, &p); err != nil {
		return nil, fmt.Errorf("%w: %s: provenance: %w", ErrStorage, rows[0].Key, err)
	}
	if p.version() != digest {
		return nil, nil
	}
	return &p, nil
}
