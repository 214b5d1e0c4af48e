package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// maxManifestBytes bounds a package.json or package-lock.json read.
const maxManifestBytes = 32 << 20

// npmLock is what Fetch reads of package-lock.json (lockfileVersion 3).
type npmLock struct {
	Packages map[string]struct {
		Version          string `json:"version"`
		Integrity        string `json:"integrity"`
		Resolved         string `json:"resolved"`
		Link             bool   `json:"link"`
		HasInstallScript bool   `json:"hasInstallScript"`
		InBundle         bool   `json:"inBundle"`
	} `json:"packages"`
}

// npmManifest is what Fetch reads of a package's package.json.
type npmManifest struct {
	Name    string            `json:"name"`
	Version string            `json:"version"`
	Bin     json.RawMessage   `json:"bin"`
	Scripts map[string]string `json:"scripts"`
}

// installScripts are npm's lifecycle scripts that run at install.
var installScripts = []string{"preinstall", "install", "postinstall"}

// fetchNPM runs npm install for l into dir.
func (f *Fetcher) fetchNPM(ctx context.Context, server string, l Launch, dir, work string, allow map[string]string) (Package, error) {
	npm, err := f.opts.LookPath("npm")
	if err != nil {
		return Package{}, fmt.Errorf("%w: server %s is launched with %s, and npm is not installed: install Node.js and npm (Debian: apt-get install nodejs npm); nothing was installed", ErrFetch, server, l.Launcher)
	}
	node, err := f.opts.LookPath("node")
	if err != nil {
		return Package{}, fmt.Errorf("%w: server %s is launched with %s, and node is not installed: install Node.js (Debian: apt-get install nodejs); nothing was installed", ErrFetch, server, l.Launcher)
	}
	if node, err = filepath.Abs(node); err != nil {
		return Package{}, err
	}
	reg := f.opts.NPM.Registry
	home, cache := filepath.Join(work, "home"), filepath.Join(work, "cache")
	for _, d := range []string{home, cache} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return Package{}, err
		}
	}
	userrc, globalrc := filepath.Join(work, "npmrc"), filepath.Join(work, "npmrc-global")
	for _, rc := range []string{userrc, globalrc} {
		if err := os.WriteFile(rc, nil, 0o600); err != nil {
			return Package{}, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte("{\"private\": true}\n"), 0o644); err != nil {
		return Package{}, err
	}
	write := []string{dir, work}
	if c := f.opts.NPM.Cache; c != "" {
		if err := os.MkdirAll(c, 0o700); err != nil {
			return Package{}, fmt.Errorf("%w: packages.npm.cache %s: %w", ErrFetch, c, err)
		}
		cache = c
		write = append(write, c)
	}
	args := []string{"install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier",
		"--save-exact", "--omit=dev",
		"--prefix", dir, "--cache", cache, "--registry", reg,
		"--userconfig", userrc, "--globalconfig", globalrc,
		"--fetch-retries=2", "--fetch-retry-mintimeout=1000", "--fetch-retry-maxtimeout=10000",
		"--loglevel=error", "--color=false"}
	if f.opts.NPM.Offline {
		args = append(args, "--offline")
	}
	args = append(append(args, "--", l.Spec()), l.With...)
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "npm_config_update_notifier=false"}, proxyEnv(f.opts.Env)...)
	out, runErr := f.run(ctx, client{program: npm, args: args, env: env, dir: dir, write: write, watch: []string{dir, work}})
	if runErr != nil {
		if errors.Is(runErr, errTooLarge) {
			return Package{}, fmt.Errorf("%w: server %s: %s from %s: %w; nothing was installed", ErrFetch, server, l.Spec(), reg, runErr)
		}
		if ctx.Err() != nil {
			return Package{}, ctx.Err()
		}
		return Package{}, npmError(server, l, reg, f.opts.NPM.Offline, out, runErr)
	}
	lockData, err := readBounded(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return Package{}, fmt.Errorf("%w: server %s: npm wrote no package-lock.json for %s: %w", ErrFetch, server, l.Spec(), err)
	}
	p, scripts, err := npmLockPins(lockData, server, l, reg)
	if err != nil {
		return Package{}, err
	}
	p.Interpreter = node
	if err := f.npmScripts(ctx, server, l, dir, env, write, npm, scripts, allow); err != nil {
		return Package{}, err
	}
	for i := range scripts {
		if why, ok := allow[scripts[i].Package]; ok {
			scripts[i].Allowed, scripts[i].Why = true, why
		}
	}
	p.Scripts = scripts
	if p.Bin, err = npmBin(dir, l); err != nil {
		return Package{}, fmt.Errorf("%w: server %s: %w", ErrUnsupported, server, err)
	}
	return p, nil
}

