package app

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/fileinfo"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/signature"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/launch"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

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
	// Sessions configures agent sessions; see ConfigSessions.
	Sessions ConfigSessions `yaml:"sessions"`
	// Signing lists the keys trusted to sign skills; see ConfigSigning.
	Signing ConfigSigning `yaml:"signing"`
	// Sandbox configures how approved skills' servers run when their
	// capabilities are called; see ConfigSandbox and docs/sandbox.md.
	Sandbox ConfigSandbox `yaml:"sandbox"`
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
	S3              ConfigS3              `yaml:"s3"`
	TenantLibraries ConfigTenantLibraries `yaml:"tenant_libraries"`
	// Credentials configures where ${NAME} references of mcp.json
	// resolve; see ConfigCredentials.
	Credentials ConfigCredentials `yaml:"credentials"`
	// Packages configures where the packages that servers launch (npx
	// PKG, uvx PKG) are fetched from; see ConfigPackages.
	Packages ConfigPackages `yaml:"packages"`
	// Scanner configures the content scanner's reference skills; see
	// ConfigScanner.
	Scanner ConfigScanner `yaml:"scanner"`
	// Connections configures the OAuth connections to remote MCP servers
	// (docs/connections.md); see ConfigConnections.
	Connections ConfigConnections `yaml:"connections"`
}

