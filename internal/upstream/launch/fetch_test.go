package launch_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/testregistry"
	"github.com/skillgate/skillgate/internal/upstream/launch"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// server is the id of the server every fetch here is for.
const server = "srv"

// needNPM returns the absolute path of node, skipping t when npm or node
// is not installed.
func needNPM(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	node, err = filepath.Abs(node)
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// echoPkg is an npm package of the echo server, its bin named after it.
func echoPkg(name, version string) testregistry.NPMPackage {
	base := name[strings.LastIndex(name, "/")+1:]
	return testregistry.NPMPackage{
		Name: name, Version: version,
		Files: map[string]string{"index.js": testregistry.MCPServerJS(name)},
		Bin:   map[string]string{base: "index.js"},
	}
}

// libPkg is an npm package without a program.
func libPkg(name, version string, deps map[string]string) testregistry.NPMPackage {
	return testregistry.NPMPackage{
		Name: name, Version: version,
		Files:        map[string]string{"index.js": "module.exports = 1;\n"},
		Dependencies: deps,
	}
}

// fetchDir returns a fetch directory, not yet existing, in a directory of
// its own.
func fetchDir(t *testing.T) string {
	return filepath.Join(t.TempDir(), "srv")
}

// noRetries is an Options.LookPath that finds npm as a wrapper that runs
// it with --fetch-retries=0 instead of Fetch's 2: npm retries a refused
// connection and an archive that fails its integrity check, with
// back-off (11 s and 22 s with Fetch's settings), which would only slow
// the tests of those failures down.
func noRetries(t *testing.T) func(string) (string, error) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	wrapper := filepath.Join(t.TempDir(), "npm")
	script := "#!/bin/sh\nfor a; do shift; case $a in --fetch-retries=*) a=--fetch-retries=0;; esac; set -- \"$@\" \"$a\"; done\nexec " + npm + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return func(name string) (string, error) {
		if name == "npm" {
			return wrapper, nil
		}
		return exec.LookPath(name)
	}
}

// checkClean checks that a failed fetch left nothing: dir does not exist,
// and no .fetch-* work directory is left beside it.
func checkClean(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is left after a failed fetch (%v)", dir, err)
	}
	left, err := filepath.Glob(filepath.Join(filepath.Dir(dir), ".fetch-*"))
	if err != nil || len(left) > 0 {
		t.Errorf("work directories left: %q (%v)", left, err)
	}
}

// checkErr checks that err is want (the exact message) and wraps is.
func checkErr(t *testing.T, err error, want string, is error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
	if !errors.Is(err, is) {
		t.Errorf("error %q does not wrap %q", err, is)
	}
}

// concurrently runs run for each case as a subtest named name(case), at
// most four at a time. They are not t.Parallel subtests: each spends much
// of its time waiting on npm or pip, and go test's -parallel (GOMAXPROCS
// by default) would run only that many at once.
func concurrently[C any](t *testing.T, cases []C, name func(C) string, run func(*testing.T, C)) {
	t.Helper()
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(name(c), func(t *testing.T) { run(t, c) })
		}()
	}
	wg.Wait()
}

// treeOf is TreeDigest(dir), failing t on error.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	d, err := launch.TreeDigest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// npmLaunch is the launch npx name@requested.
func npmLaunch(name, requested string) launch.Launch {
	return launch.Launch{Launcher: launch.LauncherNPX, Ecosystem: launch.NPM, Package: name, Requested: requested}
}

// npmOptions are hermetic options fetching from reg: no environment
// reaches the client.
func npmOptions(reg string) launch.Options {
	return launch.Options{NPM: launch.NPMOptions{Registry: reg}, Env: []string{}}
}

// conversation is what a client writes to an echo server: initialize, the
// initialized notification and tools/list.
var conversation = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
}

// answers is what the echo server named name answers conversation with.
func answers(name string) []string {
	return []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"` + name + `","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","description":"Echo the text back.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}]}}`,
	}
}

