package launch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// SiteDir is where a Python package's tree keeps its modules, inside the
// fetched tree.
const SiteDir = "site"

// pipReport is what Fetch reads of pip's installation report.
type pipReport struct {
	Install []struct {
		Requested    bool `json:"requested"`
		DownloadInfo struct {
			URL         string `json:"url"`
			ArchiveInfo struct {
				Hash   string            `json:"hash"`
				Hashes map[string]string `json:"hashes"`
			} `json:"archive_info"`
		} `json:"download_info"`
		Metadata struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"metadata"`
	} `json:"install"`
}

var (
	entryPointPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_.]*$`)
	pep503Runs        = regexp.MustCompile(`[-_.]+`)
	sha256Pattern     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	distNamePattern   = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	versionPattern    = regexp.MustCompile(`^[A-Za-z0-9.+!_-]+$`)
	distNameRun       = regexp.MustCompile(`^[A-Za-z0-9._-]+`)
)

// normalizeName is a Python package name as PEP 503 compares it.
func normalizeName(s string) string { return strings.ToLower(pep503Runs.ReplaceAllString(s, "-")) }

// python returns the real executable of the configured interpreter, asked
// of the interpreter itself (a pyenv or asdf shim resolves to the
// installation it runs).
func (f *Fetcher) python(ctx context.Context) (string, error) {
	name := f.opts.PyPI.Python
	if name == "" {
		name = "python3"
	}
	p, err := f.opts.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found: install Python 3 (Debian: apt-get install python3 python3-pip), or set packages.pypi.python in config.yaml", name)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, "-c", "import sys; print(sys.executable)")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s does not run (%v)", p, err)
	}
	exe := strings.TrimSpace(string(out))
	if !filepath.IsAbs(exe) {
		return "", fmt.Errorf("%s names no executable of its own (%q)", p, exe)
	}
	return exe, nil
}

