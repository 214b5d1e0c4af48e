package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/strictjson"
	"github.com/skillgate/skillgate/internal/platform/tailbuf"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// Defaults of [Options].
const (
	// DefaultNPMRegistry is the public npm registry.
	DefaultNPMRegistry = "https://registry.npmjs.org/"
	// DefaultPyPIIndex is the public Python package index.
	DefaultPyPIIndex = "https://pypi.org/simple/"
	// DefaultTimeout bounds one package's fetch, its dependencies included.
	DefaultTimeout = 5 * time.Minute
)

// maxClientOutput bounds what is kept of a client's output for errors.
const maxClientOutput = 64 << 10

// Options configure a [Fetcher]: where packages come from and what bounds
// a fetch.
type Options struct {
	// NPM configures fetches of npm packages.
	NPM NPMOptions
	// PyPI configures fetches of Python packages.
	PyPI PyPIOptions
	// Timeout bounds one fetch; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxBytes and MaxFiles bound one fetched tree; 0 means
	// DefaultMaxBytes and DefaultMaxFiles.
	MaxBytes int64
	MaxFiles int
	// Sandbox confines the package clients (npm, pip): Fetch gives it the
	// network, the tree being fetched and a scratch directory (its cache
	// and home) to write, and nothing else of the host beyond what every
	// confined process reads; its Hide (skillgate's data directory) stays
	// hidden. Nil runs them unconfined (only where no sandbox exists).
	Sandbox *sandbox.Bubblewrap
	// LookPath finds npm, node and python3; nil means exec.LookPath.
	LookPath func(string) (string, error)
	// Env is the environment the clients' proxy settings are read from
	// (HTTPS_PROXY, HTTP_PROXY, NO_PROXY and their lower-case forms); nil
	// means os.Environ. Nothing else of it reaches a client.
	Env []string
	// Logger receives events; nil discards them.
	Logger *slog.Logger
}

// NPMOptions configure npm fetches.
type NPMOptions struct {
	// Registry is the registry (or mirror) URL; "" means
	// DefaultNPMRegistry.
	Registry string
	// Cache is a cache directory shared by fetches, so that a package
	// fetched once is not downloaded again; "" gives every fetch an empty
	// cache of its own. npm checks every cached archive against the
	// integrity the registry gives.
	Cache string
	// Offline fetches from Cache only, never the registry.
	Offline bool
}

// PyPIOptions configure Python package fetches.
type PyPIOptions struct {
	// Index is the simple index (or mirror) URL; "" means
	// DefaultPyPIIndex.
	Index string
	// FindLinks is a local directory of wheels searched besides the index
	// (or instead of it, with Offline).
	FindLinks string
	// Offline fetches from FindLinks only, never an index.
	Offline bool
	// Python is the interpreter that fetches and runs the packages; ""
	// means python3 on PATH. Its real executable is recorded.
	Python string
}

// Fetcher fetches launched packages into managed storage. It is safe for
// concurrent use.
type Fetcher struct {
	opts Options
	log  *slog.Logger
}

// NewFetcher returns a Fetcher with opts, defaults filled in.
func NewFetcher(opts Options) *Fetcher {
	if opts.NPM.Registry == "" {
		opts.NPM.Registry = DefaultNPMRegistry
	}
	if !strings.HasSuffix(opts.NPM.Registry, "/") {
		opts.NPM.Registry += "/"
	}
	if opts.PyPI.Index == "" {
		opts.PyPI.Index = DefaultPyPIIndex
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.LookPath == nil {
		opts.LookPath = exec.LookPath
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	f := &Fetcher{opts: opts, log: opts.Logger}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	return f
}

// Registry returns where packages of eco are fetched from.
func (f *Fetcher) Registry(eco Ecosystem) string {
	if eco == PyPI {
		if f.opts.PyPI.Offline {
			return f.opts.PyPI.FindLinks
		}
		return f.opts.PyPI.Index
	}
	return f.opts.NPM.Registry
}

// Fetch fetches l, the launch of server, and its dependencies into dir,
// which must not exist yet, and returns what it pinned. allow names the
// packages whose install scripts the operator allows, each with the
// reason. On error nothing is left at dir.
func (f *Fetcher) Fetch(ctx context.Context, server string, l Launch, dir string, allow map[string]string) (p Package, err error) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Package{}, fmt.Errorf("launch: server %s: %w", server, err)
	}
	work, err := os.MkdirTemp(filepath.Dir(dir), ".fetch-")
	if err != nil {
		os.RemoveAll(dir)
		return Package{}, fmt.Errorf("launch: server %s: %w", server, err)
	}
	defer os.RemoveAll(work)
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	start := time.Now()
	switch l.Ecosystem {
	case NPM:
		p, err = f.fetchNPM(ctx, server, l, dir, work, allow)
	case PyPI:
		p, err = f.fetchPyPI(ctx, server, l, dir, work)
	default:
		return Package{}, fmt.Errorf("%w: server %s: unknown ecosystem %q", ErrUnsupported, server, l.Ecosystem)
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return Package{}, fmt.Errorf("%w: server %s: fetching %s from %s took longer than %s; try again, or raise packages.timeout in config.yaml; nothing was installed",
				ErrFetch, server, l.Spec(), f.Registry(l.Ecosystem), f.opts.Timeout)
		}
		return Package{}, err
	}
	p.Server, p.Launcher, p.Ecosystem, p.Name, p.Requested, p.With = server, l.Launcher, l.Ecosystem, l.Package, l.Requested, l.With
	if p.Registry == "" {
		p.Registry = f.Registry(l.Ecosystem)
	}
	if p.Dependencies == nil {
		p.Dependencies = []Dependency{}
	}
	if p.Tree, err = treeDigest(ctx, dir, treeLimits{f.opts.MaxBytes, f.opts.MaxFiles}); err != nil {
		return Package{}, fmt.Errorf("%w: server %s: the fetched tree of %s@%s: %w; nothing was installed", ErrFetch, server, p.Name, p.Version, err)
	}
	f.log.InfoContext(ctx, "launch: package fetched", "server", server, "package", p.Name, "version", p.Version,
		"dependencies", len(p.Dependencies), "elapsed", time.Since(start))
	return p, nil
}

