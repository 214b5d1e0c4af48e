package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/skillgate/skillgate/internal/platform/plural"
	"github.com/skillgate/skillgate/internal/platform/termtext"
	"github.com/skillgate/skillgate/internal/storage/store/postgres"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/registry/signature"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// Exit codes, documented in docs/cli.md.
const (
	exitOK    = 0
	exitFail  = 1 // invalid skills, drift, not found, operational errors
	exitUsage = 2 // bad flags or arguments
)

// Main runs the CLI with injectable I/O, so tests drive the real wiring.
type Main struct {
	// Stdin is read by commands that take a secret (credential set); nil
	// means os.Stdin.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment; tests pass a map's lookup.
	Getenv func(string) string

	dataDir    string
	configPath string
	// storeFlag is --store: the metadata store (see storeLocation).
	storeFlag string
	verbose   bool
	// introspectAs is the principal whose credentials install, recheck
	// and approve introspect with (--tenant, --agent); zero: the
	// environment's.
	introspectAs credential.Scope
	// npmRegistry is --registry of install and update: the npm registry
	// packages are fetched from, over config.yaml's.
	npmRegistry string
	// shared is the PostgreSQL store a command opened for its shared
	// documents (see sharedStore); cleanups run when Run returns.
	shared   *postgres.DB
	cleanups []func()
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// failed is returned when the command printed its own findings and only
// the exit code remains to be set.
var errFailed = &exitError{code: exitFail, err: errors.New("")}

// Run executes one command line and returns the exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	root := m.rootCommand()
	defer m.renderOutput(root, args)()
	root.SetArgs(args)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	defer func() {
		for i := len(m.cleanups) - 1; i >= 0; i-- {
			m.cleanups[i]()
		}
		m.cleanups, m.shared = nil, nil
	}()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err.Error() != "" {
			fmt.Fprintln(m.Stderr, "Error:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(m.Stderr, "Error:", err)
	if strings.Contains(err.Error(), "unknown command") || strings.Contains(err.Error(), "flag") || strings.Contains(err.Error(), "arg(s)") {
		return exitUsage
	}
	return exitFail
}

// renderOutput routes the command's stdout and stderr through
// termtext.Writer for the length of the run, so that no text from outside
// (a server's name, a tool's description, a SKILL.md field, an error
// quoting them) reaches the terminal with a control, bidi or other
// invisible character: every command's output is rendered by the one
// rule, JSON included (its values unchanged). Only 'skillgate mcp' keeps
// its stdout raw: it is the MCP stdio stream, not text for a human. The
// returned function flushes and restores the writers.
func (m *Main) renderOutput(root *cobra.Command, args []string) func() {
	stdout, stderr := m.Stdout, m.Stderr
	errw := termtext.NewWriter(stderr)
	m.Stderr = errw
	var outw *termtext.Writer
	if c, _, err := root.Find(args); err != nil || c.Name() != "mcp" || c.Parent() != root {
		outw = termtext.NewWriter(stdout)
		m.Stdout = outw
	}
	return func() {
		if outw != nil {
			outw.Flush()
		}
		errw.Flush()
		m.Stdout, m.Stderr = stdout, stderr
	}
}

func (m *Main) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "skillgate",
		Short: "A skill registry and capability gateway for AI agents",
		Long: `skillgate discovers, validates, versions and indexes Agent Skills (folders
with a SKILL.md), and serves them to agents.

Data lives in ./.skillgate unless --data or SKILLGATE_DATA says otherwise;
the metadata store (registry, installs, policies, grants, sessions, audit
log) is the SQLite file DATA/skillgate.db unless --store, SKILLGATE_STORE or
the configuration's store: names another file or a postgres:// database. Only scan, install and token add create it;
other commands refuse a data directory that does not exist (exit 2).
Exit codes: 0 success, 1 failure (invalid skill, drift, not found), 2 usage
error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			return m.checkData(c, args)
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see '%s --help')", err, c.CommandPath())
	})
	pf := root.PersistentFlags()
	pf.StringVar(&m.dataDir, "data", "", "data directory (default $SKILLGATE_DATA or ./.skillgate)")
	pf.StringVar(&m.configPath, "config", "", "configuration file (default DATA/config.yaml if present)")
	pf.StringVar(&m.storeFlag, "store", "", "metadata store: a postgres:// URL, or a SQLite file (default $SKILLGATE_STORE, the configuration's store:, or DATA/skillgate.db)")
	pf.BoolVarP(&m.verbose, "verbose", "v", false, "log what skillgate does to stderr")
	root.AddCommand(
		m.validateCommand(),
		m.scanSecurityCommand(),
		m.scanCommand(),
		m.lsCommand(),
		m.showCommand(),
		m.promptCommand(),
		m.driftCommand(),
		m.enableCommand(true),
		m.enableCommand(false),
		m.versionCommand(),
		m.mcpCommand(),
		m.serveCommand(),
		m.tokenCommand(),
		m.discloseCommand(),
		m.auditCommand(),
		m.sessionCommand(),
		m.keyCommand(),
		m.signCommand(),
		m.verifySignatureCommand(),
		m.lockCommand(),
		m.verifyCommand(),
	)
	root.AddCommand(m.installCommands()...)
	root.AddCommand(m.policyCommand(), m.grantCommand(), m.credentialCommand())
	root.AddCommand(m.executorsCommand(), m.changesCommand())
	checkArgsOf(root)
	return root
}

// checkArgsOf gives every command of the tree under c the one argument
// check's message: the command's own check (cobra.ExactArgs(2), …) decides,
// and a wrong count is reported with what the command expects, from its
// usage line, instead of cobra's "accepts 2 arg(s), received 1":
// skillgate grant add: expected PRINCIPAL CAPABILITY, got 1 argument; see 'skillgate grant add --help'.
func checkArgsOf(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				var ee *exitError
				if errors.As(err, &ee) { // the command's own message
					return err
				}
				if strings.Contains(err.Error(), "arg(s)") || !cmd.HasSubCommands() && strings.HasPrefix(err.Error(), "unknown command") {
					return usageErr("%s: expected %s, got %s; see '%s --help'", cmd.CommandPath(), expectedArgs(cmd.Use), plural.Of(len(args), "argument", "arguments"), cmd.CommandPath())
				}
				return usageErr("%v; see '%s --help'", err, cmd.CommandPath())
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		checkArgsOf(sub)
	}
}

// expectedArgs reads the positional arguments from a usage line
// ("add PRINCIPAL CAPABILITY [--level L]" → "PRINCIPAL CAPABILITY"):
// the words after the command's name that are not flags, flag values or
// optional ([…]); "no arguments" when there are none.
func expectedArgs(use string) string {
	words := strings.Fields(use)
	var out []string
	depth, skipValue := 0, false
	for _, w := range words[1:] {
		switch {
		case depth > 0 || strings.HasPrefix(w, "["):
			depth += strings.Count(w, "[") - strings.Count(w, "]")
		case w == "<" || w == "|":
			return joinArgs(out)
		case strings.HasPrefix(w, "-"):
			skipValue = !strings.Contains(w, "=")
		case skipValue:
			skipValue = false
		default:
			out = append(out, w)
		}
	}
	return joinArgs(out)
}

func joinArgs(words []string) string {
	if len(words) == 0 {
		return "no arguments"
	}
	return strings.Join(words, " ")
}

// data returns the data directory.
func (m *Main) data() string {
	if m.dataDir != "" {
		return m.dataDir
	}
	if d := m.Getenv("SKILLGATE_DATA"); d != "" {
		return d
	}
	return ".skillgate"
}

// checkData refuses to run a command that reads the data directory when
// the directory does not exist: a mistyped --data must not silently start
// an empty registry. Commands that create it (scan, install, token add),
// commands that do not use it, and commands given their input as
// arguments (prompt PATH, policy check FILE) run anyway.
func (m *Main) checkData(c *cobra.Command, args []string) error {
	if c.HasSubCommands() { // a group: it only prints its usage
		return nil
	}
	switch strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") {
	case "scan", "install", "token add": // they create it
		return m.createData()
	case "credential keygen", // creates it unless given --out
		"validate", "scan-security", "drift", "version", "key gen", "sign", "verify-signature", "help", "completion", "completion bash", "completion zsh",
		"completion fish", "completion powershell", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return nil
	case "prompt", "policy check":
		if len(args) > 0 {
			return nil
		}
	}
	dir := m.data()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	from := "the default"
	switch {
	case m.dataDir != "":
		from = "--data"
	case m.Getenv("SKILLGATE_DATA") != "":
		from = "$SKILLGATE_DATA"
	}
	return usageErr("data directory %s (%s) does not exist: run 'skillgate scan' to create a registry there, or give an existing one with --data DIR or SKILLGATE_DATA", dir, from)
}

func (m *Main) logger() *slog.Logger {
	if !m.verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// dataIgnore is the .gitignore skillgate writes in a data directory it
// creates: the directory holds credentials.key, tokens.json and the
// database, and is often made inside a user's project (./.skillgate).
const dataIgnore = "# Made by skillgate: nothing in its data directory belongs in version control.\n*\n"

// createData makes the data directory (mode 0700) for the commands that
// create it, with a .gitignore ignoring everything in it, so that keys and
// tokens made there are never committed with the project around it. A
// directory that exists is the user's and is left as it is.
func (m *Main) createData() error {
	dir := m.data()
	if _, err := os.Stat(dir); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(dataIgnore), 0o600); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	return nil
}

// Config is the optional configuration file.
type Config struct {
	// Store is the metadata store: a postgres:// or postgresql:// URL,
	// or the path of a SQLite file (default DATA/skillgate.db); --store
	// and SKILLGATE_STORE take precedence.
	Store string `yaml:"store"`
	Roots []struct {
		Path  string `yaml:"path"`
		Scope string `yaml:"scope"`
		// Trust is first_party (skillgate's own standard: skills activate
		// automatically, their capabilities come with a shipped
		// manifest.json, dormant until their credentials are configured)
		// or imported (the default: nothing under the root is trusted
		// more than an import).
		Trust string `yaml:"trust"`
		// HardLinks is "refuse" (the default: files with several names
		// are not served to agents) or "allow", for a trusted root that
		// uses hard links on purpose.
		HardLinks string `yaml:"hard_links"`
	} `yaml:"roots"`
	// Mirrors pairs a canonical skill folder with its mirror (such as
	// .agents/skills and .claude/skills): the admin console's overview
	// shows their drift, as 'skillgate drift' does.
	Mirrors []struct {
		Canonical string `yaml:"canonical"`
		Mirror    string `yaml:"mirror"`
	} `yaml:"mirrors"`
	Limits struct {
		MaxDepth int `yaml:"max_depth"`
		MaxDirs  int `yaml:"max_dirs"`
	} `yaml:"limits"`
	// Workspace bounds the agents' /workspace trees: per session, and per
	// tenant over all its sessions. 0 takes the default, -1 is unlimited.
	Workspace struct {
		MaxBytes       int64 `yaml:"max_bytes"`
		MaxFiles       int64 `yaml:"max_files"`
		TenantMaxBytes int64 `yaml:"tenant_max_bytes"`
		TenantMaxFiles int64 `yaml:"tenant_max_files"`
	} `yaml:"workspace"`
	// Sessions configures agent sessions; see configSessions.
	Sessions configSessions `yaml:"sessions"`
	// Signing lists the keys trusted to sign skills; see configSigning.
	Signing configSigning `yaml:"signing"`
	// Sandbox configures how approved skills' servers run when their
	// capabilities are called; see configSandbox and docs/sandbox.md.
	Sandbox configSandbox `yaml:"sandbox"`
	// Executors configures provider-neutral executors (docs/executors.md).
	Executors struct {
		// Preferences order the providers the resolver picks from when a
		// call names none: the tenant's order first, then the global one.
		Preferences struct {
			Global  []string            `yaml:"global"`
			Tenants map[string][]string `yaml:"tenants"`
		} `yaml:"preferences"`
	} `yaml:"executors"`
	// S3 and TenantLibraries configure the bucket and what skillgate
	// keeps in it (docs/storage.md).
	S3              configS3              `yaml:"s3"`
	TenantLibraries configTenantLibraries `yaml:"tenant_libraries"`
	// Credentials configures where ${NAME} references of mcp.json
	// resolve; see configCredentials.
	Credentials configCredentials `yaml:"credentials"`
	// Packages configures where the packages that servers launch (npx
	// PKG, uvx PKG) are fetched from; see configPackages.
	Packages configPackages `yaml:"packages"`
}

// configPackages is the packages section of config.yaml: the registries
// (or mirrors) and local caches that package launches are fetched from
// at install and update (docs/supply-chain.md).
type configPackages struct {
	// Timeout bounds one package's fetch ("5m" when empty).
	Timeout string `yaml:"timeout"`
	// MaxBytes and MaxFiles bound one fetched tree (0: 1 GiB and
	// 200,000 files).
	MaxBytes int64 `yaml:"max_bytes"`
	MaxFiles int   `yaml:"max_files"`
	NPM      struct {
		// Registry is the npm registry or a mirror.
		Registry string `yaml:"registry"`
		// Cache is an npm cache directory shared by fetches.
		Cache string `yaml:"cache"`
		// Offline fetches from Cache only.
		Offline bool `yaml:"offline"`
	} `yaml:"npm"`
	PyPI struct {
		// Index is a PEP 503 simple index or a mirror.
		Index string `yaml:"index"`
		// FindLinks is a local directory of wheels.
		FindLinks string `yaml:"find_links"`
		// Offline fetches from FindLinks only.
		Offline bool `yaml:"offline"`
		// Python is the interpreter that fetches and runs them.
		Python string `yaml:"python"`
	} `yaml:"pypi"`
}

// options returns the fetcher options c configures, registry overriding
// the npm registry when set (--registry).
func (c configPackages) options(registry string) (launch.Options, error) {
	o := launch.Options{}
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 {
			return o, fmt.Errorf("timeout %q: use a duration such as 5m", c.Timeout)
		}
		o.Timeout = d
	}
	if c.MaxBytes < 0 || c.MaxFiles < 0 {
		return o, errors.New("max_bytes and max_files must be 0 (the default) or more")
	}
	o.MaxBytes, o.MaxFiles = c.MaxBytes, c.MaxFiles
	o.NPM = launch.NPMOptions{Registry: c.NPM.Registry, Cache: c.NPM.Cache, Offline: c.NPM.Offline}
	if registry != "" {
		o.NPM.Registry = registry
	}
	o.PyPI = launch.PyPIOptions{Index: c.PyPI.Index, FindLinks: c.PyPI.FindLinks, Offline: c.PyPI.Offline, Python: c.PyPI.Python}
	for _, u := range []struct{ field, v string }{{"npm.registry", o.NPM.Registry}, {"pypi.index", o.PyPI.Index}} {
		if u.v == "" {
			continue
		}
		if pu, err := url.Parse(u.v); err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" || pu.User != nil {
			return o, fmt.Errorf("%s %q: use an http(s) URL without credentials", u.field, u.v)
		}
	}
	for _, d := range []struct{ field, v string }{{"npm.cache", o.NPM.Cache}, {"pypi.find_links", o.PyPI.FindLinks}} {
		if d.v != "" && !filepath.IsAbs(d.v) {
			return o, fmt.Errorf("%s %q: use an absolute path", d.field, d.v)
		}
	}
	if o.NPM.Offline && o.NPM.Cache == "" {
		return o, errors.New("npm.offline needs npm.cache: the directory packages are fetched from")
	}
	if o.PyPI.Offline && o.PyPI.FindLinks == "" {
		return o, errors.New("pypi.offline needs pypi.find_links: the directory of wheels packages are fetched from")
	}
	return o, nil
}

// configCredentials is the credentials section of config.yaml.
type configCredentials struct {
	// FromEnvironment lists the variables of skillgate's own environment
	// that ${NAME} may resolve to, after the credential store. Nothing
	// else in the environment is ever given to a server.
	FromEnvironment []string `yaml:"from_environment"`
}

// config loads the configuration file, if any, and validates all of it
// (decodeConfig, then validateConfig): every command reads it here.
func (m *Main) config() (*Config, error) {
	p := m.configPath
	explicit := p != ""
	if !explicit {
		p = filepath.Join(m.data(), "config.yaml")
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) && !explicit {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(b) > 1<<20 {
		return nil, fmt.Errorf("config %s: larger than 1 MiB", p)
	}
	var c Config
	if err := decodeConfig(p, b, &c); err != nil {
		return nil, err
	}
	if err := m.validateConfig(p, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// roots resolves the roots to scan: flags (each of trust flagTrust, ""
// meaning imported), else the configuration file, else the conventional
// locations (imported: trust is never assumed, only configured).
func (m *Main) roots(flagRoots []string, flagTrust string, c *Config) ([]discover.Root, error) {
	var roots []discover.Root
	trust := capability.TrustImported
	if flagTrust != "" {
		t, err := capability.ParseTrust(flagTrust)
		if err != nil {
			return nil, usageErr("--trust: %v", err)
		}
		if len(flagRoots) == 0 {
			return nil, usageErr("--trust applies to --root flags: give the roots it applies to, or set trust per root in the configuration file")
		}
		trust = t
	}
	for _, s := range flagRoots {
		r, err := discover.ParseRoot(s)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		r.Trust = trust
		roots = append(roots, r)
	}
	if len(roots) > 0 {
		return roots, nil
	}
	for i, cr := range c.Roots {
		r := discover.Root{Path: expandHome(cr.Path, m.Getenv("HOME")), Scope: discover.ScopeProject, Trust: capability.TrustImported}
		if cr.Scope != "" {
			sc, err := discover.ParseScope(cr.Scope)
			if err != nil {
				return nil, fmt.Errorf("config roots[%d]: %w", i, err)
			}
			r.Scope = sc
		}
		if cr.Trust != "" {
			t, err := capability.ParseTrust(cr.Trust)
			if err != nil {
				return nil, fmt.Errorf("config roots[%d].trust: %w", i, err)
			}
			r.Trust = t
		}
		roots = append(roots, r)
	}
	if len(roots) > 0 {
		return roots, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	roots = discover.DefaultRoots(m.Getenv("HOME"), wd)
	for i := range roots {
		roots[i].Trust = capability.TrustImported
	}
	return roots, nil
}

// hardLinkRoots returns the absolute paths of the configured roots whose
// files may be hard links.
func (m *Main) hardLinkRoots(c *Config) ([]string, error) {
	var out []string
	for i, cr := range c.Roots {
		switch cr.HardLinks {
		case "", "refuse":
		case "allow":
			abs, err := filepath.Abs(expandHome(cr.Path, m.Getenv("HOME")))
			if err != nil {
				return nil, fmt.Errorf("config roots[%d]: %w", i, err)
			}
			out = append(out, abs)
		default:
			return nil, fmt.Errorf("config roots[%d].hard_links: %q: use allow or refuse", i, cr.HardLinks)
		}
	}
	return out, nil
}

func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, p[1:])
	}
	return p
}

func (m *Main) limits(c *Config, maxDepth, maxDirs int) discover.Limits {
	lim := discover.DefaultLimits
	if c.Limits.MaxDepth > 0 {
		lim.MaxDepth = c.Limits.MaxDepth
	}
	if c.Limits.MaxDirs > 0 {
		lim.MaxDirs = c.Limits.MaxDirs
	}
	if maxDepth > 0 {
		lim.MaxDepth = maxDepth
	}
	if maxDirs > 0 {
		lim.MaxDirs = maxDirs
	}
	return lim
}

// openRegistry opens the registry of the data directory. bulk lets a
// first scan into an empty store skip the write-ahead log
// (sqlite.DB.BulkFirstScan): only for a process that does nothing else
// with the store meanwhile.
func (m *Main) openRegistry(ctx context.Context, lim discover.Limits, bulk bool) (*registry.Registry, func(), error) {
	st, err := m.openStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	if lite, ok := st.(*sqlite.DB); ok {
		lite.BulkFirstScan = bulk
	}
	sigs, err := m.signatureChecker()
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return registry.New(st, registry.Options{Limits: lim, Logger: m.logger(), Signatures: sigs}), func() { st.Close() }, nil
}

// signatureChecker checks the signatures of first_party skills at scan
// with the keys of signing.keys.
func (m *Main) signatureChecker() (registry.SignatureChecker, error) {
	cfg, err := m.config()
	if err != nil {
		return nil, usageErr("%v", err)
	}
	kr, err := m.keyring(cfg)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	tc := &signature.TreeChecker{Keyring: kr, Trust: signature.TrustFirstParty}
	return registry.SignatureCheckerFunc(func(ctx context.Context, root string) registry.RootSignatures {
		return tc.Root(ctx, root)
	}), nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// isTerminal reports whether w writes to a character device (a
// terminal), through a termtext.Writer or not.
func isTerminal(w io.Writer) bool {
	_, ok := terminal(w)
	return ok
}

// terminal returns the terminal w writes to, through a termtext.Writer or
// not: for skillgate's own control sequences (scan's progress line),
// which must reach it unrendered.
func terminal(w io.Writer) (*os.File, bool) {
	if t, ok := w.(*termtext.Writer); ok {
		w = t.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return nil, false
	}
	fi, err := f.Stat()
	return f, err == nil && fi.Mode()&os.ModeCharDevice != 0
}