// fetchPyPI resolves l with pip (a dry run that reports every
// distribution with its hash), then installs exactly those with
// --require-hashes into dir/site. Only wheels are taken: building a
// source distribution runs its setup code, an install script.
func (f *Fetcher) fetchPyPI(ctx context.Context, server string, l Launch, dir, work string) (Package, error) {
	py, err := f.python(ctx)
	if err != nil {
		return Package{}, fmt.Errorf("%w: server %s is launched with %s: %w; nothing was installed", ErrFetch, server, l.Launcher, err)
	}
	home, cache := filepath.Join(work, "home"), filepath.Join(work, "cache")
	for _, d := range []string{home, cache} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return Package{}, err
		}
	}
	src := f.opts.PyPI
	where := []string{"--index-url", src.Index}
	if src.Offline {
		where = []string{"--no-index"}
	}
	if src.FindLinks != "" {
		where = append(where, "--find-links", src.FindLinks)
	}
	common := []string{"-I", "-m", "pip", "install", "--isolated", "--no-input", "--disable-pip-version-check",
		"--only-binary=:all:", "--cache-dir", cache, "--retries", "1", "--timeout", "30", "--progress-bar", "off"}
	if ca := caBundle(f.opts.Env); ca != "" {
		// pip reads no environment in isolated mode: the CA bundle of a
		// TLS-intercepting proxy is given as an option.
		common = append(common, "--cert", ca)
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE="}, proxyEnv(f.opts.Env)...)
	write := []string{dir, work}
	report := filepath.Join(work, "report.json")
	args := append(append(append([]string{}, common...), "--dry-run", "--ignore-installed", "--report", report), where...)
	args = append(args, "--", l.Spec())
	reg := f.Registry(PyPI)
	if out, err := f.run(ctx, client{program: py, args: args, env: env, dir: work, write: write, watch: []string{dir, work}}); err != nil {
		if errors.Is(err, errTooLarge) {
			return Package{}, fmt.Errorf("%w: server %s: %s from %s: %w; nothing was installed", ErrFetch, server, l.Spec(), reg, err)
		}
		if ctx.Err() != nil {
			return Package{}, ctx.Err()
		}
		return Package{}, pipError(server, l, reg, src.Offline, out, err)
	}
	data, err := readBounded(report)
	if err != nil {
		return Package{}, fmt.Errorf("%w: server %s: pip wrote no report for %s: %w", ErrFetch, server, l.Spec(), err)
	}
	var rep pipReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return Package{}, fmt.Errorf("%w: server %s: pip's report: %w", ErrFetch, server, err)
	}
	p := Package{Registry: reg, Interpreter: py, Dependencies: []Dependency{}}
	var reqs bytes.Buffer
	found := false
	for _, it := range rep.Install {
		name, version := it.Metadata.Name, it.Metadata.Version
		h := it.DownloadInfo.ArchiveInfo.Hashes["sha256"]
		if h == "" {
			if v, ok := strings.CutPrefix(it.DownloadInfo.ArchiveInfo.Hash, "sha256="); ok {
				h = v
			}
		}
		if h == "" {
			return Package{}, fmt.Errorf("%w: server %s: %s gives no sha256 for %s %s, so it cannot be pinned; use an index that does; nothing was installed", ErrFetch, server, reg, name, version)
		}
		if !sha256Pattern.MatchString(h) || !distNamePattern.MatchString(name) || !versionPattern.MatchString(version) {
			return Package{}, fmt.Errorf("%w: server %s: pip reported an unreadable distribution %s %s", ErrFetch, server, strictjson.Quote(name, 100), strictjson.Quote(version, 100))
		}
		fmt.Fprintf(&reqs, "%s==%s --hash=sha256:%s\n", name, version, h)
		if normalizeName(name) == normalizeName(l.Package) {
			found = true
			p.Version, p.Integrity = version, "sha256:"+h
			continue
		}
		p.Dependencies = append(p.Dependencies, Dependency{Name: name, Version: version, Integrity: "sha256:" + h})
	}
	if !found {
		return Package{}, fmt.Errorf("%w: server %s: pip did not resolve %s", ErrFetch, server, l.Spec())
	}
	sort.Slice(p.Dependencies, func(i, j int) bool { return p.Dependencies[i].Name < p.Dependencies[j].Name })
	req := filepath.Join(work, "requirements.txt")
	if err := os.WriteFile(req, reqs.Bytes(), 0o600); err != nil {
		return Package{}, err
	}
	site := filepath.Join(dir, SiteDir)
	args = append(append(append([]string{}, common...), "--require-hashes", "--no-deps", "--no-compile", "--target", site), where...)
	args = append(args, "-r", req)
	if out, err := f.run(ctx, client{program: py, args: args, env: env, dir: work, write: write, watch: []string{dir, work}}); err != nil {
		if errors.Is(err, errTooLarge) {
			return Package{}, fmt.Errorf("%w: server %s: %s from %s: %w; nothing was installed", ErrFetch, server, l.Spec(), reg, err)
		}
		if ctx.Err() != nil {
			return Package{}, ctx.Err()
		}
		return Package{}, pipError(server, l, reg, src.Offline, out, err)
	}
	if p.Bin, err = pythonEntry(site, l); err != nil {
		return Package{}, fmt.Errorf("%w: server %s: %w", ErrUnsupported, server, err)
	}
	return p, nil
}

// pythonEntry returns the entry point ("module:function") of the console
// script the launcher runs: l.Bin, the one named after the package, or the
// package's only one.
func pythonEntry(site string, l Launch) (string, error) {
	infos, _ := filepath.Glob(filepath.Join(site, "*.dist-info"))
	var info string
	for _, d := range infos {
		base := strings.TrimSuffix(filepath.Base(d), ".dist-info")
		name, _, _ := strings.Cut(base, "-")
		if normalizeName(name) == normalizeName(l.Package) {
			info = d
			break
		}
	}
	if info == "" {
		return "", fmt.Errorf("%s: pip installed no metadata for it", l.Package)
	}
	var scripts map[string]string
	if data, err := readBounded(filepath.Join(info, "entry_points.txt")); err == nil {
		scripts = consoleScripts(data)
	}
	return pickScript(scripts, l)
}