// converse starts the server as e says, in a clean environment, holds
// conversation with it and checks it answers as the echo server name.
func converse(t *testing.T, e launch.Exec, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Program, e.Args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.Dir = e.Dir
	cmd.Stdin = strings.NewReader(strings.Join(conversation, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\nstderr: %s", e.Program, e.Args, err, stderr.String())
	}
	got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if want := answers(name); !reflect.DeepEqual(got, want) {
		t.Errorf("the server answered\n%s\nwant\n%s\nstderr: %s", strings.Join(got, "\n"), strings.Join(want, "\n"), stderr.String())
	}
}

// TestFetchNPM fetches packages from a loopback registry with the real
// npm, unconfined, and checks every field of what was pinned.
func TestFetchNPM(t *testing.T) {
	node := needNPM(t)
	t.Parallel()
	// dep names a package the fetch pins as a dependency.
	type dep struct{ name, version string }
	type npmCase = struct {
		name     string
		pkgs     []testregistry.NPMPackage
		l        launch.Launch
		version  string // the version fetched
		bin      string
		deps     []dep
		converse bool // start the server and talk to it
	}
	cases := []npmCase{{
		name: "dependencies",
		pkgs: []testregistry.NPMPackage{
			func() testregistry.NPMPackage {
				p := echoPkg("echo-mcp", "1.0.0")
				p.Dependencies = map[string]string{"zeta-lib": "^2.0.0", "alpha-lib": "1.0.0"}
				return p
			}(),
			libPkg("zeta-lib", "2.0.0", nil),
			libPkg("zeta-lib", "2.1.0", map[string]string{"mid-lib": "~3.1.0"}),
			libPkg("zeta-lib", "3.0.0", nil),
			libPkg("alpha-lib", "1.0.0", nil),
			libPkg("mid-lib", "3.1.4", nil),
			libPkg("mid-lib", "3.2.0", nil),
		},
		l:        npmLaunch("echo-mcp", "1.0.0"),
		version:  "1.0.0",
		bin:      "node_modules/echo-mcp/index.js",
		deps:     []dep{{"alpha-lib", "1.0.0"}, {"mid-lib", "3.1.4"}, {"zeta-lib", "2.1.0"}},
		converse: true,
	}, {
		name:     "scoped",
		pkgs:     []testregistry.NPMPackage{echoPkg("@acme/echo-mcp", "1.0.0")},
		l:        npmLaunch("@acme/echo-mcp", "1.0.0"),
		version:  "1.0.0",
		bin:      "node_modules/@acme/echo-mcp/index.js",
		converse: true,
	}, {
		name:    "range",
		pkgs:    []testregistry.NPMPackage{echoPkg("echo-mcp", "1.0.0"), echoPkg("echo-mcp", "1.2.0"), echoPkg("echo-mcp", "2.0.0")},
		l:       npmLaunch("echo-mcp", "^1.0.0"),
		version: "1.2.0",
		bin:     "node_modules/echo-mcp/index.js",
	}, {
		name:    "latest",
		pkgs:    []testregistry.NPMPackage{echoPkg("echo-mcp", "1.0.0"), echoPkg("echo-mcp", "2.0.0"), echoPkg("echo-mcp", "1.5.0")},
		l:       npmLaunch("echo-mcp", ""),
		version: "2.0.0",
		bin:     "node_modules/echo-mcp/index.js",
	}, {
		name: "the only bin, named otherwise, in a subdirectory",
		pkgs: []testregistry.NPMPackage{{
			Name: "serve-kit", Version: "1.0.0",
			Files: map[string]string{"dist/server.js": testregistry.MCPServerJS("serve-kit")},
			Bin:   map[string]string{"serve": "./dist/server.js"},
		}},
		l:        npmLaunch("serve-kit", "1.0.0"),
		version:  "1.0.0",
		bin:      "node_modules/serve-kit/dist/server.js",
		converse: true,
	}, {
		name: "the bin Launch.Bin names",
		pkgs: []testregistry.NPMPackage{{
			Name: "multi", Version: "1.0.0",
			Files: map[string]string{"a.js": "", "b.js": ""},
			Bin:   map[string]string{"echo-a": "a.js", "echo-b": "b.js"},
		}},
		l: func() launch.Launch {
			l := npmLaunch("multi", "1.0.0")
			l.Bin = "echo-b"
			return l
		}(),
		version: "1.0.0",
		bin:     "node_modules/multi/b.js",
	}}
	concurrently(t, cases, func(c npmCase) string { return c.name }, func(t *testing.T, c npmCase) {
		reg := testregistry.NewNPM(t)
		for _, p := range c.pkgs {
			reg.Add(p)
		}
		dir := fetchDir(t)
		got, err := launch.NewFetcher(npmOptions(reg.URL())).Fetch(context.Background(), server, c.l, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := launch.Package{
			Server: server, Launcher: launch.LauncherNPX, Ecosystem: launch.NPM,
			Name: c.l.Package, Requested: c.l.Requested, Version: c.version,
			Integrity: reg.Integrity(c.l.Package, c.version), Registry: reg.URL(),
			Bin: c.bin, Interpreter: node, Dependencies: []launch.Dependency{},
			Tree: treeOf(t, dir),
		}
		for _, d := range c.deps {
			want.Dependencies = append(want.Dependencies, launch.Dependency{Name: d.name, Version: d.version, Integrity: reg.Integrity(d.name, d.version)})
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Fetch pinned\n%+v\nwant\n%+v", got, want)
		}
		if !strings.HasPrefix(got.Integrity, "sha512-") {
			t.Errorf("integrity %q", got.Integrity)
		}
		if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err != nil {
			t.Errorf("no package-lock.json: %v", err)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".fetch-*")); len(left) > 0 {
			t.Errorf("work directories left: %q", left)
		}
		if c.converse {
			e, err := got.Exec(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			converse(t, e, c.l.Package)
		}
	})
}

// npmFailure is a fetch that fails, with its exact message; "{reg}" in
// err stands for the registry's URL, "{dir}" for the fetch directory.
type npmFailure struct {
	name  string
	pkgs  []testregistry.NPMPackage
	l     launch.Launch
	opts  func(t *testing.T, o *launch.Options)
	allow map[string]string
	err   string
	is    error
}

// npmFailures are the fetches that fail, for TestFetchNPMFailures and,
// confined, TestFetchNPMSandbox.
var npmFailures = []npmFailure{{
	name: "unreachable registry",
	l:    npmLaunch("echo-mcp", "1.0.0"),
	opts: func(t *testing.T, o *launch.Options) {
		o.NPM.Registry = "http://127.0.0.1:1/"
		o.LookPath = noRetries(t)
	},
	err: "package fetch failed: server srv: the npm registry http://127.0.0.1:1/ cannot be reached to fetch echo-mcp@1.0.0 (ECONNREFUSED); check the network, or set packages.npm.registry in config.yaml (or --registry) to a mirror this machine reaches; nothing was installed",
	is:  launch.ErrFetch,
}, {
	name: "missing version",
	pkgs: []testregistry.NPMPackage{echoPkg("echo-mcp", "1.0.0")},
	l:    npmLaunch("echo-mcp", "9.9.9"),
	err:  `package fetch failed: server srv: echo-mcp has no version matching "9.9.9" in {reg}; see the versions with npm view echo-mcp versions --registry {reg}, and fix the version in mcp.json; nothing was installed`,
	is:   launch.ErrFetch,
}, {
	name: "missing range",
	pkgs: []testregistry.NPMPackage{echoPkg("echo-mcp", "1.0.0")},
	l:    npmLaunch("echo-mcp", "^2"),
	err:  `package fetch failed: server srv: echo-mcp has no version matching "^2" in {reg}; see the versions with npm view echo-mcp versions --registry {reg}, and fix the version in mcp.json; nothing was installed`,
	is:   launch.ErrFetch,
}, {
	name: "missing package",
	pkgs: []testregistry.NPMPackage{echoPkg("echo-mcp", "1.0.0")},
	l:    npmLaunch("nope-mcp", ""),
	err:  "package fetch failed: server srv: nope-mcp is not in the registry {reg}; check the package name in mcp.json, or set packages.npm.registry to the registry that has it; nothing was installed",
	is:   launch.ErrFetch,
}, {
	name: "missing dependency",
	pkgs: []testregistry.NPMPackage{func() testregistry.NPMPackage {
		p := echoPkg("echo-mcp", "1.0.0")
		p.Dependencies = map[string]string{"gone-lib": "^1.0.0"}
		return p
	}()},
	l:   npmLaunch("echo-mcp", "1.0.0"),
	err: `package fetch failed: server srv: echo-mcp@1.0.0 needs "gone-lib@^1.0.0", which is not in the registry {reg}; fix the version in mcp.json to one whose dependencies the registry has, or set packages.npm.registry to the registry that has them; nothing was installed`,
	is:  launch.ErrFetch,
}, {
	name: "missing dependency version",
	pkgs: []testregistry.NPMPackage{func() testregistry.NPMPackage {
		p := echoPkg("@acme/echo-mcp", "1.0.0")
		p.Dependencies = map[string]string{"@acme/zeta-lib": "2.1.0"}
		return p
	}(), libPkg("@acme/zeta-lib", "2.0.0", nil)},
	l:   npmLaunch("@acme/echo-mcp", "1.0.0"),
	err: `package fetch failed: server srv: @acme/echo-mcp@1.0.0 needs "@acme/zeta-lib@2.1.0", which no version in {reg} satisfies; fix the version in mcp.json to one whose dependencies the registry has, or set packages.npm.registry to the registry that has them; nothing was installed`,
	is:  launch.ErrFetch,
}, {
	name: "tampered archive",
	pkgs: []testregistry.NPMPackage{func() testregistry.NPMPackage {
		p := echoPkg("echo-mcp", "1.0.0")
		p.Tamper = true
		return p
	}()},
	l:    npmLaunch("echo-mcp", "1.0.0"),
	opts: func(t *testing.T, o *launch.Options) { o.LookPath = noRetries(t) },
	err:  "package fetch failed: server srv: echo-mcp@1.0.0 from {reg} does not match its integrity hash (EINTEGRITY): the registry served other bytes than it announced, or a cache holds a corrupted copy; nothing was installed",
	is:   launch.ErrFetch,
}, {
	name: "install script not allowed",
	pkgs: []testregistry.NPMPackage{func() testregistry.NPMPackage {
		p := echoPkg("echo-mcp", "1.0.0")
		p.Dependencies = map[string]string{"native-lib": "1.0.0"}
		return p
	}(), func() testregistry.NPMPackage {
		p := libPkg("native-lib", "1.0.0", nil)
		p.Files["install.js"] = "require('fs').writeFileSync('installed.txt', 'ran');\n"
		p.Scripts = map[string]string{"postinstall": "node install.js", "test": "exit 1"}
		return p
	}()},
	l:     npmLaunch("echo-mcp", "1.0.0"),
	allow: map[string]string{"other-lib": "not this one"},
	err:   `package has install scripts: server srv: echo-mcp@1.0.0 needs install scripts that skillgate does not run: native-lib@1.0.0 (postinstall: "node install.js"); if the server cannot work without them, allow the package by name: --allow-scripts native-lib --why "…"; nothing was installed`,
	is:    launch.ErrInstallScript,
}, {
	name: "allowed install script fails",
	pkgs: []testregistry.NPMPackage{func() testregistry.NPMPackage {
		p := echoPkg("echo-mcp", "1.0.0")
		p.Scripts = map[string]string{"preinstall": "echo broken build >&2; exit 3"}
		return p
	}()},
	l:     npmLaunch("echo-mcp", "1.0.0"),
	allow: map[string]string{"echo-mcp": "needs its build"},
	err:   `package fetch failed: server srv: the allowed install scripts of echo-mcp failed (exit 3): "npm error code 3"; "npm error path {dir}/node_modules/echo-mcp"; "npm error command failed"; "npm error command sh -c echo broken build >&2; exit 3"; nothing was installed`,
	is:    launch.ErrFetch,
}, {
	name: "offline with an empty cache",
	pkgs: []testregistry.NPMPackage{echoPkg("echo-mcp", "1.0.0")},
	l:    npmLaunch("echo-mcp", "1.0.0"),
	opts: func(t *testing.T, o *launch.Options) { o.NPM.Offline = true },
	err:  "package fetch failed: server srv: echo-mcp@1.0.0 is not in the local cache and packages.npm.offline is set; fetch it once with the network, or fill the cache (npm cache add echo-mcp@1.0.0 --cache DIR); nothing was installed",
	is:   launch.ErrFetch,
}, {
	name: "several bins, none named after the package",
	pkgs: []testregistry.NPMPackage{{
		Name: "multi", Version: "1.0.0",
		Files: map[string]string{"a.js": "", "b.js": ""},
		Bin:   map[string]string{"echo-b": "b.js", "echo-a": "a.js"},
	}},
	l:   npmLaunch("multi", "1.0.0"),
	err: "launch cannot be pinned: server srv: multi@1.0.0 has several programs (echo-a, echo-b); name one: npx --package=multi echo-a",
	is:  launch.ErrUnsupported,
}, {
	name: "bin outside the package",
	pkgs: []testregistry.NPMPackage{{
		Name: "escape", Version: "1.0.0",
		Files: map[string]string{"index.js": ""},
		Bin:   map[string]string{"escape": "../x.js"},
	}},
	l:   npmLaunch("escape", "1.0.0"),
	err: `launch cannot be pinned: server srv: escape@1.0.0: its program "../x.js" lies outside the package`,
	is:  launch.ErrUnsupported,
}, {
	name: "no bin",
	pkgs: []testregistry.NPMPackage{libPkg("lib-only", "1.0.0", nil)},
	l:    npmLaunch("lib-only", "1.0.0"),
	err:  "launch cannot be pinned: server srv: lib-only@1.0.0 has no program to run (its package.json has no bin); declare the program with node and its path instead",
	is:   launch.ErrUnsupported,
}, {
	name: "unknown ecosystem",
	l:    launch.Launch{Launcher: "cargo run", Ecosystem: "cargo", Package: "echo-mcp"},
	err:  `launch cannot be pinned: server srv: unknown ecosystem "cargo"`,
	is:   launch.ErrUnsupported,
}, {
	name: "tree over MaxFiles",
	pkgs: []testregistry.NPMPackage{echoPkg("echo-mcp", "1.0.0")},
	l:    npmLaunch("echo-mcp", "1.0.0"),
	opts: func(t *testing.T, o *launch.Options) { o.MaxFiles = 3 },
	err:  "package fetch failed: server srv: the fetched tree of echo-mcp@1.0.0: {dir} holds more than 3 files; nothing was installed",
	is:   launch.ErrFetch,
}, {
	name: "tree over MaxBytes",
	pkgs: []testregistry.NPMPackage{echoPkg("echo-mcp", "1.0.0")},
	l:    npmLaunch("echo-mcp", "1.0.0"),
	opts: func(t *testing.T, o *launch.Options) { o.MaxBytes = 1000 },
	err:  "package fetch failed: server srv: the fetched tree of echo-mcp@1.0.0: {dir} holds more than 1000 bytes; nothing was installed",
	is:   launch.ErrFetch,
}, {
	name: "timeout",
	pkgs: []testregistry.NPMPackage{echoPkg("echo-mcp", "1.0.0")},
	l:    npmLaunch("echo-mcp", "1.0.0"),
	opts: func(t *testing.T, o *launch.Options) { o.Timeout = time.Millisecond },
	err:  "package fetch failed: server srv: fetching echo-mcp@1.0.0 from {reg} took longer than 1ms; try again, or raise packages.timeout in config.yaml; nothing was installed",
	is:   launch.ErrFetch,
}}

// runNPMFailure runs c against a registry of its own, with sb, the fetch
// directory in parent, and checks its error and that it left nothing.
func runNPMFailure(t *testing.T, c npmFailure, parent string, sb *sandbox.Bubblewrap) {
	reg := testregistry.NewNPM(t)
	for _, p := range c.pkgs {
		reg.Add(p)
	}
	opts := npmOptions(reg.URL())
	opts.NPM.Cache = filepath.Join(parent, "npm-cache")
	opts.Sandbox = sb
	if c.opts != nil {
		c.opts(t, &opts)
	}
	dir := filepath.Join(parent, "srv")
	_, err := launch.NewFetcher(opts).Fetch(context.Background(), server, c.l, dir, c.allow)
	want := strings.NewReplacer("{reg}", opts.NPM.Registry, "{dir}", dir).Replace(c.err)
	checkErr(t, err, want, c.is)
	checkClean(t, dir)
}

// TestFetchNPMFailures checks every way an npm fetch fails, unconfined:
// the exact message, the sentinel it wraps, and that nothing is left.
func TestFetchNPMFailures(t *testing.T) {
	needNPM(t)
	t.Parallel()
	concurrently(t, npmFailures, func(c npmFailure) string { return c.name }, func(t *testing.T, c npmFailure) {
		runNPMFailure(t, c, t.TempDir(), nil)
	})
}

// TestFetchNPMExistingDir checks that Fetch refuses a directory that
// exists, and leaves it and what it holds alone.
func TestFetchNPMExistingDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := launch.NewFetcher(npmOptions("http://127.0.0.1:1/")).Fetch(context.Background(), server, npmLaunch("echo-mcp", ""), dir, nil)
	if want := "launch: server srv: mkdir " + dir + ": file exists"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the existing directory was touched: %v", err)
	}
}

