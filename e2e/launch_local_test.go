//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/testregistry"
)

// The tests in this file fetch from registries the test serves on
// loopback (an npm registry and a PEP 503 index), so that what a real
// registry rarely does on demand (a tampered archive, a new release)
// happens here, with the real npm and pip.

// echoSkill writes a skill named name whose one server, id server, is
// declared as command and args.
func echoSkill(t *testing.T, name, server, command string, args []string, env map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if args == nil {
		args = []string{}
	}
	decl := map[string]any{"command": command, "args": args}
	if env != nil {
		decl["env"] = env
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{server: decl}})
	writeTree(t, dir, map[string]string{
		"SKILL.md": "---\nname: " + name + "\ndescription: Echo text back through an MCP server.\n---\nCall `echo` with the text.\n",
		"mcp.json": string(cfg),
	})
	return dir
}

// echoPackage is an npm package serving the echo MCP server.
func echoPackage(name, version string) testregistry.NPMPackage {
	return testregistry.NPMPackage{Name: name, Version: version, Bin: map[string]string{name: "index.js"},
		Files: map[string]string{"index.js": testregistry.MCPServerJS(name, "echo")}}
}

// managedLeft lists what managed storage holds besides its lock file.
func managedLeft(t *testing.T, data string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(data, "imported"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name() != ".lock" {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestLaunchRefusals: a registry that cannot be reached, a version that
// does not exist, a tampered archive (integrity mismatch) and a package
// with an install script each refuse the install with the registry, the
// package and the fix, and leave nothing in managed storage; the install
// script's package installs once the operator allows it by name, with a
// reason the review shows.
func TestLaunchRefusals(t *testing.T) {
	needLaunchTools(t, "npm", "node")
	reg := testregistry.NewNPM(t)
	reg.Add(echoPackage("echo-mcp", "1.0.0"))
	tampered := echoPackage("tampered-mcp", "1.0.0")
	tampered.Tamper = true
	reg.Add(tampered)
	scripted := echoPackage("native-mcp", "1.0.0")
	scripted.Scripts = map[string]string{"postinstall": `node -e "require('fs').writeFileSync('built.txt', 'built')"`}
	reg.Add(scripted)

	for _, tc := range []struct {
		name, spec, registry, want string
	}{
		{"unreachable", "echo-mcp@1.0.0", "http://127.0.0.1:1/",
			"Error: echo: package fetch failed: server echo: the npm registry http://127.0.0.1:1/ cannot be reached to fetch echo-mcp@1.0.0 (ECONNREFUSED); check the network, or set packages.npm.registry in config.yaml (or --registry) to a mirror this machine reaches; nothing was installed\n"},
		{"missing version", "echo-mcp@9.9.9", reg.URL(),
			"Error: echo: package fetch failed: server echo: echo-mcp has no version matching \"9.9.9\" in " + reg.URL() + "; see the versions with npm view echo-mcp versions --registry " + reg.URL() + ", and fix the version in mcp.json; nothing was installed\n"},
		{"missing package", "nobody-mcp@1.0.0", reg.URL(),
			"Error: echo: package fetch failed: server echo: nobody-mcp is not in the registry " + reg.URL() + "; check the package name in mcp.json, or set packages.npm.registry to the registry that has it; nothing was installed\n"},
		{"tampered", "tampered-mcp@1.0.0", reg.URL(),
			"Error: echo: package fetch failed: server echo: tampered-mcp@1.0.0 from " + reg.URL() + " does not match its integrity hash (EINTEGRITY): the registry served other bytes than it announced, or a cache holds a corrupted copy; nothing was installed\n"},
		{"install script", "native-mcp@1.0.0", reg.URL(),
			"Error: echo: package has install scripts: server echo: native-mcp@1.0.0 needs install scripts that skillgate does not run: native-mcp@1.0.0 (postinstall: \"node -e \\\"require('fs').writeFileSync('built.txt', 'built')\\\"\"); if the server cannot work without them, allow the package by name: --allow-scripts native-mcp --why \"…\"; nothing was installed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := emptyFixture(t)
			src := echoSkill(t, "echo", "echo", "npx", []string{"-y", tc.spec}, nil)
			code, out, stderr := f.runCode(t, nil, "install", src, "--registry", tc.registry)
			if code != 1 || stderr != tc.want {
				t.Errorf("install: %d\n%s\ngot  %q\nwant %q", code, out, stderr, tc.want)
			}
			if left := managedLeft(t, f.data); len(left) != 0 {
				t.Errorf("managed storage holds %v", left)
			}
			if out := f.run(t, "pending", "--all"); strings.Contains(out, "echo") {
				t.Errorf("an install was recorded:\n%s", out)
			}
			if out := f.run(t, "audit", "query", "--action", "install.refused"); !strings.Contains(out, "install.refused") {
				t.Errorf("the refusal is not audited:\n%s", out)
			}
		})
	}

	t.Run("install script allowed", func(t *testing.T) {
		t.Parallel()
		f := emptyFixture(t)
		src := echoSkill(t, "echo", "echo", "npx", []string{"-y", "native-mcp@1.0.0"}, nil)
		if code, out, stderr := f.runCode(t, nil, "install", src, "--registry", reg.URL(), "--allow-scripts", "native-mcp"); code != 2 ||
			stderr != "Error: --allow-scripts needs --why: say why the package needs its install scripts (recorded and audited)\n" {
			t.Errorf("without --why: %d\n%s\n%s", code, out, stderr)
		}
		code, out, stderr := f.runCode(t, nil, "install", src, "--registry", reg.URL(), "--allow-scripts", "native-mcp", "--why", "it builds its native binding at install")
		if code != 0 {
			t.Fatalf("install: %d\n%s\n%s", code, out, stderr)
		}
		if !strings.Contains(out, "    install scripts of native-mcp@1.0.0 allowed: \"it builds its native binding at install\"\n") {
			t.Errorf("review:\n%s", out)
		}
		r := f.launchReview(t, "echo")
		built := filepath.Join(f.data, "imported", strings.Replace(r.Digest, ":", "-", 1), "packages", "echo", "node_modules", "native-mcp", "built.txt")
		if b, err := os.ReadFile(built); err != nil || string(b) != "built" {
			t.Errorf("the allowed script did not run: %v %q", err, b)
		}
		if out := f.run(t, "audit", "query", "--action", "install.pending_install", "--json"); !strings.Contains(out, "it builds its native binding at install") {
			t.Errorf("the allowance is not audited:\n%s", out)
		}
	})
}

// TestUVXLocalIndex: a Python server declared with uvx, fetched with pip
// from a local package index (a wheel the test builds), installs, and an
// agent's call reaches it through the gateway. The same package declared
// with pipx run installs too.
func TestUVXLocalIndex(t *testing.T) {
	needLaunchTools(t)
	testregistry.Python(t)
	index := testregistry.NewPyPI(t)
	index.Add(testregistry.Wheel{Name: "echo-mcp", Version: "1.0.0",
		Files:          map[string]string{"echo_mcp/__init__.py": "", "echo_mcp/server.py": testregistry.MCPServerPy()},
		ConsoleScripts: map[string]string{"echo-mcp": "echo_mcp.server:main"}})
	f := emptyFixture(t)
	f.writeConfig(t, "packages:\n  pypi:\n    index: "+index.URL()+"\n")

	src := echoSkill(t, "pyecho", "py", "uvx", []string{"echo-mcp@1.0.0"}, nil)
	code, out, stderr := f.runCode(t, nil, "install", src)
	if code != 0 {
		t.Fatalf("install: %d\n%s\n%s", code, out, stderr)
	}
	r := f.launchReview(t, "pyecho")
	if len(r.Provenance.Packages) != 1 {
		t.Fatalf("packages: %+v", r.Provenance.Packages)
	}
	p := r.Provenance.Packages[0]
	if p.Launcher != "uvx" || p.Ecosystem != "pypi" || p.Name != "echo-mcp" || p.Version != "1.0.0" || p.Registry != index.URL() ||
		!strings.HasPrefix(p.Integrity, "sha256:") || p.Bin != "echo_mcp.server:main" {
		t.Errorf("package: %+v", p)
	}
	f.run(t, "approve", "pyecho")
	f.run(t, "enable", "pyecho")
	f.readPolicy(t)
	cs := f.agent(t, "T3")
	if names := toolNames(t, cs); !slices.Contains(names, "echo") {
		t.Fatalf("echo not listed: %v", names)
	}
	if got, isErr := caller(cs)(t, "echo", map[string]any{"text": "hola desde python"}); isErr || got != "hola desde python" {
		t.Errorf("echo: error=%v %q", isErr, got)
	}
	if devs := serverNetDevices(t, "echo_mcp"); !slices.Equal(devs, []string{"lo"}) {
		t.Errorf("the server's network namespace has %v, want only lo", devs)
	}

	src = echoSkill(t, "pipxecho", "px", "pipx", []string{"run", "echo-mcp==1.0.0"}, nil)
	if code, out, stderr := f.runCode(t, nil, "install", src); code != 0 || !strings.Contains(out, "  package: pypi echo-mcp@1.0.0 (exactly), pipx run, from "+index.URL()+"\n") {
		t.Errorf("pipx install: %d\n%s\n%s", code, out, stderr)
	}
}

// TestNPXUpdateShowsPackageDiff: a launch with a range pins the newest
// matching version; when the registry publishes a newer one, update
// fetches it as a new version of the skill whose review shows the package
// diff (version, integrity, dependencies added), waiting for approval
// while the approved version keeps serving.
func TestNPXUpdateShowsPackageDiff(t *testing.T) {
	needLaunchTools(t, "npm", "node")
	reg := testregistry.NewNPM(t)
	reg.Add(echoPackage("echo-mcp", "1.0.0"))
	f := emptyFixture(t)
	f.writeConfig(t, "packages:\n  npm:\n    registry: "+reg.URL()+"\n")
	src := echoSkill(t, "echo", "echo", "npx", []string{"-y", "echo-mcp@^1.0.0"}, nil)
	code, out, stderr := f.runCode(t, nil, "install", src)
	if code != 0 || !strings.Contains(out, "  package: npm echo-mcp@1.0.0 (^1.0.0: the newest matching, 1.0.0), npx, from "+reg.URL()+"\n") {
		t.Fatalf("install: %d\n%s\n%s", code, out, stderr)
	}
	first := f.launchReview(t, "echo")
	f.run(t, "approve", "echo")
	f.run(t, "enable", "echo")

	if out := f.run(t, "update", "echo"); !strings.Contains(out, "is what "+src+" holds, its packages included") {
		t.Errorf("update with nothing new:\n%s", out)
	}
	reg.Add(testregistry.NPMPackage{Name: "left-pad", Version: "1.3.0", Files: map[string]string{"index.js": "module.exports = s => s;\n"}})
	next := echoPackage("echo-mcp", "1.1.0")
	next.Dependencies = map[string]string{"left-pad": "^1.3.0"}
	reg.Add(next)
	code, out, stderr = f.runCode(t, nil, "update", "echo")
	if code != 0 {
		t.Fatalf("update: %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"  package of server echo: echo-mcp 1.0.0 → 1.1.0\n",
		"    integrity: " + reg.Integrity("echo-mcp", "1.0.0") + " → " + reg.Integrity("echo-mcp", "1.1.0") + "\n",
		"    dependencies added: left-pad@1.3.0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("update's review lacks %q:\n%s", want, out)
		}
	}
	var r launchReviewJSON
	if err := json.Unmarshal([]byte(f.run(t, "review", "echo@"+strings.TrimPrefix(strings.Fields(out)[2], "sha256:")[:12], "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Digest == first.Digest || r.State != "awaiting_approval" || r.Previous == nil || len(r.Previous.PackagesChanged) != 1 ||
		r.Previous.PackagesChanged[0].From != "1.0.0" || r.Previous.PackagesChanged[0].To != "1.1.0" ||
		!slices.Equal(r.Previous.PackagesChanged[0].Added, []string{"left-pad@1.3.0"}) {
		t.Errorf("new version: %+v", r)
	}
	// The approved version keeps serving until a human approves the new.
	if got := f.launchReview(t, "echo@"+strings.TrimPrefix(first.Digest, "sha256:")[:12]); got.State != "enabled" {
		t.Errorf("approved version: %s", got.State)
	}
}

// TestInterpreterUnderHome: a server script under a home directory whose
// interpreter (#!/usr/bin/env node, found on the declared PATH) is
// installed under a home directory too installs with that installation
// bound read-only and shown in review; one whose interpreter lies in the
// home directory itself is refused before it starts, with the path and
// what to do.
func TestInterpreterUnderHome(t *testing.T) {
	needLaunchTools(t, "node")
	home, err := os.MkdirTemp("/home", "sgtest-")
	if err != nil {
		t.Skipf("/home is not writable: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	nodeBin := filepath.Join(home, ".nvm", "versions", "node", "v20", "bin")
	if err := os.MkdirAll(nodeBin, 0o755); err != nil {
		t.Fatal(err)
	}
	node, _ := exec.LookPath("node")
	if err := os.Symlink(node, filepath.Join(nodeBin, "node")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(node, filepath.Join(home, "node")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(home, "proj", "server.js")
	bad := filepath.Join(home, "proj", "bad.js")
	js := testregistry.MCPServerJS("home-echo", "echo")
	writeTree(t, filepath.Join(home, "proj"), map[string]string{
		"server.js": js,
		"bad.js":    "#!" + filepath.Join(home, "node") + "\n" + strings.SplitN(js, "\n", 2)[1],
	})
	for _, s := range []string{script, bad} {
		if err := os.Chmod(s, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := emptyFixture(t)
	path := nodeBin + ":/usr/bin:/bin"
	src := echoSkill(t, "homeecho", "he", script, nil, map[string]string{"PATH": path})
	code, out, stderr := f.runCode(t, nil, "install", src)
	if code != 0 {
		t.Fatalf("install: %d\n%s\n%s", code, out, stderr)
	}
	want := "  grant: read-only " + filepath.Dir(nodeBin) + " (interpreter of " + script + " (#!/usr/bin/env node))\n"
	if !strings.Contains(out, want) {
		t.Errorf("review lacks %q:\n%s", want, out)
	}
	f.run(t, "approve", "homeecho")
	f.run(t, "enable", "homeecho")
	f.readPolicy(t)
	if got, isErr := caller(f.agent(t, "T3"))(t, "echo", map[string]any{"text": "from home"}); isErr || got != "from home" {
		t.Errorf("echo: error=%v %q", isErr, got)
	}

	src = echoSkill(t, "badecho", "be", bad, nil, nil)
	code, out, stderr = f.runCode(t, nil, "install", src)
	msg := "sandbox: the interpreter " + filepath.Join(home, "node") + " of " + bad + " is installed in " + home +
		", a home directory, which a confined server never sees as a whole: install it in a directory of its own (such as /opt/node or ~/.local/node) or under /usr/local, then declare that path"
	if code != 1 || !strings.Contains(out, "  error (grants): mcpclient: server \"be\": grants: "+msg+"\n") {
		t.Errorf("install of a script whose interpreter is a home directory's: %d\n%s\n%s", code, out, stderr)
	}
}

// TestLockedPackages: the lock records each server's package with its
// exact version and integrity; `install --locked` on a fresh data
// directory fetches exactly that version even when the registry has a
// newer one the declaration's range admits, and lands on the same
// version digest; verify finds nothing to report.
func TestLockedPackages(t *testing.T) {
	needLaunchTools(t, "npm", "node")
	reg := testregistry.NewNPM(t)
	reg.Add(echoPackage("echo-mcp", "1.0.0"))
	f := emptyFixture(t)
	f.writeConfig(t, "packages:\n  npm:\n    registry: "+reg.URL()+"\n")
	src := echoSkill(t, "echo", "echo", "npx", []string{"-y", "echo-mcp"}, nil)
	if code, out, stderr := f.runCode(t, nil, "install", src); code != 0 || !strings.Contains(out, "(no version given: the newest, 1.0.0)") {
		t.Fatalf("install: %d\n%s\n%s", code, out, stderr)
	}
	f.run(t, "approve", "echo")
	f.run(t, "enable", "echo")
	digest := f.launchReview(t, "echo").Digest
	lockPath := filepath.Join(t.TempDir(), "skillgate.lock")
	f.run(t, "lock", "--out", lockPath)
	b, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	want := `"packages": {
        "echo": {
          "ecosystem": "npm",
          "name": "echo-mcp",
          "version": "1.0.0",
          "integrity": "` + reg.Integrity("echo-mcp", "1.0.0") + `"
        }
      }`
	if !strings.Contains(string(b), want) {
		t.Errorf("lock lacks\n%s\n%s", want, b)
	}

	reg.Add(echoPackage("echo-mcp", "1.1.0"))
	fresh := emptyFixture(t)
	fresh.writeConfig(t, "packages:\n  npm:\n    registry: "+reg.URL()+"\n")
	if out := fresh.run(t, "install", "--locked", lockPath); !strings.Contains(out, "echo "+digest+": awaiting_approval") {
		t.Fatalf("install --locked:\n%s", out)
	}
	if r := fresh.launchReview(t, "echo"); r.Digest != digest || r.Provenance.Packages[0].Version != "1.0.0" {
		t.Errorf("locked install: %s %+v", r.Digest, r.Provenance.Packages)
	}
	fresh.run(t, "approve", "echo")
	fresh.run(t, "enable", "echo")
	if code, out, stderr := fresh.runCode(t, nil, "verify", "--lock", lockPath); code != 0 {
		t.Errorf("verify: %d\n%s\n%s", code, out, stderr)
	}
}