// npmLockPins reads what npm installed for l from its package-lock.json,
// lockData: the package's version and integrity (as p's Version and
// Integrity, with Registry reg), every other package of the tree with its
// integrity (p's Dependencies, sorted by name and version, each once), and
// the packages that declare install scripts (in path order). A dependency
// linked from outside the registry, or without an integrity, is refused.
func npmLockPins(lockData []byte, server string, l Launch, reg string) (Package, []Script, error) {
	var lock npmLock
	if err := json.Unmarshal(lockData, &lock); err != nil {
		return Package{}, nil, fmt.Errorf("%w: server %s: package-lock.json: %w", ErrFetch, server, err)
	}
	top, ok := lock.Packages["node_modules/"+l.Package]
	if !ok {
		return Package{}, nil, fmt.Errorf("%w: server %s: npm did not install %s", ErrFetch, server, l.Spec())
	}
	p := Package{Version: top.Version, Integrity: top.Integrity, Registry: reg}
	if p.Integrity == "" {
		return Package{}, nil, fmt.Errorf("%w: server %s: %s gave no integrity for %s@%s; use a registry that does; nothing was installed", ErrFetch, server, reg, l.Package, top.Version)
	}
	seen := map[string]bool{}
	var scripts []Script
	keys := make([]string, 0, len(lock.Packages))
	for k := range lock.Packages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := lock.Packages[k]
		i := strings.LastIndex(k, "node_modules/")
		if k == "" || i < 0 {
			continue
		}
		name := k[i+len("node_modules/"):]
		if e.HasInstallScript {
			scripts = append(scripts, Script{Package: name, Version: e.Version})
		}
		if k == "node_modules/"+l.Package {
			continue
		}
		if e.Link {
			return Package{}, nil, fmt.Errorf("%w: server %s: %s links %s from outside the registry; nothing was installed", ErrUnsupported, server, l.Spec(), name)
		}
		// A bundled dependency comes inside its parent's archive, which
		// the parent's integrity covers.
		if e.Integrity == "" && !e.InBundle {
			return Package{}, nil, fmt.Errorf("%w: server %s: %s gave no integrity for %s@%s; use a registry that does; nothing was installed", ErrFetch, server, reg, name, e.Version)
		}
		if id := name + "@" + e.Version; !seen[id] {
			seen[id] = true
			p.Dependencies = append(p.Dependencies, Dependency{Name: name, Version: e.Version, Integrity: e.Integrity})
		}
	}
	sort.Slice(p.Dependencies, func(i, j int) bool {
		a, b := p.Dependencies[i], p.Dependencies[j]
		return a.Name < b.Name || a.Name == b.Name && a.Version < b.Version
	})
	return p, scripts, nil
}

// npmScripts refuses a tree with install scripts the operator has not
// allowed, naming each package and its scripts, and runs the allowed ones
// (npm rebuild) in the fetch sandbox.
func (f *Fetcher) npmScripts(ctx context.Context, server string, l Launch, dir string, env, write []string, npm string, scripts []Script, allow map[string]string) error {
	var refused, allowed []string
	for _, s := range scripts {
		if _, ok := allow[s.Package]; ok {
			allowed = append(allowed, s.Package)
			continue
		}
		what := scriptsOf(filepath.Join(dir, "node_modules", filepath.FromSlash(s.Package), "package.json"))
		refused = append(refused, fmt.Sprintf("%s@%s (%s)", s.Package, s.Version, what))
	}
	if len(refused) > 0 {
		first := scripts[0].Package
		for _, s := range scripts {
			if _, ok := allow[s.Package]; !ok {
				first = s.Package
				break
			}
		}
		return fmt.Errorf("%w: server %s: %s needs install scripts that skillgate does not run: %s; if the server cannot work without them, allow the package by name: --allow-scripts %s --why \"…\"; nothing was installed",
			ErrInstallScript, server, l.Spec(), strings.Join(refused, ", "), first)
	}
	if len(allowed) == 0 {
		return nil
	}
	args := append([]string{"rebuild", "--foreground-scripts", "--ignore-scripts=false", "--prefix", dir, "--loglevel=error", "--color=false", "--"}, allowed...)
	if out, err := f.run(ctx, client{program: npm, args: args, env: env, dir: dir, write: write, watch: []string{dir}}); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: server %s: the allowed install scripts of %s failed (exit %d): %s; nothing was installed",
			ErrFetch, server, strings.Join(allowed, ", "), exitCode(err), lastLines(npmOutput(out), 4))
	}
	return nil
}