// TestFetchNPMInstallScriptAllowed checks that an allowed install script
// runs (in the fetched tree) and is recorded with the reason.
func TestFetchNPMInstallScriptAllowed(t *testing.T) {
	node := needNPM(t)
	t.Parallel()
	reg := testregistry.NewNPM(t)
	p := echoPkg("echo-mcp", "1.0.0")
	p.Files["install.js"] = "require('fs').writeFileSync('installed.txt', 'ran');\n"
	p.Scripts = map[string]string{"postinstall": "node install.js"}
	reg.Add(p)
	dir := fetchDir(t)
	got, err := launch.NewFetcher(npmOptions(reg.URL())).Fetch(context.Background(), server, npmLaunch("echo-mcp", "1.0.0"), dir,
		map[string]string{"echo-mcp": "needs its build"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "echo-mcp", "installed.txt"))
	if err != nil || string(b) != "ran" {
		t.Errorf("the postinstall script did not run: %q, %v", b, err)
	}
	want := launch.Package{
		Server: server, Launcher: launch.LauncherNPX, Ecosystem: launch.NPM,
		Name: "echo-mcp", Requested: "1.0.0", Version: "1.0.0",
		Integrity: reg.Integrity("echo-mcp", "1.0.0"), Registry: reg.URL(),
		Bin: "node_modules/echo-mcp/index.js", Interpreter: node, Dependencies: []launch.Dependency{},
		Scripts: []launch.Script{{Package: "echo-mcp", Version: "1.0.0", Allowed: true, Why: "needs its build"}},
		Tree:    treeOf(t, dir),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Fetch pinned\n%+v\nwant\n%+v", got, want)
	}
}