// pickScript returns the entry point of the console script of scripts
// (name → entry point) the launcher runs: l.Bin, the one named after the
// package, or the package's only one; it refuses one that is not
// module:function.
func pickScript(scripts map[string]string, l Launch) (string, error) {
	names := make([]string, 0, len(scripts))
	for n := range scripts {
		names = append(names, n)
	}
	sort.Strings(names)
	var ep string
	switch {
	case len(scripts) == 0:
		return "", fmt.Errorf("%s has no program to run (no console_scripts entry point); declare the program with python3 -m MODULE instead", l.Package)
	case l.Bin != "":
		v, ok := scripts[l.Bin]
		if !ok {
			return "", fmt.Errorf("%s has no program %s; it has %s", l.Package, strictjson.Quote(l.Bin, 100), nameList(names))
		}
		ep = v
	default:
		found := false
		for _, n := range names {
			if normalizeName(n) == normalizeName(l.Package) {
				ep, found = scripts[n], true
			}
		}
		if !found && len(names) == 1 {
			ep, found = scripts[names[0]], true
		}
		if !found {
			return "", fmt.Errorf("%s has several programs (%s); name one: uvx --from %s %s", l.Package, nameList(names), l.Package, nameList(names[:1]))
		}
	}
	if !entryPointPattern.MatchString(ep) {
		return "", fmt.Errorf("%s: its entry point %s is not module:function", l.Package, strictjson.Quote(ep, 200))
	}
	return ep, nil
}

// consoleScripts returns the [console_scripts] section of an
// entry_points.txt: each script's name and its value up to the first space
// or "[" (the extras), both trimmed. A line starting with "#" is a comment,
// as Python reads the file. The value is not checked: the caller refuses
// one that is not module:function.
func consoleScripts(data []byte) map[string]string {
	scripts := map[string]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && section == "console_scripts" {
			v = strings.TrimSpace(v)
			if i := strings.IndexAny(v, " ["); i >= 0 { // "mod:fn [extra]"
				v = v[:i]
			}
			scripts[strings.TrimSpace(k)] = v
		}
	}
	return scripts
}

// pipError turns pip's failure into what the operator can act on.
func pipError(server string, l Launch, reg string, offline bool, out string, err error) error {
	has := func(s ...string) bool { return containsAny(out, s...) }
	spec := l.Spec()
	// What pip could not find may be a dependency of l, not l: "No
	// matching distribution found for gone-lib>=1".
	var needs error
	if _, rest, ok := strings.Cut(out, "No matching distribution found for "); ok {
		req, _, _ := strings.Cut(rest, "\n")
		req = strings.TrimSpace(req)
		if name := distNameRun.FindString(req); name != "" && normalizeName(name) != normalizeName(l.Package) {
			fix := "fix the version in mcp.json to one whose dependencies the index has, or set packages.pypi.index to an index that has them"
			if offline {
				fix = "put its wheels there (packages.pypi.offline is set)"
			}
			needs = fmt.Errorf("%w: server %s: %s needs %s, which no wheel in %s satisfies; %s; nothing was installed",
				ErrFetch, server, spec, strictjson.Quote(req, 200), reg, fix)
		}
	}
	switch {
	case has("DO NOT MATCH THE HASHES"):
		return fmt.Errorf("%w: server %s: %s from %s does not match its sha256 hash: the index served other bytes than it announced; nothing was installed", ErrFetch, server, spec, reg)
	case has("Failed to establish a new connection", "Max retries exceeded", "ConnectionError", "Could not fetch URL", "NewConnectionError", "Name or service not known", "timed out"):
		return fmt.Errorf("%w: server %s: the package index %s cannot be reached to fetch %s; check the network, or set packages.pypi.index in config.yaml to a mirror this machine reaches (or packages.pypi.find_links to a directory of wheels); nothing was installed", ErrFetch, server, reg, spec)
	case needs != nil:
		return needs
	case has("(from versions: none)"):
		if offline {
			return fmt.Errorf("%w: server %s: %s has no wheel in %s (packages.pypi.offline is set); put its wheels there; nothing was installed", ErrFetch, server, l.Package, reg)
		}
		return fmt.Errorf("%w: server %s: %s has no wheel in %s (a package that only publishes source would run its build code, which skillgate does not do); check the package name in mcp.json; nothing was installed", ErrFetch, server, l.Package, reg)
	case has("No matching distribution found", "Could not find a version that satisfies"):
		want := l.Requested
		if want == "" {
			want = "any version"
		}
		return fmt.Errorf("%w: server %s: %s has no wheel matching %s in %s; fix the version in mcp.json; nothing was installed", ErrFetch, server, l.Package, strictjson.Quote(want, 100), reg)
	}
	return fmt.Errorf("%w: server %s: pip install %s from %s failed (exit %d): %s; nothing was installed", ErrFetch, server, spec, reg, exitCode(err), lastLines(out, 4))
}