// scriptsOf lists the install scripts a package.json declares, as
// `postinstall: node install.js`.
func scriptsOf(file string) string {
	data, err := readBounded(file)
	var m npmManifest
	if err != nil || json.Unmarshal(data, &m) != nil {
		return "install scripts"
	}
	var out []string
	for _, name := range installScripts {
		if s, ok := m.Scripts[name]; ok {
			out = append(out, name+": "+strictjson.Quote(s, 200))
		}
	}
	if len(out) == 0 {
		return "a native build (binding.gyp)"
	}
	return strings.Join(out, ", ")
}

// npmBin returns the program of l's package that the launcher would run,
// relative to dir: the bin named by l.Bin, the package's only bin, or the
// one named after the package.
func npmBin(dir string, l Launch) (string, error) {
	pkgDir := path.Join("node_modules", l.Package)
	data, err := readBounded(filepath.Join(dir, filepath.FromSlash(pkgDir), "package.json"))
	if err != nil {
		return "", fmt.Errorf("%s: %w", l.Package, err)
	}
	var m npmManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("%s: package.json: %w", l.Package, err)
	}
	base := l.Package[strings.LastIndex(l.Package, "/")+1:]
	bins := map[string]string{}
	var single string
	if len(m.Bin) > 0 && json.Unmarshal(m.Bin, &single) == nil {
		bins[base] = single
	} else if len(m.Bin) > 0 {
		if err := json.Unmarshal(m.Bin, &bins); err != nil {
			return "", fmt.Errorf("%s: package.json: bin: %w", l.Package, err)
		}
	}
	names := make([]string, 0, len(bins))
	for n := range bins {
		names = append(names, n)
	}
	sort.Strings(names)
	var rel string
	switch {
	case len(bins) == 0:
		return "", fmt.Errorf("%s@%s has no program to run (its package.json has no bin); declare the program with node and its path instead", l.Package, m.Version)
	case l.Bin != "":
		r, ok := bins[l.Bin]
		if !ok {
			return "", fmt.Errorf("%s@%s has no program %s; it has %s", l.Package, m.Version, strictjson.Quote(l.Bin, 100), nameList(names))
		}
		rel = r
	case len(bins) == 1:
		rel = bins[names[0]]
	default:
		r, ok := bins[base]
		if !ok {
			return "", fmt.Errorf("%s@%s has several programs (%s); name one: npx --package=%s %s", l.Package, m.Version, nameList(names), l.Package, nameList(names[:1]))
		}
		rel = r
	}
	clean := path.Clean(strings.TrimPrefix(filepath.ToSlash(rel), "./"))
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("%s@%s: its program %s lies outside the package", l.Package, m.Version, strictjson.Quote(rel, 200))
	}
	full := path.Join(pkgDir, clean)
	if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(full))); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s@%s: its program %s is not a file in the package", l.Package, m.Version, clean)
	}
	return full, nil
}