// TestFetchNPMOffline fetches once with the network into a shared cache,
// then again offline from that cache alone: the same package is pinned and
// the registry is asked nothing.
func TestFetchNPMOffline(t *testing.T) {
	needNPM(t)
	t.Parallel()
	reg := testregistry.NewNPM(t)
	p := echoPkg("echo-mcp", "1.0.0")
	p.Dependencies = map[string]string{"alpha-lib": "^1"}
	reg.Add(p)
	reg.Add(libPkg("alpha-lib", "1.0.0", nil))
	opts := npmOptions(reg.URL())
	opts.NPM.Cache = filepath.Join(t.TempDir(), "cache")
	online, err := launch.NewFetcher(opts).Fetch(context.Background(), server, npmLaunch("echo-mcp", "1.0.0"), fetchDir(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	asked := len(reg.Requests())
	opts.NPM.Offline = true
	dir := fetchDir(t)
	offline, err := launch.NewFetcher(opts).Fetch(context.Background(), server, npmLaunch("echo-mcp", "1.0.0"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offline, online) {
		t.Errorf("offline fetch pinned\n%+v\nonline\n%+v", offline, online)
	}
	if len(online.Dependencies) != 1 {
		t.Errorf("dependencies %+v", online.Dependencies)
	}
	if reqs := reg.Requests(); len(reqs) != asked {
		t.Errorf("the offline fetch asked the registry for %q", reqs[asked:])
	}
	if offline.Tree != treeOf(t, dir) {
		t.Error("Tree is not the tree's digest")
	}
}

// TestFetchNPMSandbox fetches confined in bubblewrap, the fetch directory
// (and the npm cache) inside the data directory the sandbox hides, as
// skillgate does: the same package is pinned as unconfined, and failures
// say the same and leave nothing.
func TestFetchNPMSandbox(t *testing.T) {
	node := needNPM(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed")
	}
	t.Parallel()
	newSandbox := func(t *testing.T) (data string, sb *sandbox.Bubblewrap) {
		data = t.TempDir()
		if err := os.Mkdir(filepath.Join(data, "packages"), 0o700); err != nil {
			t.Fatal(err)
		}
		return data, &sandbox.Bubblewrap{Hide: []string{data}}
	}
	t.Run("success", func(t *testing.T) {
		data, sb := newSandbox(t)
		reg := testregistry.NewNPM(t)
		p := echoPkg("echo-mcp", "1.0.0")
		p.Dependencies = map[string]string{"alpha-lib": "^1"}
		reg.Add(p)
		reg.Add(libPkg("alpha-lib", "1.0.0", nil))
		opts := npmOptions(reg.URL())
		opts.Sandbox = sb
		opts.NPM.Cache = filepath.Join(data, "npm-cache")
		dir := filepath.Join(data, "packages", "srv")
		got, err := launch.NewFetcher(opts).Fetch(context.Background(), server, npmLaunch("echo-mcp", "1.0.0"), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := launch.Package{
			Server: server, Launcher: launch.LauncherNPX, Ecosystem: launch.NPM,
			Name: "echo-mcp", Requested: "1.0.0", Version: "1.0.0",
			Integrity: reg.Integrity("echo-mcp", "1.0.0"), Registry: reg.URL(),
			Bin: "node_modules/echo-mcp/index.js", Interpreter: node,
			Dependencies: []launch.Dependency{{Name: "alpha-lib", Version: "1.0.0", Integrity: reg.Integrity("alpha-lib", "1.0.0")}},
			Tree:         treeOf(t, dir),
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Fetch pinned\n%+v\nwant\n%+v", got, want)
		}
		if left, _ := filepath.Glob(filepath.Join(data, "packages", ".fetch-*")); len(left) > 0 {
			t.Errorf("work directories left: %q", left)
		}
		e, err := got.Exec(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		converse(t, e, "echo-mcp")
	})
	t.Run("an allowed install script sees nothing of the data directory", func(t *testing.T) {
		data, sb := newSandbox(t)
		secret := filepath.Join(data, "secret")
		writeFile(t, secret, "token")
		reg := testregistry.NewNPM(t)
		p := echoPkg("echo-mcp", "1.0.0")
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		p.Files["install.js"] = "const fs = require('fs');\nlet r = [];\n" +
			"try { r.push('read ' + fs.readFileSync(" + q(secret) + ")); } catch (e) { r.push('read ' + e.code); }\n" +
			"try { fs.writeFileSync(" + q(filepath.Join(data, "escape")) + ", 'x'); r.push('wrote'); } catch (e) { r.push('write ' + e.code); }\n" +
			"fs.writeFileSync('result.txt', r.join(', '));\n"
		p.Scripts = map[string]string{"postinstall": "node install.js"}
		reg.Add(p)
		opts := npmOptions(reg.URL())
		opts.Sandbox = sb
		dir := filepath.Join(data, "packages", "srv")
		got, err := launch.NewFetcher(opts).Fetch(context.Background(), server, npmLaunch("echo-mcp", "1.0.0"), dir, map[string]string{"echo-mcp": "test"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "echo-mcp", "result.txt"))
		// The data directory is an empty tmpfs in the sandbox: the secret
		// is not there, and what is written there stays there.
		if want := "read ENOENT, wrote"; err != nil || string(b) != want {
			t.Errorf("the script saw %q (%v), want %q", b, err, want)
		}
		if _, err := os.Stat(filepath.Join(data, "escape")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the script wrote into the data directory (%v)", err)
		}
		if got.Tree != treeOf(t, dir) {
			t.Error("Tree is not the tree's digest")
		}
	})
	var failures []npmFailure
	for _, c := range npmFailures {
		switch c.name {
		case "missing version", "tampered archive", "allowed install script fails", "offline with an empty cache":
			failures = append(failures, c)
		}
	}
	concurrently(t, failures, func(c npmFailure) string { return c.name }, func(t *testing.T, c npmFailure) {
		data, sb := newSandbox(t)
		runNPMFailure(t, c, filepath.Join(data, "packages"), sb)
	})
}

// echoWheel is the wheel of the Python echo server.
func echoWheel(version string) testregistry.Wheel {
	return testregistry.Wheel{
		Name: "echo-mcp", Version: version,
		Files: map[string]string{
			"echo_mcp/__init__.py": "",
			"echo_mcp/server.py":   testregistry.MCPServerPy(),
		},
		ConsoleScripts: map[string]string{"echo-mcp": "echo_mcp.server:main"},
	}
}

// libWheel is a wheel of one empty module.
func libWheel(name, version string) testregistry.Wheel {
	return testregistry.Wheel{
		Name: name, Version: version,
		Files: map[string]string{strings.ToLower(strings.ReplaceAll(name, "-", "_")) + "/__init__.py": ""},
	}
}

// wheelDigest is "sha256:" and the hex digest of w's wheel.
func wheelDigest(t *testing.T, w testregistry.Wheel) string {
	t.Helper()
	_, b, err := testregistry.BuildWheel(w)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// uvxLaunch is the launch uvx --from name==requested.
func uvxLaunch(name, requested string) launch.Launch {
	return launch.Launch{Launcher: launch.LauncherUVX, Ecosystem: launch.PyPI, Package: name, Requested: requested}
}

// pypiOptions are hermetic options fetching from index with python.
func pypiOptions(index, python string) launch.Options {
	return launch.Options{PyPI: launch.PyPIOptions{Index: index, Python: python}, Env: []string{}}
}

// pypiCase is a PyPI fetch that succeeds: the wheels published, the
// launch, and the wheel and dependencies it pins.
type pypiCase struct {
	name    string
	wheels  []testregistry.Wheel
	l       launch.Launch
	offline bool // from a --find-links directory, offline
	want    testregistry.Wheel
	deps    []testregistry.Wheel
}

// TestFetchPyPI fetches wheels from a loopback index with the real pip,
// checks every field of what was pinned, and runs the server as Exec says
// (python -I -c CODE): it answers initialize and tools/list.
func TestFetchPyPI(t *testing.T) {
	py := testregistry.Python(t)
	t.Parallel()
	withDeps := echoWheel("2.0.0")
	withDeps.Requires = []string{"zeta-lib>=1", "Alpha_Lib==1.0.0"}
	cases := []pypiCase{{
		name:   "exact version",
		wheels: []testregistry.Wheel{echoWheel("1.0.0"), echoWheel("1.1.0")},
		l:      uvxLaunch("echo-mcp", "1.0.0"),
		want:   echoWheel("1.0.0"),
	}, {
		name:   "range, the name spelt otherwise, dependencies",
		wheels: []testregistry.Wheel{echoWheel("1.0.0"), withDeps, echoWheel("3.0.0"), libWheel("zeta-lib", "1.0.0"), libWheel("zeta-lib", "1.2.0"), libWheel("Alpha_Lib", "1.0.0"), libWheel("Alpha_Lib", "1.1.0")},
		l:      uvxLaunch("Echo_MCP", ">=1.0,<3"),
		want:   withDeps,
		deps:   []testregistry.Wheel{libWheel("Alpha_Lib", "1.0.0"), libWheel("zeta-lib", "1.2.0")},
	}, {
		name:    "find-links, offline",
		wheels:  []testregistry.Wheel{echoWheel("1.0.0"), echoWheel("1.1.0")},
		l:       uvxLaunch("echo-mcp", "1.0.0"),
		offline: true,
		want:    echoWheel("1.0.0"),
	}}
	concurrently(t, cases, func(c pypiCase) string { return c.name }, func(t *testing.T, c pypiCase) {
		reg := testregistry.NewPyPI(t)
		for _, w := range c.wheels {
			reg.Add(w)
		}
		opts := pypiOptions(reg.URL(), py)
		if c.offline {
			links := t.TempDir()
			if err := reg.WriteDir(links); err != nil {
				t.Fatal(err)
			}
			opts.PyPI.FindLinks, opts.PyPI.Offline = links, true
		}
		dir := fetchDir(t)
		got, err := launch.NewFetcher(opts).Fetch(context.Background(), server, c.l, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := launch.Package{
			Server: server, Launcher: launch.LauncherUVX, Ecosystem: launch.PyPI,
			Name: c.l.Package, Requested: c.l.Requested, Version: c.want.Version,
			Integrity: wheelDigest(t, c.want), Registry: reg.URL(),
			Bin: "echo_mcp.server:main", Interpreter: py, Dependencies: []launch.Dependency{},
			Tree: treeOf(t, dir),
		}
		if c.offline {
			want.Registry = opts.PyPI.FindLinks
		}
		for _, d := range c.deps {
			want.Dependencies = append(want.Dependencies, launch.Dependency{Name: d.Name, Version: d.Version, Integrity: wheelDigest(t, d)})
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Fetch pinned\n%+v\nwant\n%+v", got, want)
		}
		if !filepath.IsAbs(got.Interpreter) {
			t.Errorf("interpreter %s is not absolute", got.Interpreter)
		}
		if _, err := os.Stat(filepath.Join(dir, launch.SiteDir, "echo_mcp", "server.py")); err != nil {
			t.Errorf("the package is not in %s: %v", launch.SiteDir, err)
		}
		if c.offline {
			if reqs := reg.Requests(); len(reqs) > 0 {
				t.Errorf("an offline fetch asked the index for %q", reqs)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".fetch-*")); len(left) > 0 {
			t.Errorf("work directories left: %q", left)
		}
		e, err := got.Exec(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		converse(t, e, "echo-mcp")
	})
}

// pypiFailure is a PyPI fetch that fails, with its exact message; "{reg}"
// in err stands for the index (or the find-links directory).
type pypiFailure struct {
	name   string
	wheels []testregistry.Wheel
	l      launch.Launch
	opts   func(o *launch.Options, links string)
	err    string
	is     error
}

// TestFetchPyPIFailures checks every way a PyPI fetch fails: the exact
// message, the sentinel it wraps, and that nothing is left.
func TestFetchPyPIFailures(t *testing.T) {
	py := testregistry.Python(t)
	t.Parallel()
	tampered := echoWheel("1.0.0")
	tampered.Tamper = true
	noScript := echoWheel("1.0.0")
	noScript.ConsoleScripts = nil
	several := echoWheel("1.0.0")
	several.ConsoleScripts = map[string]string{"echo-b": "echo_mcp.server:main", "echo-a": "echo_mcp.server:main"}
	missingDep := echoWheel("1.0.0")
	missingDep.Requires = []string{"gone-lib>=1"}
	offline := func(o *launch.Options, links string) { o.PyPI.FindLinks, o.PyPI.Offline = links, true }
	cases := []pypiFailure{{
		name:   "tampered wheel",
		wheels: []testregistry.Wheel{tampered},
		l:      uvxLaunch("echo-mcp", "1.0.0"),
		err:    "package fetch failed: server srv: echo-mcp==1.0.0 from {reg} does not match its sha256 hash: the index served other bytes than it announced; nothing was installed",
		is:     launch.ErrFetch,
	}, {
		name:   "missing version",
		wheels: []testregistry.Wheel{echoWheel("1.0.0")},
		l:      uvxLaunch("echo-mcp", "9.9.9"),
		err:    `package fetch failed: server srv: echo-mcp has no wheel matching "9.9.9" in {reg}; fix the version in mcp.json; nothing was installed`,
		is:     launch.ErrFetch,
	}, {
		name:   "missing project",
		wheels: []testregistry.Wheel{echoWheel("1.0.0")},
		l:      uvxLaunch("nope-mcp", ""),
		err:    "package fetch failed: server srv: nope-mcp has no wheel in {reg} (a package that only publishes source would run its build code, which skillgate does not do); check the package name in mcp.json; nothing was installed",
		is:     launch.ErrFetch,
	}, {
		name:   "missing dependency",
		wheels: []testregistry.Wheel{missingDep},
		l:      uvxLaunch("echo-mcp", "1.0.0"),
		err:    `package fetch failed: server srv: echo-mcp==1.0.0 needs "gone-lib>=1", which no wheel in {reg} satisfies; fix the version in mcp.json to one whose dependencies the index has, or set packages.pypi.index to an index that has them; nothing was installed`,
		is:     launch.ErrFetch,
	}, {
		name:   "offline, not in find-links",
		wheels: []testregistry.Wheel{echoWheel("1.0.0")},
		l:      uvxLaunch("nope-mcp", ""),
		opts:   offline,
		err:    "package fetch failed: server srv: nope-mcp has no wheel in {reg} (packages.pypi.offline is set); put its wheels there; nothing was installed",
		is:     launch.ErrFetch,
	}, {
		name:   "offline, dependency not in find-links",
		wheels: []testregistry.Wheel{missingDep},
		l:      uvxLaunch("echo-mcp", ">=1"),
		opts:   offline,
		err:    `package fetch failed: server srv: echo-mcp>=1 needs "gone-lib>=1", which no wheel in {reg} satisfies; put its wheels there (packages.pypi.offline is set); nothing was installed`,
		is:     launch.ErrFetch,
	}, {
		name: "unreachable index",
		l:    uvxLaunch("echo-mcp", "1.0.0"),
		opts: func(o *launch.Options, _ string) { o.PyPI.Index = "http://127.0.0.1:1/simple/" },
		err:  "package fetch failed: server srv: the package index {reg} cannot be reached to fetch echo-mcp==1.0.0; check the network, or set packages.pypi.index in config.yaml to a mirror this machine reaches (or packages.pypi.find_links to a directory of wheels); nothing was installed",
		is:   launch.ErrFetch,
	}, {
		name:   "no console script",
		wheels: []testregistry.Wheel{noScript},
		l:      uvxLaunch("echo-mcp", "1.0.0"),
		err:    "launch cannot be pinned: server srv: echo-mcp has no program to run (no console_scripts entry point); declare the program with python3 -m MODULE instead",
		is:     launch.ErrUnsupported,
	}, {
		name:   "several console scripts",
		wheels: []testregistry.Wheel{several},
		l:      uvxLaunch("echo-mcp", "1.0.0"),
		err:    "launch cannot be pinned: server srv: echo-mcp has several programs (echo-a, echo-b); name one: uvx --from echo-mcp echo-a",
		is:     launch.ErrUnsupported,
	}, {
		name:   "timeout",
		wheels: []testregistry.Wheel{echoWheel("1.0.0")},
		l:      uvxLaunch("echo-mcp", "1.0.0"),
		opts:   func(o *launch.Options, _ string) { o.Timeout = time.Millisecond },
		err:    "package fetch failed: server srv: fetching echo-mcp==1.0.0 from {reg} took longer than 1ms; try again, or raise packages.timeout in config.yaml; nothing was installed",
		is:     launch.ErrFetch,
	}}
	concurrently(t, cases, func(c pypiFailure) string { return c.name }, func(t *testing.T, c pypiFailure) {
		reg := testregistry.NewPyPI(t)
		for _, w := range c.wheels {
			reg.Add(w)
		}
		links := t.TempDir()
		if err := reg.WriteDir(links); err != nil {
			t.Fatal(err)
		}
		opts := pypiOptions(reg.URL(), py)
		if c.opts != nil {
			c.opts(&opts, links)
		}
		f := launch.NewFetcher(opts)
		dir := fetchDir(t)
		_, err := f.Fetch(context.Background(), server, c.l, dir, nil)
		checkErr(t, err, strings.ReplaceAll(c.err, "{reg}", f.Registry(launch.PyPI)), c.is)
		checkClean(t, dir)
	})
}

// TestPythonEntry checks which console script pythonEntry picks of an
// installed wheel's entry_points.txt, and its refusals, word for word.
func TestPythonEntry(t *testing.T) {
	t.Parallel()
	const scripts = "[console_scripts]\n"
	cases := []struct {
		name    string
		dist    string // the dist-info directory's name; "" for none
		entries string // entry_points.txt; "" for none
		pkg     string
		bin     string
		want    string
		err     string
	}{
		{name: "the only one", dist: "echo_mcp-1.0.0", entries: scripts + "serve = echo_mcp.server:main\n", pkg: "echo-mcp", want: "echo_mcp.server:main"},
		{name: "the one named after the package", dist: "echo_mcp-1.0.0", entries: scripts + "aaa = a:b\nEcho_MCP = echo_mcp.server:main\nzzz = z:z\n", pkg: "echo-mcp", want: "echo_mcp.server:main"},
		{name: "Launch.Bin", dist: "echo_mcp-1.0.0", entries: scripts + "echo-mcp = a:b\necho-b = echo_mcp.server:main\n", pkg: "echo-mcp", bin: "echo-b", want: "echo_mcp.server:main"},
		{name: "extras and spaces", dist: "echo_mcp-1.0.0", entries: "[gui_scripts]\necho-mcp = gui:main\n\n[ console_scripts ]\n  echo-mcp   =   echo_mcp.server:main [cli]  \n", pkg: "echo-mcp", want: "echo_mcp.server:main"},
		{name: "a nested attribute", dist: "echo_mcp-1.0.0", entries: scripts + "echo-mcp = echo_mcp.server:App.main\n", pkg: "echo-mcp", want: "echo_mcp.server:App.main"},
		{name: "a comment is no script", dist: "echo_mcp-1.0.0", entries: scripts + "# old = echo_mcp.old:main\nserve = echo_mcp.server:main\n", pkg: "echo-mcp", want: "echo_mcp.server:main"},
		{name: "only a comment", dist: "echo_mcp-1.0.0", entries: scripts + "# echo-mcp = echo_mcp.old:main\n", pkg: "echo-mcp",
			err: "echo-mcp has no program to run (no console_scripts entry point); declare the program with python3 -m MODULE instead"},
		{name: "no metadata", pkg: "echo-mcp", err: "echo-mcp: pip installed no metadata for it"},
		{name: "another package's metadata", dist: "other-1.0", entries: scripts + "echo-mcp = a:b\n", pkg: "echo-mcp", err: "echo-mcp: pip installed no metadata for it"},
		{name: "no entry_points.txt", dist: "echo_mcp-1.0.0", pkg: "echo-mcp",
			err: "echo-mcp has no program to run (no console_scripts entry point); declare the program with python3 -m MODULE instead"},
		{name: "gui scripts only", dist: "echo_mcp-1.0.0", entries: "[gui_scripts]\necho-mcp = a:b\n", pkg: "echo-mcp",
			err: "echo-mcp has no program to run (no console_scripts entry point); declare the program with python3 -m MODULE instead"},
		{name: "several", dist: "echo_mcp-1.0.0", entries: scripts + "b = a:b\na = a:a\n", pkg: "echo-mcp",
			err: "echo-mcp has several programs (a, b); name one: uvx --from echo-mcp a"},
		{name: "Launch.Bin names none", dist: "echo_mcp-1.0.0", entries: scripts + "b = a:b\na = a:a\n", pkg: "echo-mcp", bin: "c\n",
			err: `echo-mcp has no program "c\n"; it has a, b`},
		{name: "several, names quoted where not plain", dist: "echo_mcp-1.0.0", entries: scripts + "\x1b[31mred = a:b\nb\u202e = c:d\n", pkg: "echo-mcp",
			err: `echo-mcp has several programs ("\x1b[31mred", "b\u202e"); name one: uvx --from echo-mcp "\x1b[31mred"`},
		{name: "a single empty entry point", dist: "echo_mcp-1.0.0", entries: scripts + "serve =\n", pkg: "echo-mcp",
			err: `echo-mcp: its entry point "" is not module:function`},
		{name: "a path", dist: "echo_mcp-1.0.0", entries: scripts + "echo-mcp = echo_mcp/server.py\n", pkg: "echo-mcp",
			err: `echo-mcp: its entry point "echo_mcp/server.py" is not module:function`},
		{name: "no function", dist: "echo_mcp-1.0.0", entries: scripts + "echo-mcp = echo_mcp.server\n", pkg: "echo-mcp",
			err: `echo-mcp: its entry point "echo_mcp.server" is not module:function`},
		{name: "empty", dist: "echo_mcp-1.0.0", entries: scripts + "echo-mcp =\n", pkg: "echo-mcp",
			err: `echo-mcp: its entry point "" is not module:function`},
		{name: "code", dist: "echo_mcp-1.0.0", entries: scripts + "echo-mcp = os:system('id')\n", pkg: "echo-mcp",
			err: `echo-mcp: its entry point "os:system('id')" is not module:function`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			site := t.TempDir()
			if c.dist != "" {
				info := filepath.Join(site, c.dist+".dist-info")
				if err := os.Mkdir(info, 0o755); err != nil {
					t.Fatal(err)
				}
				if c.entries != "" {
					if err := os.WriteFile(filepath.Join(info, "entry_points.txt"), []byte(c.entries), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			l := uvxLaunch(c.pkg, "")
			l.Bin = c.bin
			got, err := launch.PythonEntry(site, l)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Errorf("pythonEntry = %q, %v; want error %s", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("pythonEntry = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestNPMBin checks which program npmBin picks of an installed package's
// package.json, and its refusals, word for word.
func TestNPMBin(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		pkg   string
		bin   string // Launch.Bin
		json  string // the package's package.json; "" for none
		files []string
		want  string
		err   string
	}{
		{name: "a string, the scoped package's base", pkg: "@acme/echo-mcp", json: `{"version":"1.0.0","bin":"./cli.js"}`, files: []string{"cli.js"},
			want: "node_modules/@acme/echo-mcp/cli.js"},
		{name: "a string, Launch.Bin the base", pkg: "@acme/echo-mcp", bin: "echo-mcp", json: `{"version":"1.0.0","bin":"cli.js"}`, files: []string{"cli.js"},
			want: "node_modules/@acme/echo-mcp/cli.js"},
		{name: "the one named after the package", pkg: "echo-mcp", json: `{"version":"1.0.0","bin":{"aaa":"a.js","echo-mcp":"lib/../main.js"}}`, files: []string{"a.js", "main.js"},
			want: "node_modules/echo-mcp/main.js"},
		{name: "Launch.Bin", pkg: "echo-mcp", bin: "aaa", json: `{"version":"1.0.0","bin":{"aaa":"a.js","echo-mcp":"main.js"}}`, files: []string{"a.js", "main.js"},
			want: "node_modules/echo-mcp/a.js"},
		{name: "a string, Launch.Bin another", pkg: "echo-mcp", bin: "other", json: `{"version":"1.0.0","bin":"cli.js"}`, files: []string{"cli.js"},
			err: `echo-mcp@1.0.0 has no program "other"; it has echo-mcp`},
		{name: "Launch.Bin names none", pkg: "echo-mcp", bin: "c", json: `{"version":"1.0.0","bin":{"b":"b.js","a":"a.js"}}`,
			err: `echo-mcp@1.0.0 has no program "c"; it has a, b`},
		{name: "several", pkg: "@acme/echo-mcp", json: `{"version":"1.0.0","bin":{"b":"b.js","a":"a.js"}}`,
			err: "@acme/echo-mcp@1.0.0 has several programs (a, b); name one: npx --package=@acme/echo-mcp a"},
		{name: "no bin", pkg: "echo-mcp", json: `{"version":"1.0.0"}`,
			err: "echo-mcp@1.0.0 has no program to run (its package.json has no bin); declare the program with node and its path instead"},
		{name: "an empty bin", pkg: "echo-mcp", json: `{"version":"1.0.0","bin":{}}`,
			err: "echo-mcp@1.0.0 has no program to run (its package.json has no bin); declare the program with node and its path instead"},
		{name: "outside, through the package", pkg: "echo-mcp", json: `{"version":"1.0.0","bin":"./lib/../../x.js"}`,
			err: `echo-mcp@1.0.0: its program "./lib/../../x.js" lies outside the package`},
		{name: "absolute", pkg: "echo-mcp", json: `{"version":"1.0.0","bin":"/usr/bin/env"}`,
			err: `echo-mcp@1.0.0: its program "/usr/bin/env" lies outside the package`},
		{name: "not a file", pkg: "echo-mcp", json: `{"version":"1.0.0","bin":"dist"}`, files: []string{"dist/x.js"},
			err: "echo-mcp@1.0.0: its program dist is not a file in the package"},
		{name: "missing", pkg: "echo-mcp", json: `{"version":"1.0.0","bin":"dist/cli.js"}`,
			err: "echo-mcp@1.0.0: its program dist/cli.js is not a file in the package"},
		{name: "several, names quoted where not plain", pkg: "echo-mcp", json: `{"version":"1.0.0","bin":{"\u001b[31mred":"a.js","b c":"b.js","d":"d.js"}}`,
			err: `echo-mcp@1.0.0 has several programs ("\x1b[31mred", "b c", d); name one: npx --package=echo-mcp "\x1b[31mred"`},
		{name: "many", pkg: "echo-mcp", bin: "z", json: `{"version":"1.0.0","bin":{"a":"x","b":"x","c":"x","d":"x","e":"x","f":"x","g":"x","h":"x","i":"x","j":"x","k":"x","l":"x"}}`,
			err: `echo-mcp@1.0.0 has no program "z"; it has a, b, c, d, e, f, g, h, i, j, and 2 more`},
		{name: "not JSON", pkg: "echo-mcp", json: `{"version":`,
			err: "echo-mcp: package.json: unexpected end of JSON input"},
		{name: "a number", pkg: "echo-mcp", json: `{"version":"1.0.0","bin":7}`,
			err: "echo-mcp: package.json: bin: json: cannot unmarshal number into Go value of type map[string]string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(c.pkg))
			for _, f := range c.files {
				full := filepath.Join(pkgDir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, nil, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.MkdirAll(pkgDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pkgDir, "package.json"), []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			l := npmLaunch(c.pkg, "")
			l.Bin = c.bin
			got, err := launch.NPMBin(dir, l)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Errorf("npmBin = %q, %v; want error %s", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("npmBin = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestNPMLockPins checks what is read of package-lock.json: the package's
// version and integrity, every other package once, sorted, with its
// integrity, the packages with install scripts, and the refusals, word
// for word.
func TestNPMLockPins(t *testing.T) {
	t.Parallel()
	const reg = "http://127.0.0.1:1/"
	cases := []struct {
		name    string
		pkg     string
		lock    string
		want    launch.Package
		scripts []launch.Script
		err     string
		is      error
	}{{
		name: "a tree",
		pkg:  "echo-mcp",
		lock: `{"lockfileVersion":3,"packages":{
			"":{"dependencies":{"echo-mcp":"1.0.0"}},
			"node_modules/zeta-lib":{"version":"2.1.0","integrity":"sha512-z"},
			"node_modules/echo-mcp":{"version":"1.0.0","integrity":"sha512-e","hasInstallScript":true},
			"node_modules/alpha-lib":{"version":"1.0.0","integrity":"sha512-a"},
			"node_modules/zeta-lib/node_modules/alpha-lib":{"version":"0.9.0","integrity":"sha512-a0","hasInstallScript":true},
			"node_modules/other/node_modules/alpha-lib":{"version":"1.0.0","integrity":"sha512-a"},
			"node_modules/@acme/lib":{"version":"3.0.0","integrity":"sha512-l"},
			"packages/workspace":{"version":"1.0.0"}}}`,
		want: launch.Package{Version: "1.0.0", Integrity: "sha512-e", Registry: reg, Dependencies: []launch.Dependency{
			{Name: "@acme/lib", Version: "3.0.0", Integrity: "sha512-l"},
			{Name: "alpha-lib", Version: "0.9.0", Integrity: "sha512-a0"},
			{Name: "alpha-lib", Version: "1.0.0", Integrity: "sha512-a"},
			{Name: "zeta-lib", Version: "2.1.0", Integrity: "sha512-z"},
		}},
		scripts: []launch.Script{{Package: "echo-mcp", Version: "1.0.0"}, {Package: "alpha-lib", Version: "0.9.0"}},
	}, {
		name: "alone, scoped",
		pkg:  "@acme/echo-mcp",
		lock: `{"packages":{"node_modules/@acme/echo-mcp":{"version":"1.0.0","integrity":"sha512-e"}}}`,
		want: launch.Package{Version: "1.0.0", Integrity: "sha512-e", Registry: reg},
	}, {
		name: "a bundled dependency, covered by its parent's integrity",
		pkg:  "echo-mcp",
		lock: `{"packages":{"node_modules/echo-mcp":{"version":"1.0.0","integrity":"sha512-e"},"node_modules/echo-mcp/node_modules/inner":{"version":"2.0.0","inBundle":true}}}`,
		want: launch.Package{Version: "1.0.0", Integrity: "sha512-e", Registry: reg, Dependencies: []launch.Dependency{{Name: "inner", Version: "2.0.0"}}},
	}, {
		name: "not JSON",
		pkg:  "echo-mcp",
		lock: `{"packages":`,
		err:  "package fetch failed: server srv: package-lock.json: unexpected end of JSON input",
		is:   launch.ErrFetch,
	}, {
		name: "not installed",
		pkg:  "echo-mcp",
		lock: `{"packages":{"node_modules/other":{"version":"1.0.0","integrity":"sha512-o"}}}`,
		err:  "package fetch failed: server srv: npm did not install echo-mcp",
		is:   launch.ErrFetch,
	}, {
		name: "no integrity",
		pkg:  "echo-mcp",
		lock: `{"packages":{"node_modules/echo-mcp":{"version":"1.0.0"}}}`,
		err:  "package fetch failed: server srv: http://127.0.0.1:1/ gave no integrity for echo-mcp@1.0.0; use a registry that does; nothing was installed",
		is:   launch.ErrFetch,
	}, {
		name: "a dependency without integrity",
		pkg:  "echo-mcp",
		lock: `{"packages":{"node_modules/echo-mcp":{"version":"1.0.0","integrity":"sha512-e"},"node_modules/git-dep":{"version":"1.0.0","resolved":"git+ssh://git@example.com/x.git#abc"}}}`,
		err:  "package fetch failed: server srv: http://127.0.0.1:1/ gave no integrity for git-dep@1.0.0; use a registry that does; nothing was installed",
		is:   launch.ErrFetch,
	}, {
		name: "a linked dependency",
		pkg:  "echo-mcp",
		lock: `{"packages":{"node_modules/echo-mcp":{"version":"1.0.0","integrity":"sha512-e"},"node_modules/local":{"resolved":"../local","link":true}}}`,
		err:  "launch cannot be pinned: server srv: echo-mcp links local from outside the registry; nothing was installed",
		is:   launch.ErrUnsupported,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, scripts, err := launch.NPMLockPins([]byte(c.lock), server, npmLaunch(c.pkg, ""), reg)
			if c.err != "" {
				checkErr(t, err, c.err, c.is)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, c.want) || !reflect.DeepEqual(scripts, c.scripts) {
				t.Errorf("npmLockPins =\n%+v\n%+v\nwant\n%+v\n%+v", p, scripts, c.want, c.scripts)
			}
		})
	}
}