// ConfigPackages is the packages section of config.yaml: the registries
// (or mirrors) and local caches that package launches are fetched from
// at install and update (docs/supply-chain.md).
type ConfigPackages struct {
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
func (c ConfigPackages) Options(registry string) (launch.Options, error) {
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

// ConfigCredentials is the credentials section of config.yaml.
type ConfigCredentials struct {
	// FromEnvironment lists the variables of skillgate's own environment
	// that ${NAME} may resolve to, after the credential store. Nothing
	// else in the environment is ever given to a server.
	FromEnvironment []string `yaml:"from_environment"`
}

// config loads the configuration file, if any, and validates all of it
// (decodeConfig, then validateConfig): every command reads it here.
func (a *App) Config() (*Config, error) {
	p := a.opts.ConfigPath
	explicit := p != ""
	if !explicit {
		p = filepath.Join(a.Data(), "config.yaml")
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
	if err := a.validateConfig(p, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// roots resolves the roots to scan: flags (each of trust flagTrust, ""
// meaning imported), else the configuration file, else the conventional
// locations (imported: trust is never assumed, only configured).
func (a *App) Roots(flagRoots []string, flagTrust string, c *Config) ([]discover.Root, error) {
	var roots []discover.Root
	trust := capability.TrustImported
	if flagTrust != "" {
		t, err := capability.ParseTrust(flagTrust)
		if err != nil {
			return nil, Usagef("--trust: %v", err)
		}
		if len(flagRoots) == 0 {
			return nil, Usagef("--trust applies to --root flags: give the roots it applies to, or set trust per root in the configuration file")
		}
		trust = t
	}
	for _, s := range flagRoots {
		r, err := discover.ParseRoot(s)
		if err != nil {
			return nil, Usagef("%v", err)
		}
		r.Trust = trust
		roots = append(roots, r)
	}
	if len(roots) > 0 {
		return roots, nil
	}
	for i, cr := range c.Roots {
		r := discover.Root{Path: expandHome(cr.Path, a.getenv("HOME")), Scope: discover.ScopeProject, Trust: capability.TrustImported}
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
	roots = discover.DefaultRoots(a.getenv("HOME"), wd)
	for i := range roots {
		roots[i].Trust = capability.TrustImported
	}
	return roots, nil
}

// hardLinkRoots returns the absolute paths of the configured roots whose
// files may be hard links.
func (a *App) hardLinkRoots(c *Config) ([]string, error) {
	var out []string
	for i, cr := range c.Roots {
		switch cr.HardLinks {
		case "", "refuse":
		case "allow":
			abs, err := filepath.Abs(expandHome(cr.Path, a.getenv("HOME")))
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

// Limits are the bounds of a walk: the flags' (maxDepth, maxDirs, 0 when
// unset) over the configuration's over discover's defaults.
func Limits(c *Config, maxDepth, maxDirs int) discover.Limits {
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

// decodeConfig decodes a configuration file's bytes into c. Unknown keys
// and values of the wrong kind are reported with the file, the line, the
// key's path and what is accepted there (the closest valid key for a
// misspelt one), never as Go types.
func decodeConfig(file string, b []byte, c *Config) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			return fmt.Errorf("config %s:%s: %s (YAML syntax)", file, m[1], m[2])
		}
		return fmt.Errorf("config %s: %s (YAML syntax)", file, msg)
	}
	if len(doc.Content) == 0 { // empty file
		return nil
	}
	var problems []string
	checkNode(doc.Content[0], reflect.TypeOf(c).Elem(), "", &problems)
	if len(problems) > 0 {
		for i, p := range problems {
			problems[i] = "config " + file + ":" + p
		}
		return errors.New(strings.Join(problems, "\n"))
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// validateConfig checks the values of a decoded configuration that its
// shape does not: durations, scopes, trust levels, modes, providers and
// the signing keys. [App.Config], the one loader every command uses,
// runs it, so a mistake fails the first command that reads the file
// (scan as much as serve), not the one that first uses the value. Each
// problem names the file, the field and what to write instead; all of them
// are reported at once.
func (a *App) validateConfig(file string, c *Config) error {
	var problems []string
	add := func(field string, err error) {
		problems = append(problems, fmt.Sprintf("config %s: %s: %v", file, field, err))
	}
	if _, err := c.idleExpiry(); err != nil {
		add("sessions.idle_expiry", err)
	}
	for i, r := range c.Roots {
		if r.Scope != "" {
			if _, err := discover.ParseScope(r.Scope); err != nil {
				add(fmt.Sprintf("roots[%d].scope", i), err)
			}
		}
		if r.Trust != "" {
			if _, err := capability.ParseTrust(r.Trust); err != nil {
				add(fmt.Sprintf("roots[%d].trust", i), err)
			}
		}
		switch r.HardLinks {
		case "", "refuse", "allow":
		default:
			add(fmt.Sprintf("roots[%d].hard_links", i), fmt.Errorf("%q: use allow or refuse", r.HardLinks))
		}
	}
	keys := make([]string, 0, len(c.Sandbox.Skills))
	for k := range c.Sandbox.Skills {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := sandbox.ParseMode(c.Sandbox.Skills[k]); err != nil {
			add("sandbox.skills."+k, err)
		}
	}
	if _, err := executorOptions(c, a.executorCatalog()); err != nil {
		add("executors", err)
	}
	if _, err := c.Packages.Options(""); err != nil {
		add("packages", err)
	}
	for _, err := range c.Scanner.check() {
		problems = append(problems, fmt.Sprintf("config %s: %v", file, err))
	}
	if err := credential.CheckFromEnvironment("credentials.from_environment", c.Credentials.FromEnvironment); err != nil {
		problems = append(problems, fmt.Sprintf("config %s: %v", file, err))
	}
	for _, err := range c.Connections.check() {
		problems = append(problems, fmt.Sprintf("config %s: %v", file, err))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	if _, err := a.Keyring(c); err != nil { // its errors name the file and the key
		return err
	}
	return nil
}

// yamlLine splits the YAML library's "line N: problem".
var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// checkNode compares n with the Go type t it decodes into, appending a
// "LINE: problem" for each unknown key and each value of the wrong kind.
func checkNode(n *yaml.Node, t reflect.Type, path string, problems *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	at := func(format string, args ...any) {
		*problems = append(*problems, strconv.Itoa(n.Line)+": "+fmt.Sprintf(format, args...))
	}
	name := path
	if name == "" {
		name = "the top level"
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			at("%s must be a mapping of keys (%s), not %s", name, strings.Join(yamlKeys(t), ", "), describeNode(n))
			return
		}
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			if k := yamlKey(t.Field(i)); k != "" {
				fields[k] = t.Field(i).Type
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				valid := yamlKeys(t)
				hint := ""
				if s := policy.Suggest(k.Value, valid); s != "" {
					hint = fmt.Sprintf(" (did you mean %s?)", s)
				}
				*problems = append(*problems, fmt.Sprintf("%d: unknown key %s%s; valid keys %s: %s",
					k.Line, join(path, k.Value), hint, under(path), strings.Join(valid, ", ")))
				continue
			}
			checkNode(v, ft, join(path, k.Value), problems)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			at("%s must be a mapping, not %s", name, describeNode(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkNode(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), problems)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			at("%s must be a list, not %s", name, describeNode(n))
			return
		}
		for i, e := range n.Content {
			checkNode(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), problems)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			at("%s must be a whole number, not %s", name, describeNode(n))
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			at("%s must be true or false, not %s", name, describeNode(n))
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			at("%s must be a single value, not %s", name, describeNode(n))
		}
	}
}

// describeNode names what a YAML node holds, for messages.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// yamlKey is the key of a struct field in YAML, or "" when it has none.
func yamlKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch tag {
	case "-":
		return ""
	case "":
		return strings.ToLower(f.Name)
	}
	return tag
}

// yamlKeys lists the keys a struct type accepts, sorted.
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if k := yamlKey(t.Field(i)); k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func under(path string) string {
	if path == "" {
		return "at the top level"
	}
	return "under " + path
}

// ConfigSessions is the sessions: section of the configuration file.
type ConfigSessions struct {
	// IdleExpiry is how long a session may go unused before it expires
	// ("30d", "12h"); empty means defaultIdleExpiry, and "0" or "never"
	// keeps sessions until an operator removes them.
	IdleExpiry string `yaml:"idle_expiry"`
}

// defaultIdleExpiry is the idle expiry of sessions when the configuration
// names none: sessions do not pile up unless an operator asks for it.
const defaultIdleExpiry = 24 * time.Hour

// idleExpiry returns the configured idle expiry (0: never). The error
// names no field: [App.validateConfig] adds it.
func (c *Config) idleExpiry() (time.Duration, error) {
	switch s := c.Sessions.IdleExpiry; s {
	case "":
		return defaultIdleExpiry, nil
	case "0", "never":
		return 0, nil
	}
	d, err := ParseIdle(c.Sessions.IdleExpiry)
	if err != nil {
		return 0, fmt.Errorf("%w (0 or never keeps sessions; the default is 1d)", err)
	}
	return d, nil
}

// parseIdle reads a positive idle time, as policy.ParseDuration writes
// durations everywhere (90m, 12h, 30d).
func ParseIdle(s string) (time.Duration, error) {
	d, err := policy.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration like 90m, 12h or 30d", s)
	}
	return d, nil
}

// ConfigS3 names the bucket when neither the --s3-* flags nor the
// SKILLGATE_S3_* variables do (credentials come from the environment only).
type ConfigS3 struct {
	Endpoint string `yaml:"endpoint"`
	Bucket   string `yaml:"bucket"`
	Region   string `yaml:"region"`
	Prefix   string `yaml:"prefix"`
	// MirrorRoots uploads the scanned roots' valid skills to the bucket
	// after every scan (scan --mirror-s3 does it once).
	MirrorRoots bool `yaml:"mirror_roots"`
}

// ConfigTenantLibraries turns on per-tenant skill libraries
// (docs/storage.md).
type ConfigTenantLibraries struct {
	// Store is "s3" (the bucket of the S3 settings); "" turns libraries off.
	Store string `yaml:"store"`
	// Tenants limits the libraries to these tenants; empty: every tenant
	// with a {tenant}/skills/ prefix in the bucket.
	Tenants    []string `yaml:"tenants"`
	MaxTenants int      `yaml:"max_tenants"`
	MaxObjects int      `yaml:"max_objects"`
	// PollInterval is how often 'serve' lists the bucket for uploads
	// ("10s", "1m"); empty means DefaultLibraryPoll, "0" or "never" turns
	// polling off (rescans only).
	PollInterval string `yaml:"poll_interval"`
}

// ConfigSandbox is config.yaml's sandbox section (docs/sandbox.md).
type ConfigSandbox struct {
	// Limits bound every confined server: 0 (or absent) takes the
	// default, -1 means no bound.
	Limits struct {
		MemoryBytes   int64 `yaml:"memory_bytes"`
		Processes     int64 `yaml:"processes"`
		OpenFiles     int64 `yaml:"open_files"`
		FileSizeBytes int64 `yaml:"file_size_bytes"`
		CPUSeconds    int64 `yaml:"cpu_seconds"`
		TmpBytes      int64 `yaml:"tmp_bytes"`
	} `yaml:"limits"`
	// Skills sets a skill's mode by key: bubblewrap (the default) or none,
	// which only a first_party skill may have.
	Skills map[string]string `yaml:"skills"`
}

// ConfigSigning is the signing section of config.yaml: the keys trusted
// to sign skills.
type ConfigSigning struct {
	Keys []ConfigKey `yaml:"keys"`
}

// ConfigKey is one trusted key in config.yaml.
type ConfigKey struct {
	Name string `yaml:"name"`
	// PublicKey is a PEM block, or the path of a file holding one
	// (relative to the configuration file's directory).
	PublicKey     string   `yaml:"public_key"`
	Trust         []string `yaml:"trust"`
	NotBefore     string   `yaml:"not_before"`
	NotAfter      string   `yaml:"not_after"`
	Revoked       bool     `yaml:"revoked"`
	RevokedReason string   `yaml:"revoked_reason"`
}

// keyring builds the trusted keys of cfg.
func (a *App) Keyring(cfg *Config) (*signature.Keyring, error) {
	file := a.opts.ConfigPath
	if file == "" {
		file = filepath.Join(a.Data(), "config.yaml")
	}
	keys := make([]signature.TrustedKey, 0, len(cfg.Signing.Keys))
	for i, k := range cfg.Signing.Keys {
		at := fmt.Sprintf("config %s: signing.keys[%d] (%s)", file, i, k.Name)
		pemData := []byte(k.PublicKey)
		if !strings.Contains(k.PublicKey, "-----BEGIN") {
			if k.PublicKey == "" {
				return nil, fmt.Errorf("%s: public_key is required (a PEM block, or a .pub file from 'skillgate key gen')", at)
			}
			p := k.PublicKey
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(file), p)
			}
			b, err := fileinfo.ReadRegular(p, signature.MaxKeyFileBytes)
			if err != nil {
				return nil, fmt.Errorf("%s: public_key: %w", at, err)
			}
			pemData = b
		}
		pub, err := signature.ParsePublicKey(pemData)
		if err != nil {
			return nil, fmt.Errorf("%s: public_key: %w", at, err)
		}
		tk := signature.TrustedKey{Name: k.Name, Public: pub, Trust: k.Trust, Revoked: k.Revoked, RevokedReason: k.RevokedReason}
		for _, t := range []struct {
			key string
			v   string
			to  *time.Time
		}{{"not_before", k.NotBefore, &tk.NotBefore}, {"not_after", k.NotAfter, &tk.NotAfter}} {
			if t.v == "" {
				continue
			}
			if *t.to, err = time.Parse(time.RFC3339, t.v); err != nil {
				return nil, fmt.Errorf("%s: %s %q: use an RFC 3339 time such as 2027-01-01T00:00:00Z", at, t.key, t.v)
			}
		}
		keys = append(keys, tk)
	}
	kr, err := signature.NewKeyring(keys)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", file, err)
	}
	return kr, nil
}

// configKeyring loads the configuration and the keyring of its
// signing.keys, each failure a usage error (the configuration is what to
// fix).
func (a *App) configKeyring() (*Config, *signature.Keyring, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, nil, Usagef("%v", err)
	}
	kr, err := a.Keyring(cfg)
	if err != nil {
		return nil, nil, Usagef("%v", err)
	}
	return cfg, kr, nil
}

// executorOptions turns the configuration's executors section into the
// broker's options, on the built-in catalog (the running gateway merges
// the operator catalogs over it): every provider a preference names must
// be one of known's, the built-in catalog merged with the operator
// catalogs (the errors name the field under executors:, for
// [App.validateConfig]). Credentials are read from the process environment until the
// credential store answers per principal.
func executorOptions(cfg *Config, known *executor.Catalog) (broker.ExecutorOptions, error) {
	prefs := cfg.Executors.Preferences
	check := func(at string, names []string) error {
		for i, n := range names {
			if _, ok := known.Provider(n); !ok {
				var names []string
				for _, p := range known.Providers {
					names = append(names, p.Name)
				}
				return fmt.Errorf("preferences.%s[%d]: unknown provider %q; use one of %s (a new provider is declared in an operator catalog, DATA/executors)", at, i, n, strings.Join(names, ", "))
			}
		}
		return nil
	}
	if err := check("global", prefs.Global); err != nil {
		return broker.ExecutorOptions{}, err
	}
	tenants := make([]string, 0, len(prefs.Tenants))
	for t := range prefs.Tenants {
		tenants = append(tenants, t)
	}
	slices.Sort(tenants)
	for _, t := range tenants {
		if err := capability.CheckID("tenant", t); err != nil {
			return broker.ExecutorOptions{}, fmt.Errorf("preferences.tenants: %v", err)
		}
		if err := check("tenants."+t, prefs.Tenants[t]); err != nil {
			return broker.ExecutorOptions{}, err
		}
	}
	return broker.ExecutorOptions{Catalog: executor.Builtin(), Preferences: broker.ExecutorPreferences{Global: prefs.Global, Tenants: prefs.Tenants}}, nil
}