// npmError turns npm's failure into what the operator can act on.
func npmError(server string, l Launch, reg string, offline bool, out string, err error) error {
	has := func(s ...string) bool { return containsAny(out, s...) }
	spec := l.Spec()
	// needs is the error naming what npm could not find (the spec after
	// before, up to cut or the end of the line, without a final "."),
	// when that is a dependency of l, not l; nil otherwise.
	needs := func(before, cut, missing string) error {
		dep, _, _ := strings.Cut(npmAfter(out, before), cut)
		dep = strings.TrimSuffix(dep, ".")
		if name := npmSpecName(dep); name == "" || name == l.Package {
			return nil
		}
		return fmt.Errorf("%w: server %s: %s needs %s, which %s; fix the version in mcp.json to one whose dependencies the registry has, or set packages.npm.registry to the registry that has them; nothing was installed",
			ErrFetch, server, spec, strictjson.Quote(dep, 200), missing)
	}
	switch {
	case has("EINTEGRITY"):
		return fmt.Errorf("%w: server %s: %s from %s does not match its integrity hash (EINTEGRITY): the registry served other bytes than it announced, or a cache holds a corrupted copy; nothing was installed",
			ErrFetch, server, spec, reg)
	case offline && has("ENOTCACHED"):
		return fmt.Errorf("%w: server %s: %s is not in the local cache and packages.npm.offline is set; fetch it once with the network, or fill the cache (npm cache add %s --cache DIR); nothing was installed",
			ErrFetch, server, spec, spec)
	case has("ETARGET", "No matching version"):
		// "No matching version found for zeta-lib@^9."
		if err := needs("No matching version found for ", ". ", "no version in "+reg+" satisfies"); err != nil {
			return err
		}
		want := l.Requested
		if want == "" {
			want = "latest"
		}
		return fmt.Errorf("%w: server %s: %s has no version matching %s in %s; see the versions with npm view %s versions --registry %s, and fix the version in mcp.json; nothing was installed",
			ErrFetch, server, l.Package, strictjson.Quote(want, 100), reg, l.Package, reg)
	case has("E404", "404 Not Found"):
		// "The requested resource 'gone-lib@^1.0.0' could not be found"
		if err := needs("The requested resource '", "' ", "is not in the registry "+reg); err != nil {
			return err
		}
		return fmt.Errorf("%w: server %s: %s is not in the registry %s; check the package name in mcp.json, or set packages.npm.registry to the registry that has it; nothing was installed",
			ErrFetch, server, l.Package, reg)
	case has("ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH", "EHOSTUNREACH", "network request"):
		return fmt.Errorf("%w: server %s: the npm registry %s cannot be reached to fetch %s (%s); check the network, or set packages.npm.registry in config.yaml (or --registry) to a mirror this machine reaches; nothing was installed",
			ErrFetch, server, reg, spec, npmCode(out))
	case has("E401", "E403"):
		return fmt.Errorf("%w: server %s: the npm registry %s refused %s (%s); nothing was installed", ErrFetch, server, reg, spec, npmCode(out))
	}
	return fmt.Errorf("%w: server %s: npm install %s from %s failed (exit %d): %s; nothing was installed", ErrFetch, server, spec, reg, exitCode(err), lastLines(npmOutput(out), 4))
}

// npmAfter returns the rest of the line of out after the first before,
// trimmed, or "".
func npmAfter(out, before string) string {
	_, rest, ok := strings.Cut(out, before)
	if !ok {
		return ""
	}
	rest, _, _ = strings.Cut(rest, "\n")
	return strings.TrimSpace(rest)
}

// npmSpecName is the package name of an npm spec: "@acme/x@^1" is
// "@acme/x", a spec without a version its name.
func npmSpecName(spec string) string {
	if i := strings.LastIndex(spec, "@"); i > 0 {
		return spec[:i]
	}
	return spec
}

// npmOutput is npm's output without its pointer to its debug log, which
// lies in the fetch's work directory, removed with it.
func npmOutput(out string) string {
	lines := strings.Split(out, "\n")
	keep := lines[:0]
	for _, l := range lines {
		if !strings.Contains(l, "A complete log of this run can be found in") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// npmCode returns the first "npm error code X" of out, or "no answer".
func npmCode(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if _, code, ok := strings.Cut(line, "error code "); ok {
			return strings.TrimSpace(code)
		}
	}
	return "no answer"
}

// readBounded reads a manifest, refusing one over maxManifestBytes.
func readBounded(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxManifestBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxManifestBytes)
	}
	return os.ReadFile(file)
}