// client is one run of a package client in the fetch sandbox.
type client struct {
	program string
	args    []string
	env     []string
	dir     string // working directory, written by the client
	write   []string
	// watch are the directories the client fills (the tree, its
	// scratch directory with the cache): while it runs they are
	// measured, and it is stopped once they grow past twice the tree's
	// bounds (the tree and the archives it came from).
	watch []string
}

// errTooLarge is the cause of a client stopped for a tree past the bounds.
var errTooLarge = errors.New("the fetched tree grew past its bounds")

// watchSlackBytes and watchSlackFiles are what a fetch may hold past
// twice a tree's bounds (the client's cache and logs) before it is
// stopped.
const (
	watchSlackBytes = 64 << 20
	watchSlackFiles = 1000
)

// sizeEvery is how often a tree being fetched is measured.
const sizeEvery = 250 * time.Millisecond

// run runs c confined, with the network, and returns its combined
// output (bounded) and exit error.
func (f *Fetcher) run(ctx context.Context, c client) (string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if len(c.watch) > 0 {
		done := make(chan struct{})
		defer close(done)
		go func() {
			t := time.NewTicker(sizeEvery)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					var n int64
					var files int
					for _, d := range c.watch {
						dn, df := treeSize(d)
						n, files = n+dn, files+df
					}
					// Far past the bounds only: the tree's own bounds
					// are checked exactly once it is written.
					if n > 2*f.opts.MaxBytes+watchSlackBytes || files > 2*f.opts.MaxFiles+watchSlackFiles {
						cancel(fmt.Errorf("%w: %d bytes in %d files while fetching, over twice the bounds of a tree (%d bytes, %d files; packages.max_bytes)", errTooLarge, n, files, f.opts.MaxBytes, f.opts.MaxFiles))
						return
					}
				}
			}
		}()
	}
	out, err := f.runBounded(ctx, c)
	if cause := context.Cause(ctx); errors.Is(cause, errTooLarge) {
		return out, cause
	}
	return out, err
}

// treeSize returns the bytes and the entries under dir, as far as they
// can be read while a client writes there.
func treeSize(dir string) (int64, int) {
	var n int64
	var files int
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		files++
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n, files
}

// runBounded runs c under ctx.
func (f *Fetcher) runBounded(ctx context.Context, c client) (string, error) {
	cmd := exec.CommandContext(ctx, c.program, c.args...)
	cmd.Env = c.env
	cmd.Dir = c.dir
	out := &tailbuf.Buffer{Max: maxClientOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if sb := f.opts.Sandbox; sb != nil {
		b := *sb
		b.Network = true
		b.State = ""
		b.Helper = nil
		b.Grants = make([]capability.Grant, 0, len(c.write))
		for _, w := range c.write {
			b.Grants = append(b.Grants, capability.Grant{Path: w, Access: capability.GrantReadWrite, From: "fetch"})
		}
		if err := b.Confine(cmd); err != nil {
			return "", fmt.Errorf("%w: cannot confine %s: %w", ErrFetch, c.program, err)
		}
	}
	err := cmd.Run()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	return out.String(), err
}

// proxyEnv returns the proxy and certificate authority settings of env
// (a proxy, a TLS-intercepting one's CA bundle), the only part of it a
// client sees.
func proxyEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR":
			out = append(out, kv)
		}
	}
	return out
}

// caBundle returns the CA bundle env names for pip (PIP_CERT,
// REQUESTS_CA_BUNDLE or SSL_CERT_FILE, in that order), or "".
func caBundle(env []string) string {
	for _, name := range []string{"PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"} {
		for _, kv := range env {
			if k, v, _ := strings.Cut(kv, "="); k == name && v != "" {
				return v
			}
		}
	}
	return ""
}

// maxListed bounds the names nameList lists.
const maxListed = 10

// nameList joins names a package declares (its programs) for a message:
// each as it is when it is plain text, quoted otherwise, the first
// maxListed only.
func nameList(names []string) string {
	out := make([]string, 0, min(len(names), maxListed)+1)
	for i, n := range names {
		if i == maxListed {
			out = append(out, fmt.Sprintf("and %d more", len(names)-maxListed))
			break
		}
		if plainName.MatchString(n) {
			out = append(out, n)
		} else {
			out = append(out, strictjson.Quote(n, 100))
		}
	}
	return strings.Join(out, ", ")
}

// plainName is a name nameList need not quote.
var plainName = regexp.MustCompile(`^[A-Za-z0-9@/._+~-]{1,100}$`)

// exitCode is err's exit status, or -1.
func exitCode(err error) int {
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		return xe.ExitCode()
	}
	return -1
}

// containsAny reports whether s holds one of subs.
func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// lastLines returns the last n non-empty lines of s, joined by "; ",
// each bounded and quoted where it is not plain text.
func lastLines(s string, n int) string {
	var keep []string
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append([]string{strictjson.Quote(l, 300)}, keep...)
		}
	}
	return strings.Join(keep, "; ")
}
